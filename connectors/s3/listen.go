package s3

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/notification"

	"github.com/simdex/simdex/connectors"
)

// Re-subscription backoff of Listen.
const (
	listenRetryFirst = 100 * time.Millisecond
	listenRetryMax   = 30 * time.Second
)

// listenEvents are the event types Listen subscribes to.
var listenEvents = []string{string(notification.ObjectCreatedAll), string(notification.ObjectRemovedAll)}

// errRestart ends a subscription that the probe found stalled.
var errRestart = fmt.Errorf("%w: subscribing again", ErrListenStalled)

// Listen delivers the bucket's events from MinIO's ListenBucketNotification
// API on out until ctx is cancelled, then returns nil. When the
// subscription fails (the server is down, restarts, refuses the
// credentials) it subscribes again with exponential backoff, logging each
// failure; only an endpoint that does not implement the API (AWS, Google)
// ends Listen with an error. It never closes out.
//
// A subscription can also stall without failing (a connection that
// delivers nothing): Listen probes it with canary objects (probe.go) and
// replaces a stalled one at once. Once each subscription has held, the
// first one included, it calls Config.CatchUp: MinIO replays nothing, so
// what happened before it (while the daemon was down, or between a
// stalled or failed subscription and its replacement) is lost.
//
// The server drops events for slow listeners and replays nothing, so this
// is a hint: Reconcile is the system of record. Events carry a Done that
// only logs a failed settlement, since nothing can be redelivered; their
// idempotency keys are those of the JetStream mode, Backfill and Reconcile.
func (c *Client) Listen(ctx context.Context, out chan<- connectors.Event) error {
	l := &listening{restart: make(chan struct{}, 1)}
	defer l.bg.Wait()
	bgCtx, stopBg := context.WithCancel(ctx)
	defer stopBg() // before l.bg.Wait
	l.bg.Go(func() { c.probeEvery(bgCtx, l.restart) })
	l.catchUp = c.catchUpLoop(bgCtx, &l.bg)
	wait := listenRetryFirst
	for {
		received, err := c.listenOnce(ctx, out, l)
		if ctx.Err() != nil {
			return nil
		}
		if resp := (minio.ErrorResponse{}); errors.As(err, &resp) && (resp.Code == "APINotSupported" || resp.Code == "NotImplemented") {
			return fmt.Errorf("listen to %s at %s: %w", c.cfg.Bucket, c.cfg.Endpoint, err)
		}
		if errors.Is(err, errRestart) {
			continue // the probe logged it
		}
		if received {
			wait = listenRetryFirst
		}
		c.log.Warn("bucket notification subscription ended; subscribing again", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, listenRetryMax)
	}
}

// listening is what one Listen shares with its subscriptions.
type listening struct {
	restart chan struct{}  // the probe found the subscription stalled
	catchUp chan struct{}  // asks catchUpLoop for a catch-up
	bg      sync.WaitGroup // the goroutines Listen waits for
}

// listenHold is how long a subscription must last before it is taken to
// be established: then the catch-up runs.
const listenHold = 2 * time.Second

// catchUpLoop runs Config.CatchUp once per request sent on the returned
// channel, one run at a time, requests made during a run coalescing into
// one more; it stops with ctx.
func (c *Client) catchUpLoop(ctx context.Context, bg *sync.WaitGroup) chan struct{} {
	req := make(chan struct{}, 1)
	if c.cfg.CatchUp == nil {
		return req
	}
	bg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-req:
				c.cfg.CatchUp(ctx)
			}
		}
	})
	return req
}

// listenOnce runs one subscription until it fails or a stall is reported
// on l.restart; received says whether any notification came through it.
// It asks for a catch-up once each subscription request (minio-go sends
// another by itself when a stream ends cleanly) has lasted listenHold, so
// that a server still down is not reconciled.
func (c *Client) listenOnce(ctx context.Context, out chan<- connectors.Event, l *listening) (received bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	notes := c.mc.ListenBucketNotification(ctx, c.cfg.Bucket, c.cfg.Prefix, "", listenEvents)
	defer func() {
		cancel()
		// minio-go's goroutine may still be in its retry pause, which
		// ignores ctx; Listen waits for it to see ctx and close notes.
		l.bg.Go(func() {
			for range notes {
			}
		})
	}()
	hold := time.NewTimer(listenHold)
	defer hold.Stop()
	for {
		var info notification.Info
		var ok bool
		select {
		case info, ok = <-notes:
		case <-l.restart:
			return received, errRestart
		case <-c.subscribed:
			hold.Reset(listenHold)
			continue
		case <-hold.C:
			select {
			case l.catchUp <- struct{}{}:
			default: // one is pending already
			}
			continue
		}
		if !ok {
			return received, fmt.Errorf("listen to %s: notification stream closed", c.cfg.Bucket)
		}
		if info.Err != nil {
			return received, info.Err
		}
		received = true
		for _, n := range info.Records {
			if err := c.forward(ctx, n, out); err != nil {
				return received, err
			}
		}
	}
}

// forward records notification n with the probe and hands its event on.
func (c *Client) forward(ctx context.Context, n notification.Event, out chan<- connectors.Event) error {
	if c.watch.saw(n.S3.Object.Key, c.isProbeKey(n.S3.Object.Key), time.Now()) {
		c.cfg.Metrics.setStalled(c.cfg.Name, false)
		c.log.Info("listen subscription delivers again")
	}
	ev, ok, err := c.recordEvent(listenRecord(n), false)
	if err != nil {
		c.log.Warn("dropping malformed bucket notification; reconciliation will catch up",
			"event", n.EventName, "key", n.S3.Object.Key, "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	ev.Done = c.logSettle("listen")
	select {
	case out <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// listenRecord converts minio-go's notification record.
func listenRecord(n notification.Event) record {
	var r record
	r.EventName = n.EventName
	r.EventTime = n.EventTime
	r.S3.Bucket.Name = n.S3.Bucket.Name
	o := n.S3.Object
	r.S3.Object.Key = o.Key
	r.S3.Object.Size = o.Size
	r.S3.Object.ETag = o.ETag
	r.S3.Object.ContentType = o.ContentType
	r.S3.Object.UserMetadata = o.UserMetadata
	r.S3.Object.VersionID = o.VersionID
	r.S3.Object.Sequencer = o.Sequencer
	return r
}

// logSettle returns a Done for events that cannot be redelivered: a failed
// settlement is logged, the rest is left to reconciliation.
func (c *Client) logSettle(how string) func(context.Context, error) {
	return func(_ context.Context, err error) {
		if err != nil {
			c.log.Warn("event failed; reconciliation will retry it", "via", how, "err", err)
		}
	}
}

// ListenSource returns Listen as a connectors.Source.
func (c *Client) ListenSource() connectors.Source { return listenSource{c} }

type listenSource struct{ c *Client }

var _ connectors.Source = listenSource{}

// Run calls Client.Listen.
func (s listenSource) Run(ctx context.Context, out chan<- connectors.Event) error {
	return s.c.Listen(ctx, out)
}
