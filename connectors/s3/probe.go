package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
)

// Listen mode checks its subscription with canary objects: when no
// notification has arrived for a ProbeInterval, it writes an object under
// the reserved ProbeDir (and deletes it at once) and expects the
// notification within the probe's timeout. MinIO never flushes the listen
// stream and holds about 6 KB of it in its write buffers, so a probe
// writes up to probeRounds canaries, each padded with user metadata, until
// one comes through; their bytes also push out the real events held
// behind them. No canary event within the timeout means the subscription
// has stalled: Listen subscribes again and calls Config.CatchUp.
const (
	// ProbeDir is the reserved directory, under Config.Prefix, of the
	// canary objects. Every mode ignores its keys: events, backfill and
	// reconciliation never index them.
	ProbeDir = ".simdex-listen-probe/"
	// DefaultProbeInterval is Config.ProbeInterval's default.
	DefaultProbeInterval = time.Minute
	// maxProbeTimeout caps a probe's wait for its canary.
	maxProbeTimeout = 15 * time.Second
	// probeRounds bounds the canaries of one probe.
	probeRounds = 4
	// probePadding is the user metadata a canary carries, so that its
	// event is large enough (about 3 KB) to push MinIO's buffers out in
	// few rounds; S3 allows 2 KB of user metadata.
	probePadding = 1800
	// canaryTimeout bounds writing and deleting a canary.
	canaryTimeout = 10 * time.Second
)

// ErrListenStalled reports a listen subscription that delivered no event
// for a canary written under ProbeDir within the probe's timeout.
var ErrListenStalled = errors.New("listen subscription stalled")

// isProbeKey reports whether key is a canary of listen mode.
func (c *Client) isProbeKey(key string) bool {
	return strings.HasPrefix(key, c.cfg.Prefix+ProbeDir)
}

// watch is what listen mode knows of its subscription's health; safe for
// concurrent use.
type watch struct {
	mu        sync.Mutex
	lastEvent time.Time     // the last notification of a key not a canary
	want      string        // the key prefix of the probe under way, "" none
	seen      chan struct{} // closed when a notification of want arrives
	stalled   time.Time     // when the current stall was detected; zero: none
	probeErr  error         // the last probe's failure to write its canary
}

// saw records a notification of key, a canary's if probe; recovered says
// it ended a stall. Canaries prove the subscription delivers but are no
// traffic: the next probe is not put off by them.
func (w *watch) saw(key string, probe bool, now time.Time) (recovered bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !probe {
		w.lastEvent = now
	}
	recovered, w.stalled = !w.stalled.IsZero(), time.Time{}
	if w.want != "" && strings.HasPrefix(key, w.want) {
		close(w.seen)
		w.want = ""
	}
	return recovered
}

// expect starts waiting for a notification of a key starting with prefix.
func (w *watch) expect(prefix string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want, w.seen = prefix, make(chan struct{})
	return w.seen
}

// since reports whether a notification arrived after t.
func (w *watch) since(t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastEvent.After(t)
}

// settle records a probe's outcome: err its failure to write, stalledAt
// the time a stall was detected (zero: the canary came through).
func (w *watch) settle(err error, stalledAt time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want, w.probeErr = "", err
	if err == nil && !stalledAt.IsZero() && w.stalled.IsZero() {
		w.stalled = stalledAt
	}
	if err == nil && stalledAt.IsZero() {
		w.stalled = time.Time{}
	}
}

// health returns nil while the subscription is known to deliver.
func (w *watch) health() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.stalled.IsZero():
		return fmt.Errorf("%w since %s: subscribed again, no event through the new subscription yet",
			ErrListenStalled, w.stalled.UTC().Format(time.RFC3339))
	case w.probeErr != nil:
		return fmt.Errorf("cannot check the listen subscription: %w", w.probeErr)
	}
	return nil
}

// ListenHealth reports whether listen mode's subscription is known to
// deliver: an error wrapping ErrListenStalled from the moment a probe's
// canary failed to come through until an event arrives through the new
// subscription, or the failure of the last probe to write its canary;
// nil otherwise (and in jetstream mode).
func (c *Client) ListenHealth() error { return c.watch.health() }

// probeTimeout is how long a probe waits for its canary: the probe
// interval, at most maxProbeTimeout.
func (c *Client) probeTimeout() time.Duration { return min(c.cfg.ProbeInterval, maxProbeTimeout) }

// probeEvery probes the subscription every Config.ProbeInterval in which
// no notification arrived, and asks for a new subscription on restart
// when a probe's canary does not come through.
func (c *Client) probeEvery(ctx context.Context, restart chan<- struct{}) {
	t := time.NewTicker(c.cfg.ProbeInterval)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c.watch.since(last) {
			last = time.Now()
			continue // events flow: no probe needed
		}
		last = time.Now()
		c.probeOnce(ctx, restart)
	}
}

// probeOnce runs one probe and acts on its outcome.
func (c *Client) probeOnce(ctx context.Context, restart chan<- struct{}) {
	started := time.Now()
	delivered, err := c.probe(ctx)
	switch {
	case ctx.Err() != nil:
		c.watch.settle(nil, time.Time{})
	case err != nil:
		c.watch.settle(err, time.Time{})
		c.cfg.Metrics.add(probeFailures, c.cfg.Name)
		c.log.Warn("cannot probe the listen subscription: writing its canary failed; stalls go undetected",
			"canary_dir", c.cfg.Prefix+ProbeDir, "err", err)
	case delivered:
		c.watch.settle(nil, time.Time{})
		c.cfg.Metrics.setStalled(c.cfg.Name, false)
	default:
		c.watch.settle(nil, started)
		c.cfg.Metrics.add(stalls, c.cfg.Name)
		c.cfg.Metrics.setStalled(c.cfg.Name, true)
		c.log.Warn("listen subscription stalled: no event for its canaries; subscribing again and reconciling",
			"canary_dir", c.cfg.Prefix+ProbeDir, "waited", time.Since(started).Round(time.Millisecond))
		select {
		case restart <- struct{}{}:
		default:
		}
	}
}

// probe writes canaries until the notification of one arrives (true), the
// probe's timeout passes (false) or writing one fails (the error).
func (c *Client) probe(ctx context.Context) (bool, error) {
	base := c.cfg.Prefix + ProbeDir + c.instance + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
	seen := c.watch.expect(base)
	timeout := c.probeTimeout()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for round := 0; ; round++ {
		if round < probeRounds {
			if err := c.writeCanary(ctx, base+strconv.Itoa(round)); err != nil {
				return false, err
			}
		}
		select {
		case <-seen:
			return true, nil
		case <-deadline.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(timeout / probeRounds):
		}
	}
}

// writeCanary writes a canary object and deletes it (its version, on a
// versioned bucket), so that canaries do not pile up. Both requests run
// to their end even when ctx ends meanwhile (the daemon stopping): a PUT
// given up by the client may still be stored, and would stay.
func (c *Client) writeCanary(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), canaryTimeout)
	defer cancel()
	c.cfg.Metrics.add(probeWrites, c.cfg.Name)
	info, err := c.mc.PutObject(ctx, c.cfg.Bucket, key, bytes.NewReader(nil), 0, minio.PutObjectOptions{
		UserMetadata: map[string]string{"simdex-probe": strings.Repeat("p", probePadding)},
	})
	if err != nil {
		return c.classify("write listen canary", key, err)
	}
	if err := c.mc.RemoveObject(ctx, c.cfg.Bucket, key, minio.RemoveObjectOptions{VersionID: info.VersionID}); err != nil {
		return c.classify("delete listen canary", key, err)
	}
	return nil
}

// newInstance returns a random name for this client's canaries, so that
// replicas listening to one bucket tell theirs apart.
func newInstance() string { return strings.ToLower(rand.Text()[:10]) }
