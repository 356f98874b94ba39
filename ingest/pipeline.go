package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
)

// Ledger is what the pipeline needs to skip events already indexed, to
// find what they committed, and to record held documents deleted at their
// source.
type Ledger interface {
	Seen(ctx context.Context, idempotencyKey string) (bool, error)
	Lookup(ctx context.Context, key string) ([]*index.Record, error)
	Children(ctx context.Context, id index.DocID) ([]*index.Record, error)
	MarkDeletedAtSource(ctx context.Context, ids []index.DocID, at time.Time, event string) (int, error)
	MarkSuperseded(ctx context.Context, ids []index.DocID, at time.Time, event string) (int, error)
	DeletedAtSource(ctx context.Context, fn func(*index.Record) error) error
}

// Remover is what the pipeline needs to apply deletions.
type Remover interface {
	Remove(ctx context.Context, key, versionID string) ([]index.DocID, error)
}

// HoldKeeper tells which object versions a legal hold keeps in the index
// when their source deletes or overwrites them, and raises the alarm when
// it does: HeldDeleted and HeldSuperseded flag the held documents ids for
// their matters' reviewers (once per document and change: a redelivered
// event raises nothing new). event describes what changed them.
type HoldKeeper interface {
	HoldingMatters(ctx context.Context, indexKey, versionID string) ([]string, error)
	HeldDeleted(ctx context.Context, ids []index.DocID, event string) error
	HeldSuperseded(ctx context.Context, ids []index.DocID, event string) error
}

// Observer is told about every committed object before its event is
// settled: the legal-hold check and duplicate-upload alerts hang here.
// Indexed is called again, with the same documents, when an event already
// indexed is delivered again (a crash may have come between the commit and
// the check), so it must be idempotent; an error leaves the event
// unsettled, to be delivered and checked again.
type Observer interface {
	Indexed(ctx context.Context, ids []index.DocID) error
	Removed(ctx context.Context, ids []index.DocID)
}

// PipelineOptions configure a Pipeline. Ingester, Ledger, Remover,
// Registerer and Logger are required.
type PipelineOptions struct {
	Ingester  *Ingester
	Ledger    Ledger
	Remover   Remover
	Holds     HoldKeeper // nil: nothing is kept
	Observers []Observer
	Workers   int
	// Memory bounds what the objects in flight hold: each takes its size
	// before it is fetched (an object of unknown size, a worker's share),
	// then what extracting and fingerprinting it charge. The API's
	// uploads draw from the same budget. Nil: no bound.
	Memory *extract.Budget
	// ShutdownTimeout bounds how long in-flight work may take after stop.
	ShutdownTimeout time.Duration
	// Keys serialises the commits and removals of one object key; nil:
	// striped mutexes of this process, enough when one process indexes.
	// A fleet passes a lock that holds across replicas.
	Keys       KeyLocker
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// KeyLocker serialises the commits and removals of events of one key, so
// that a delete never passes the create it follows.
type KeyLocker interface {
	// Lock waits until key's lock is free, takes it and returns its
	// release, or fails when the lock cannot be had (ctx ended, the
	// database that holds it unreachable).
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// Pipeline turns connector events into index changes with a bounded pool
// of workers. An event is settled only after its effect is committed, so a
// crash at any point leaves it unsettled and it is delivered again; the
// idempotency key makes the redelivery a no-op if the commit had landed.
// Indexed objects are logged, at most ten lines a second.
type Pipeline struct {
	o        PipelineOptions
	unknown  int64           // the weight of an object of unknown size: a worker's share
	running  context.Context // Run's: done once stopping (nil outside Run)
	m        *pipelineMetrics
	keys     KeyLocker // one event of a key commits at a time
	progress *progressLog
}

// NewPipeline returns a pipeline with its metrics registered; it starts
// nothing.
func NewPipeline(o PipelineOptions) *Pipeline {
	p := &Pipeline{o: o, m: newPipelineMetrics(o.Registerer, o.Memory), progress: newProgressLog(o.Logger, time.Now),
		unknown: max(1, o.Memory.Total()/int64(max(1, o.Workers))), keys: o.Keys}
	if p.keys == nil {
		p.keys = new(keyLocks)
	}
	return p
}

// keyLocks serialises the commits of events of one key: striped mutexes,
// so that memory does not grow with the keys seen.
type keyLocks [1024]sync.Mutex

// Lock locks key's stripe and returns its unlock; it never fails.
func (k *keyLocks) Lock(_ context.Context, key string) (unlock func(), err error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	m := &k[h.Sum32()%uint32(len(k))]
	m.Lock()
	return m.Unlock, nil
}

// lockKey takes key's lock; failing to is a transient error of ev's
// source, and the event is delivered again.
func (p *Pipeline) lockKey(ctx context.Context, ev connectors.Event, key string) (unlock func(), err error) {
	unlock, err = p.keys.Lock(ctx, key)
	if err != nil {
		return nil, &connectors.Error{Op: "lock key", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
	}
	return unlock, nil
}

type pipelineMetrics struct {
	received   *prometheus.CounterVec
	indexed    *prometheus.CounterVec
	duplicates *prometheus.CounterVec
	removed    *prometheus.CounterVec
	failed     *prometheus.CounterVec
	extractErr *prometheus.CounterVec
	stale      *prometheus.CounterVec
	stage      *prometheus.HistogramVec
	inFlight   prometheus.Gauge
	reread     *prometheus.CounterVec
}

func newPipelineMetrics(reg prometheus.Registerer, mem *extract.Budget) *pipelineMetrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &pipelineMetrics{
		received:   counter("simdex_events_received_total", "Connector events received by the pipeline.", "source", "kind"),
		indexed:    counter("simdex_events_indexed_total", "Created events whose object was committed to the index.", "source"),
		duplicates: counter("simdex_events_duplicate_total", "Events for object versions already indexed (redeliveries, duplicate events).", "source"),
		removed:    counter("simdex_events_removed_total", "Removed events applied to the index.", "source"),
		failed:     counter("simdex_events_failed_total", "Events that failed, by error kind (transient ones are retried).", "source", "kind"),
		extractErr: counter("simdex_documents_extract_errors_total", "Objects indexed with an extraction error recorded for manual review.", "source"),
		stale: counter("simdex_events_stale_total",
			"Created events not indexed because their object version was deleted, hidden or overwritten before the commit.", "source"),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "simdex_stage_duration_seconds", Help: "Time spent per pipeline stage.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"stage"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "simdex_events_in_flight", Help: "Events being processed."}),
		reread: counter("simdex_events_reread_for_memory_total",
			"Objects stopped halfway to give their memory to an older object, and read again.", "source"),
	}
	inUse := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "simdex_memory_bytes_in_use",
		Help: "Bytes of the memory budget (memory.budget) taken by the objects being read, extracted and indexed and by the API's uploads."},
		func() float64 { return float64(mem.InUse()) })
	reg.MustRegister(m.received, m.indexed, m.duplicates, m.removed, m.failed, m.extractErr, m.stale, m.stage, m.inFlight, m.reread, inUse)
	return m
}

// Run processes events until ctx is done, then lets the events already
// started finish (bounded by the shutdown timeout) and returns. Events still
// queued in the channel are left unsettled, so their origin redelivers them.
func (p *Pipeline) Run(ctx context.Context, events <-chan connectors.Event) {
	p.running = ctx
	var wg sync.WaitGroup
	for w := 0; w < p.o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-events:
					// In-flight work outlives ctx: a half-done event is
					// finished and settled rather than abandoned.
					wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.shutdownOrRun(ctx))
					p.handle(wctx, ev)
					cancel()
				}
			}
		}()
	}
	wg.Wait()
}

// shutdownOrRun bounds one event: generous while running, the shutdown
// grace period once stopping.
func (p *Pipeline) shutdownOrRun(ctx context.Context) time.Duration {
	if ctx.Err() != nil {
		return p.o.ShutdownTimeout
	}
	return 10 * time.Minute
}

// docKey is the index key of an event's object.
func docKey(ev connectors.Event) string {
	if ev.Bucket != "" {
		return ev.Source + "/" + ev.Bucket + "/" + ev.Key
	}
	return ev.Source + "/" + ev.Key
}

func (p *Pipeline) handle(ctx context.Context, ev connectors.Event) {
	start := time.Now()
	p.m.inFlight.Inc()
	defer p.m.inFlight.Dec()
	p.m.received.WithLabelValues(ev.Source, ev.Kind.String()).Inc()
	log := p.o.Logger.With("source", ev.Source, "bucket", ev.Bucket, "key", ev.Key, "version", ev.VersionID)
	var err error
	switch ev.Kind {
	case connectors.Created:
		err = p.created(ctx, ev, log)
	case connectors.Removed:
		err = p.removed(ctx, ev, log)
	default:
		err = &connectors.Error{Op: "handle event", Source: ev.Source, Key: ev.Key, Kind: connectors.Invalid, Err: fmt.Errorf("unknown event kind %v", ev.Kind)}
	}
	if err != nil {
		kind := "permanent"
		switch {
		case connectors.IsTransient(err):
			kind = "transient"
			log.Warn("event failed, will be redelivered", "err", err)
		case errors.Is(err, connectors.ErrInvalid):
			kind = "invalid"
			log.Error("invalid event, dead-lettering", "err", err)
		default:
			log.Error("event failed permanently, dead-lettering", "err", err)
		}
		p.m.failed.WithLabelValues(ev.Source, kind).Inc()
	}
	ev.Settle(ctx, err)
	p.m.stage.WithLabelValues("total").Observe(time.Since(start).Seconds())
}

func (p *Pipeline) created(ctx context.Context, ev connectors.Event, log *slog.Logger) error {
	idem := ev.IdempotencyKey()
	if seen, err := p.o.Ledger.Seen(ctx, idem); err != nil {
		return &connectors.Error{Op: "check ledger", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
	} else if seen {
		p.m.duplicates.WithLabelValues(ev.Source).Inc()
		log.Debug("already indexed, checking again and settling the duplicate")
		ids, err := p.committed(ctx, idem)
		if err != nil {
			return &connectors.Error{Op: "look up indexed documents", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
		}
		return p.observe(ctx, ev, ids)
	}
	if ev.Open == nil {
		return &connectors.Error{Op: "open", Source: ev.Source, Key: ev.Key, Kind: connectors.Invalid, Err: errors.New("created event has no body")}
	}
	mem := p.o.Memory.Open(true)
	defer mem.Close()
	for {
		err := p.index(ctx, ev, idem, mem, log)
		if !mem.Preempted() {
			return err
		}
		// Stopped halfway for an older object: nothing was committed,
		// and the object is read again once its memory is free.
		p.m.reread.WithLabelValues(ev.Source).Inc()
		log.Debug("gave its memory to an older object; reading it again", "needed", mem.Peak())
		mem.Reset()
	}
}

// index reads, extracts, fingerprints and commits the object of a created
// event, its memory charged to mem.
func (p *Pipeline) index(ctx context.Context, ev connectors.Event, idem string, mem *extract.Account, log *slog.Logger) error {
	if err := p.reserve(ctx, mem, ev.Size); err != nil {
		return &connectors.Error{Op: "wait for memory", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
	}
	t := time.Now()
	body, err := ev.Open(ctx)
	p.m.stage.WithLabelValues("fetch").Observe(time.Since(t).Seconds())
	if err != nil {
		var ce *connectors.Error
		if errors.As(err, &ce) {
			return err
		}
		return &connectors.Error{Op: "open", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
	}
	defer body.Close()
	t = time.Now()
	var out *Outcome
	prep, err := p.o.Ingester.Prepare(ctx, Object{
		Key: docKey(ev), VersionID: ev.VersionID, Name: ev.Key, Source: ev.Source, Idempotency: idem,
		ContentType: ev.ContentType, Meta: ev.Metadata, ModTime: ev.Time, Body: body,
		KeepVersions: keepsVersions(ev), Memory: mem,
	})
	// An object that could not be read for a passing reason (a
	// connection reset halfway through its GET, the daemon stopping) is
	// not recorded as unreadable for good: nothing is committed, and the
	// event is delivered again.
	var readErr error
	stale := false
	if err == nil {
		if xerr := prep.Err(); xerr != nil && (connectors.IsTransient(xerr) || ctx.Err() != nil) {
			readErr = xerr
		} else {
			stale, out, err = p.commitCurrent(ctx, ev, prep)
		}
	}
	p.m.stage.WithLabelValues("ingest").Observe(time.Since(t).Seconds())
	if readErr != nil {
		return &connectors.Error{Op: "read", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: readErr}
	}
	if stale {
		p.m.stale.WithLabelValues(ev.Source).Inc()
		log.Debug("not indexed: the version was deleted, hidden or overwritten since the event")
		return nil
	}
	if err != nil {
		// Nothing was committed (the index refused the write, or the
		// daemon stopped before anything was read), so retrying is safe
		// and may succeed (a busy or briefly unavailable store).
		return &connectors.Error{Op: "index", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
	}
	p.m.indexed.WithLabelValues(ev.Source).Inc()
	if out.Err != nil {
		p.m.extractErr.WithLabelValues(ev.Source).Inc()
		log.Warn("indexed with an extraction error, recorded for manual review", "err", out.Err)
	}
	ids := make([]index.DocID, 0, len(out.Results))
	for i, r := range out.Results {
		// Stored without a fingerprint (an empty text, a child that failed):
		// the top-level object's extraction error is logged above.
		if r.Err != nil && (i > 0 || out.Err == nil) && !r.Duplicate {
			log.Warn("indexed without a fingerprint, recorded for manual review", "doc", out.Inputs[i].Doc.Key, "err", r.Err)
		}
		if r.ID != 0 {
			ids = append(ids, r.ID)
		}
	}
	p.progress.indexed(ev.Source, ev.Key, ev.Size, len(ids))
	return p.observe(ctx, ev, ids)
}

// commitCurrent commits prep under the lock of the event's key, unless the
// origin says its version is no longer current (stale): a delete applied
// before this create (events of a key are handled in parallel, and may be
// redelivered after a crash) must not be undone by it. Removals take the
// same lock, so a delete handled after the check waits for the commit and
// then removes what it committed.
func (p *Pipeline) commitCurrent(ctx context.Context, ev connectors.Event, prep *Prepared) (stale bool, out *Outcome, err error) {
	unlock, err := p.lockKey(ctx, ev, docKey(ev))
	if err != nil {
		return false, nil, err
	}
	defer unlock()
	if ev.Current != nil {
		ok, err := ev.Current(ctx)
		if err != nil {
			var ce *connectors.Error
			if errors.As(err, &ce) {
				return false, nil, err
			}
			return false, nil, &connectors.Error{Op: "check current version", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
		}
		if !ok {
			return true, nil, nil
		}
	}
	if err := p.preserveHeld(ctx, ev, prep); err != nil {
		return false, nil, err
	}
	out, err = p.o.Ingester.Commit(ctx, prep)
	return false, out, err
}

// keepsVersions reports whether ev's object keeps its older versions in
// the index (a versioned bucket's); else a new version replaces them.
func keepsVersions(ev connectors.Event) bool { return ev.Bucket != "" && ev.VersionID != "" }

// preserveHeld keeps the older versions of ev's key that a legal hold
// covers when ev's new version would replace them (an edit in place, an
// unversioned object written again): they stay indexed beside it, in
// their matters, marked superseded by ev, and their matters are alerted.
// The older versions no hold covers are removed, as the replace would.
func (p *Pipeline) preserveHeld(ctx context.Context, ev connectors.Event, prep *Prepared) error {
	if p.o.Holds == nil || keepsVersions(ev) {
		return nil
	}
	key := docKey(ev)
	held, free, err := p.heldVersions(ctx, key, "", prep.Idempotency())
	if err != nil || len(held) == 0 {
		return err
	}
	prep.KeepOlderVersions()
	event := describeOverwrite(ev)
	ids := make([]index.DocID, len(held))
	heldVID := map[string]bool{}
	for i, r := range held {
		ids[i], heldVID[r.VersionID] = r.ID, true
	}
	if _, err := p.o.Ledger.MarkSuperseded(ctx, ids, cmp.Or(ev.Time, time.Now()), event); err != nil {
		return fmt.Errorf("mark held versions of %s superseded: %w", key, err)
	}
	for _, r := range free {
		if heldVID[r.VersionID] {
			continue // removing it by version would remove a held one too
		}
		if _, err := p.o.Remover.Remove(ctx, key, r.VersionID); err != nil {
			return fmt.Errorf("remove version %s of %s replaced: %w", r.VersionID, key, err)
		}
	}
	if err := p.o.Holds.HeldSuperseded(ctx, ids, event); err != nil {
		return fmt.Errorf("alert held versions of %s superseded: %w", key, err)
	}
	return nil
}

// heldVersions splits the top-level versions stored under key (vid alone
// when not empty; the one stored under the idempotency key skip aside)
// into those an active legal hold covers and the others.
func (p *Pipeline) heldVersions(ctx context.Context, key, vid, skip string) (held, free []*index.Record, err error) {
	recs, err := p.o.Ledger.Lookup(ctx, key)
	if errors.Is(err, index.ErrNotFound) {
		// Nothing stored under the key (its create is not committed yet,
		// or never will be): nothing is held either.
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("look up versions of %s: %w", key, err)
	}
	for _, r := range recs {
		if r.Key != key || r.Parent != 0 || (vid != "" && r.VersionID != vid) || (skip != "" && r.Idempotency == skip) {
			continue
		}
		matters, err := p.o.Holds.HoldingMatters(ctx, key, r.VersionID)
		if err != nil {
			return nil, nil, err
		}
		if len(matters) > 0 {
			held = append(held, r)
		} else {
			free = append(free, r)
		}
	}
	return held, free, nil
}

// describeOverwrite names the event whose new version superseded the
// held versions of an object, for reviewers and the audit.
func describeOverwrite(ev connectors.Event) string {
	what := "overwrite"
	if ev.VersionID != "" {
		what += " " + ev.VersionID
	}
	return fmt.Sprintf("%s of %s from %s", what, ev.Key, ev.Source)
}

// reserve takes an object's size from the memory budget before it is
// fetched, or twice what it needed when it was stopped halfway (so that
// an object read again is seldom stopped again: 24 zips contending for
// the budget in TestPipelineMemoryBoundedByBudget were read again 34
// times instead of 88, in half the time), waiting until it fits.
func (p *Pipeline) reserve(ctx context.Context, mem *extract.Account, size int64) error {
	w := size
	if w < 0 {
		w = p.unknown
	}
	// An object larger than the whole budget takes all of it: its
	// extraction then fails, and it is recorded with that error.
	w = min(max(w, 2*mem.Peak(), 1), p.o.Memory.Total())
	// An event still waiting when the pipeline stops has not started: it
	// is left to be delivered again rather than started then.
	if p.running != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(p.running, cancel)()
	}
	return mem.Reserve(ctx, w)
}

// observe tells the observers about committed documents; a failure leaves
// the event to be delivered again.
func (p *Pipeline) observe(ctx context.Context, ev connectors.Event, ids []index.DocID) error {
	for _, o := range p.o.Observers {
		if err := o.Indexed(ctx, ids); err != nil {
			return &connectors.Error{Op: "check indexed documents", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
		}
	}
	return nil
}

// committed returns the documents an event committed: the object stored
// under its idempotency key and everything inside it.
func (p *Pipeline) committed(ctx context.Context, idem string) ([]index.DocID, error) {
	if len(p.o.Observers) == 0 {
		return nil, nil
	}
	recs, err := p.o.Ledger.Lookup(ctx, idem)
	if err != nil {
		return nil, err
	}
	var ids []index.DocID
	for _, r := range recs {
		if r.Idempotency != idem {
			continue // Lookup answers a key's versions first; idem names one
		}
		// Breadth first, ids being the queue: each document's children
		// are appended after it.
		ids = append(ids, r.ID)
		for i := len(ids) - 1; i < len(ids); i++ {
			kids, err := p.o.Ledger.Children(ctx, ids[i])
			if err != nil {
				return nil, err
			}
			for _, k := range kids {
				ids = append(ids, k.ID)
			}
		}
	}
	return ids, nil
}

func (p *Pipeline) removed(ctx context.Context, ev connectors.Event, log *slog.Logger) error {
	key, vid := docKey(ev), ev.VersionID
	if ev.DeleteMarker {
		vid = "" // the marker hides every version of the key
	}
	unlock, err := p.lockKey(ctx, ev, key)
	if err != nil {
		return err
	}
	defer unlock()
	ids, kept, err := p.removeUnheld(ctx, ev, key, vid)
	if err != nil {
		return &connectors.Error{Op: "remove", Source: ev.Source, Key: ev.Key, Kind: connectors.Transient, Err: err}
	}
	p.m.removed.WithLabelValues(ev.Source).Inc()
	if kept > 0 {
		log.Info("deleted at source but kept under legal hold", "kept", kept, "removed", len(ids))
	} else {
		log.Debug("removed from index", "documents", len(ids))
	}
	for _, o := range p.o.Observers {
		o.Removed(ctx, ids)
	}
	return nil
}

// removeUnheld removes the versions of key that ev deletes (vid alone, or
// every version when vid is empty), except those an active legal hold
// covers: those stay indexed, in their matters, marked deleted at source
// with when and by which event, until the holds are released (see
// purgeReleased). It returns the documents removed and how many versions
// were newly kept (a version marked already keeps its first mark).
func (p *Pipeline) removeUnheld(ctx context.Context, ev connectors.Event, key, vid string) (removed []index.DocID, kept int, err error) {
	if p.o.Holds == nil {
		removed, err = p.o.Remover.Remove(ctx, key, vid)
		return removed, 0, err
	}
	heldRecs, free, err := p.heldVersions(ctx, key, vid, "")
	if err != nil {
		return nil, 0, err
	}
	held := make([]index.DocID, len(heldRecs))
	for i, r := range heldRecs {
		held[i] = r.ID
	}
	if len(held) == 0 {
		removed, err = p.o.Remover.Remove(ctx, key, vid)
		return removed, 0, err
	}
	event := describeRemoval(ev)
	newly, err := p.o.Ledger.MarkDeletedAtSource(ctx, held, cmp.Or(ev.Time, time.Now()), event)
	if err != nil {
		return nil, 0, err
	}
	if err := p.o.Holds.HeldDeleted(ctx, held, event); err != nil {
		return nil, newly, fmt.Errorf("alert held versions of %s deleted: %w", key, err)
	}
	for _, r := range free {
		ids, err := p.o.Remover.Remove(ctx, key, r.VersionID)
		if err != nil {
			return removed, newly, err
		}
		removed = append(removed, ids...)
	}
	return removed, newly, nil
}

// describeRemoval names the event that deleted an object at its source,
// for reviewers and the audit.
func describeRemoval(ev connectors.Event) string {
	what := "deletion"
	if ev.DeleteMarker {
		what = "delete marker"
	}
	if ev.VersionID != "" {
		what += " " + ev.VersionID
	}
	return fmt.Sprintf("%s of %s from %s", what, ev.Key, ev.Source)
}

// purgeReleased removes from the index the documents kept after their
// source deleted them once no active hold covers them any more. It runs
// periodically: a release is thus followed by the deletion the hold had
// held back, at the latest one interval later.
func (p *Pipeline) purgeReleased(ctx context.Context) error {
	if p.o.Holds == nil {
		return nil
	}
	var free []*index.Record
	err := p.o.Ledger.DeletedAtSource(ctx, func(r *index.Record) error {
		matters, err := p.o.Holds.HoldingMatters(ctx, r.Key, r.VersionID)
		if err == nil && len(matters) == 0 {
			free = append(free, r)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("purge documents released from holds: %w", err)
	}
	for _, r := range free {
		unlock, err := p.keys.Lock(ctx, r.Key)
		if err != nil {
			return fmt.Errorf("purge document %d released from holds: lock key: %w", r.ID, err)
		}
		ids, err := p.o.Remover.Remove(ctx, r.Key, r.VersionID)
		unlock()
		if err != nil {
			return fmt.Errorf("purge document %d released from holds: %w", r.ID, err)
		}
		p.o.Logger.Info("removed a document deleted at source now that no hold keeps it", "key", r.Key, "version", r.VersionID,
			"deleted_at_source", r.Meta[index.MetaDeletedAtSource], "by", r.Meta[index.MetaDeletedAtSourceEvent], "documents", len(ids))
	}
	return nil
}

// PurgeEvery runs purgeReleased every interval until ctx is done, and
// logs the progress summary every 10 seconds.
func (p *Pipeline) PurgeEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	summary := time.NewTicker(10 * time.Second)
	defer summary.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-summary.C:
			p.progress.flush()
		case <-t.C:
			if err := p.purgeReleased(ctx); err != nil && ctx.Err() == nil {
				p.o.Logger.Error("purge documents released from holds; trying again later", "err", err)
			}
		}
	}
}

// progressLog tells the operator that ingestion is alive without flooding
// the log: one info line per indexed object, at most perSecond a second;
// beyond that the objects are counted, and a summary line every interval
// says how many went unlogged.
type progressLog struct {
	logger    *slog.Logger
	now       func() time.Time
	perSecond int
	interval  time.Duration

	mu         sync.Mutex
	second     time.Time // start of the current one-second window
	inSecond   int       // lines logged in it
	unlogged   int       // objects indexed since the last summary, not logged
	unloggedKB int64
	summarised time.Time
}

func newProgressLog(logger *slog.Logger, now func() time.Time) *progressLog {
	return &progressLog{logger: logger, now: now, perSecond: 10, interval: 10 * time.Second}
}

// indexed records one indexed object of size bytes (-1: unknown) made of
// docs documents.
func (l *progressLog) indexed(source, key string, size int64, docs int) {
	l.mu.Lock()
	now := l.now()
	if now.Sub(l.second) >= time.Second {
		l.second, l.inSecond = now, 0
	}
	if l.inSecond < l.perSecond {
		l.inSecond++
		l.mu.Unlock()
		l.logger.Info("indexed", "source", source, "key", key, "bytes", size, "documents", docs)
		return
	}
	l.unlogged++
	if size > 0 {
		l.unloggedKB += size / 1024
	}
	due := now.Sub(l.summarised) >= l.interval
	l.mu.Unlock()
	if due {
		l.flush()
	}
}

// flush logs the summary of the objects not logged one by one, if any.
func (l *progressLog) flush() {
	l.mu.Lock()
	n, kb := l.unlogged, l.unloggedKB
	l.unlogged, l.unloggedKB, l.summarised = 0, 0, l.now()
	l.mu.Unlock()
	if n > 0 {
		l.logger.Info("indexed more objects than are logged one by one", "objects", n, "kib", kb)
	}
}
