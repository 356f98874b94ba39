package s3

import (
	"context"
	"errors"
	"fmt"
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

// Listen delivers the bucket's events from MinIO's ListenBucketNotification
// API on out until ctx is cancelled, then returns nil. When the
// subscription fails (the server is down, restarts, refuses the
// credentials) it subscribes again with exponential backoff, logging each
// failure; only an endpoint that does not implement the API (AWS, Google)
// ends Listen with an error. It never closes out.
//
// The server drops events for slow listeners and replays nothing, so this
// is a hint: Reconcile is the system of record. Events carry a Done that
// only logs a failed settlement, since nothing can be redelivered; their
// idempotency keys are those of the JetStream mode, Backfill and Reconcile.
func (c *Client) Listen(ctx context.Context, out chan<- connectors.Event) error {
	wait := listenRetryFirst
	for {
		received, err := c.listenOnce(ctx, out)
		if ctx.Err() != nil {
			return nil
		}
		if resp := (minio.ErrorResponse{}); errors.As(err, &resp) && (resp.Code == "APINotSupported" || resp.Code == "NotImplemented") {
			return fmt.Errorf("listen to %s at %s: %w", c.cfg.Bucket, c.cfg.Endpoint, err)
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

// listenOnce runs one subscription until it fails; received says whether
// any notification came through it.
func (c *Client) listenOnce(ctx context.Context, out chan<- connectors.Event) (received bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends minio-go's goroutine
	for info := range c.mc.ListenBucketNotification(ctx, c.cfg.Bucket, c.cfg.Prefix, "", listenEvents) {
		if info.Err != nil {
			return received, info.Err
		}
		received = true
		for _, n := range info.Records {
			ev, ok, err := c.recordEvent(listenRecord(n), false)
			if err != nil {
				c.log.Warn("dropping malformed bucket notification; reconciliation will catch up",
					"event", n.EventName, "key", n.S3.Object.Key, "err", err)
				continue
			}
			if !ok {
				continue
			}
			ev.Done = c.logSettle("listen")
			select {
			case out <- ev:
			case <-ctx.Done():
				return received, ctx.Err()
			}
		}
	}
	return received, fmt.Errorf("listen to %s: notification stream closed", c.cfg.Bucket)
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
