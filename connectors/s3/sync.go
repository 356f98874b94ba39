package s3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/connectors"
)

// Inventory is what the index knows about this source; Reconcile consumes
// it. Implementations must allow Seen and Objects to be called while the
// events Reconcile emitted earlier are being committed.
type Inventory interface {
	// Seen reports whether an event with this idempotency key was ever
	// committed.
	Seen(ctx context.Context, idempotencyKey string) (bool, error)
	// Objects calls fn for every live indexed object of this source and
	// bucket: its key and version id ("" on unversioned buckets). An error
	// from fn stops the walk and is returned.
	Objects(ctx context.Context, source, bucket string, fn func(key, versionID string) error) error
}

// Counts reports what a Backfill or Reconcile did. Settled and Failed
// count the settlements that arrived before it returned; the rest
// (Emitted - Settled - Failed) were still in the pipeline.
type Counts struct {
	Listed    int64 // object versions listed, delete markers excluded
	Emitted   int64 // events sent on out
	Missing   int64 // Reconcile: versions the index had not seen (Created events)
	Removed   int64 // Reconcile: Removed events for versions gone from the bucket
	Settled   int64 // events settled with nil
	Failed    int64 // events settled with an error
	Transient int64 // of Failed, those whose error was transient: worth another run
}

// Unsettled is the number of emitted events not yet settled.
func (n Counts) Unsettled() int64 { return n.Emitted - n.Settled - n.Failed }

// String formats the counts for logs.
func (n Counts) String() string {
	return fmt.Sprintf("listed=%d emitted=%d missing=%d removed=%d settled=%d failed=%d transient=%d",
		n.Listed, n.Emitted, n.Missing, n.Removed, n.Settled, n.Failed, n.Transient)
}

// Backfill emits a Created event for every object version in the bucket
// under Config.Prefix (delete markers, and the versions a delete marker
// hides, are skipped; nothing is Removed), in
// listing order. It blocks on out and honours ctx. After the last event it
// waits up to Config.SettleTimeout for the events to be settled, then
// returns the counts; events settled later are only logged when they fail.
// Nothing is lost by returning early: the pipeline skips versions it has
// committed, and Reconcile finds those it has not.
//
// Events carry Done (which records the outcome) and Open, and have the
// idempotency keys of the event path; Sequencer is empty (listings give
// modification times in milliseconds only).
func (c *Client) Backfill(ctx context.Context, out chan<- connectors.Event) (Counts, error) {
	return c.backfill(ctx, out, c.cfg.SettleTimeout)
}

// BackfillSettled is Backfill that returns only once every event it
// emitted is settled (or ctx is done, with ctx's error): when it returns
// nil and Counts.Transient is 0, every listed version is committed, or
// failed for good (a version deleted since the listing, an object over the
// size cap). A marker that says "backfilled" must be written only then.
func (c *Client) BackfillSettled(ctx context.Context, out chan<- connectors.Event) (Counts, error) {
	n, err := c.backfill(ctx, out, 0)
	if err == nil && n.Unsettled() > 0 {
		err = &connectors.Error{Op: "backfill", Source: c.cfg.Name, Kind: connectors.Transient, Err: ctx.Err()}
	}
	return n, err
}

// backfill implements Backfill, waiting up to wait for the settlements (0:
// until every event is settled or ctx is done).
func (c *Client) backfill(ctx context.Context, out chan<- connectors.Event, wait time.Duration) (Counts, error) {
	t := c.newTally("backfill")
	deleted := make(map[string]bool) // keys whose latest version is a delete marker
	err := c.listVersions(ctx, func(o minio.ObjectInfo) error {
		if o.IsDeleteMarker {
			if o.IsLatest {
				deleted[o.Key] = true
			}
			return nil
		}
		if deleted[o.Key] {
			return nil // hidden by a newer delete marker, as in Reconcile
		}
		t.listed.Add(1)
		return t.emit(ctx, out, c.listEvent(o))
	})
	if err != nil {
		return t.counts(), err
	}
	return t.wait(ctx, wait), nil
}

// Reconcile compares the bucket under Config.Prefix with inv and emits
// what the event stream missed: a Created event for every version the
// index has not seen, and a Removed event for every indexed version that
// no longer exists (deleted while simdex was down), or whose key is now
// hidden by a delete marker (then the Removed event carries the marker's
// version id, as the DeleteMarkerCreated event would). A version indexed
// but absent from the listing is looked up before it is declared removed,
// so that objects written during the listing are not. Waiting for
// settlement is as for Backfill.
func (c *Client) Reconcile(ctx context.Context, inv Inventory, out chan<- connectors.Event) (Counts, error) {
	t := c.newTally("reconcile")
	live := make(map[string]struct{})  // key NUL version of listed versions
	markers := make(map[string]string) // key -> id of its latest version when it is a delete marker
	err := c.listVersions(ctx, func(o minio.ObjectInfo) error {
		vid := normalizeVersion(o.VersionID)
		if o.IsDeleteMarker {
			if o.IsLatest {
				markers[o.Key] = vid
			}
			return nil
		}
		t.listed.Add(1)
		live[o.Key+"\x00"+vid] = struct{}{}
		if _, ok := markers[o.Key]; ok {
			// Hidden by a newer delete marker (listed first, newest
			// first): the key is deleted for its users, so its older
			// versions are not indexed again.
			return nil
		}
		ev := c.listEvent(o)
		seen, err := inv.Seen(ctx, ev.IdempotencyKey())
		if err != nil {
			return fmt.Errorf("reconcile %s: look up %s: %w", c.cfg.Name, o.Key, err)
		}
		if seen {
			return nil
		}
		t.missing.Add(1)
		return t.emit(ctx, out, ev)
	})
	if err != nil {
		return t.counts(), err
	}

	// Collect first, emit afterwards: the inventory may hold a read
	// transaction that the pipeline's commits would wait for.
	type version struct{ key, id string }
	var gone []version
	hidden := make(map[string]bool)
	err = inv.Objects(ctx, c.cfg.Name, c.cfg.Bucket, func(key, vid string) error {
		if !strings.HasPrefix(key, c.cfg.Prefix) {
			return nil
		}
		if _, ok := live[key+"\x00"+vid]; !ok {
			gone = append(gone, version{key, vid})
		} else if _, ok := markers[key]; ok {
			hidden[key] = true
		}
		return nil
	})
	if err != nil {
		return t.counts(), fmt.Errorf("reconcile %s: walk the index: %w", c.cfg.Name, err)
	}
	for _, g := range gone {
		exists, err := c.exists(ctx, g.key, g.id)
		if err != nil {
			return t.counts(), err
		}
		if exists {
			continue // written after the listing; its event or the next run covers it
		}
		t.removed.Add(1)
		if err := t.emit(ctx, out, c.removedEvent(g.key, g.id)); err != nil {
			return t.counts(), err
		}
	}
	for key := range hidden {
		t.removed.Add(1)
		ev := c.removedEvent(key, markers[key])
		ev.DeleteMarker = true
		if err := t.emit(ctx, out, ev); err != nil {
			return t.counts(), err
		}
	}
	return t.wait(ctx, c.cfg.SettleTimeout), nil
}

// listVersions calls fn for every version and delete marker under the
// prefix, newest version of each key first.
func (c *Client) listVersions(ctx context.Context, fn func(minio.ObjectInfo) error) error {
	ctx, cancel := context.WithCancel(ctx)
	opts := minio.ListObjectsOptions{Prefix: c.cfg.Prefix, Recursive: true, WithVersions: true, WithMetadata: true}
	objects := c.mc.ListObjects(ctx, c.cfg.Bucket, opts)
	defer stopListing(cancel, objects)
	for o := range objects {
		if o.Err != nil {
			return c.classify("list versions", c.cfg.Prefix, o.Err)
		}
		if c.isProbeKey(o.Key) {
			continue // a listen canary not yet deleted
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return &connectors.Error{Op: "list versions", Source: c.cfg.Name, Kind: connectors.Transient, Err: err}
	}
	return nil
}

// stopListing ends a minio-go listing that may have been left early: it
// cancels the listing's context and drains its channel, since on
// cancellation minio-go's goroutine sends the context's error and would
// otherwise block on that send for good.
func stopListing(cancel context.CancelFunc, objects <-chan minio.ObjectInfo) {
	cancel()
	for range objects {
	}
}

// exists reports whether the version (the latest object for "") is still
// in the bucket and not a delete marker.
func (c *Client) exists(ctx context.Context, key, vid string) (bool, error) {
	_, err := c.mc.StatObject(ctx, c.cfg.Bucket, key, minio.StatObjectOptions{VersionID: vid})
	if err == nil {
		return true, nil
	}
	if e := c.classify("stat", key, err); !errors.Is(e, connectors.ErrObjectMissing) {
		return false, e
	}
	return false, nil
}

// listEvent makes the Created event of a listed version.
func (c *Client) listEvent(o minio.ObjectInfo) connectors.Event {
	info := objectInfo(o, true)
	ev := connectors.Event{
		Source:      c.cfg.Name,
		Kind:        connectors.Created,
		Bucket:      c.cfg.Bucket,
		Key:         o.Key,
		VersionID:   normalizeVersion(o.VersionID),
		ETag:        info.ETag,
		Size:        o.Size,
		ContentType: info.ContentType,
		Metadata:    info.Metadata,
		Time:        o.LastModified,
	}
	c.attachOpen(&ev, o.VersionID)
	return ev
}

// removedEvent makes a Removed event found by reconciliation.
func (c *Client) removedEvent(key, vid string) connectors.Event {
	return connectors.Event{
		Source:    c.cfg.Name,
		Kind:      connectors.Removed,
		Bucket:    c.cfg.Bucket,
		Key:       key,
		VersionID: vid,
		Size:      -1,
		Time:      time.Now(),
	}
}

// tally counts the events of one Backfill or Reconcile and their
// settlements.
type tally struct {
	c                                 *Client
	op                                string
	listed, emitted, missing, removed atomic.Int64
	settled, failed, transient        atomic.Int64

	mu      sync.Mutex
	pending int           // emitted, not settled
	idle    chan struct{} // closed when pending drops to 0 after closing
}

func (c *Client) newTally(op string) *tally { return &tally{c: c, op: op} }

// emit sends ev with a Done that settles it into the tally.
func (t *tally) emit(ctx context.Context, out chan<- connectors.Event, ev connectors.Event) error {
	var once sync.Once
	key := ev.Key
	ev.Done = func(_ context.Context, err error) {
		once.Do(func() { t.settle(key, err) })
	}
	t.mu.Lock()
	t.pending++
	t.mu.Unlock()
	select {
	case out <- ev:
		t.emitted.Add(1)
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		t.pending--
		t.mu.Unlock()
		return &connectors.Error{Op: t.op, Source: t.c.cfg.Name, Kind: connectors.Transient, Err: ctx.Err()}
	}
}

func (t *tally) settle(key string, err error) {
	if err != nil {
		t.failed.Add(1)
		if connectors.IsTransient(err) {
			t.transient.Add(1)
		}
		t.c.log.Warn("event failed; the next reconciliation will retry it", "via", t.op, "key", key, "err", err)
	} else {
		t.settled.Add(1)
	}
	t.mu.Lock()
	t.pending--
	if t.pending == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
	t.mu.Unlock()
}

// wait waits up to limit (0: without limit; negative: not at all), or
// until ctx is done, for every emitted event to be settled and returns the
// counts.
func (t *tally) wait(ctx context.Context, limit time.Duration) Counts {
	t.mu.Lock()
	if t.pending == 0 || limit < 0 {
		t.mu.Unlock()
		return t.counts()
	}
	idle := make(chan struct{})
	t.idle = idle
	t.mu.Unlock()
	var expired <-chan time.Time
	if limit > 0 {
		timer := time.NewTimer(limit)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-idle:
	case <-expired:
		t.c.log.Info("returning before every event was settled", "via", t.op, "counts", t.counts().String())
	case <-ctx.Done():
	}
	return t.counts()
}

func (t *tally) counts() Counts {
	return Counts{
		Listed:    t.listed.Load(),
		Emitted:   t.emitted.Load(),
		Missing:   t.missing.Load(),
		Removed:   t.removed.Load(),
		Settled:   t.settled.Load(),
		Failed:    t.failed.Load(),
		Transient: t.transient.Load(),
	}
}
