package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/lease"
)

// Index is what the Engine needs from the index: near-copies of stored
// documents and the documents themselves. *index.Index and its Store
// satisfy it together (see IndexOf).
type Index interface {
	// Similar returns the near-copies of a stored document within th.
	Similar(ctx context.Context, id index.DocID, th index.Thresholds) ([]index.Match, error)
	// Get returns a stored document, or index.ErrNotFound.
	Get(ctx context.Context, id index.DocID) (*index.Record, error)
	// Lookup returns the current versions of an index key.
	Lookup(ctx context.Context, key string) ([]*index.Record, error)
	// Documents calls fn with every stored document version.
	Documents(ctx context.Context, fn func(*index.Record) error) error
}

// IndexOf adapts an *index.Index (near-copies) and its store (lookups and
// iteration) to Index.
func IndexOf(ix *index.Index) Index { return indexAdapter{ix} }

type indexAdapter struct{ *index.Index }

func (a indexAdapter) Lookup(ctx context.Context, key string) ([]*index.Record, error) {
	return a.Store().Lookup(ctx, key)
}

func (a indexAdapter) Documents(ctx context.Context, fn func(*index.Record) error) error {
	return a.Store().Documents(ctx, fn)
}

var _ watcher = indexAdapter{}

// Options configure an Engine.
type Options struct {
	// Config is the policy section of config.yaml; it is validated by New.
	Config Config
	// Store keeps every piece of policy state. Required.
	Store Store
	// Index finds documents and their near-copies. Required.
	Index Index
	// Enforcer places S3 legal holds and deletes approved versions; nil
	// means holds are recorded and flagged only, and nothing is deleted.
	Enforcer Enforcer
	// Publisher receives new flags; nil leaves them unpublished in the
	// store until one is given.
	Publisher Publisher
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
	// Lease runs the placement of each hold on one replica at a time
	// (internal/lease's Postgres for a fleet); nil means a lease of this
	// process alone.
	Lease Lease
	// Registerer receives the placement metrics (pending placements,
	// failed attempts); nil registers none.
	Registerer prometheus.Registerer
	// Workers bounds concurrent near-copy searches across the Engine;
	// default (GOMAXPROCS+2)/2. A search over the embedded index store can
	// hold two of its read connections at once (GOMAXPROCS+2 by default),
	// so more concurrent searches than half the pool can deadlock it.
	Workers int
}

// Engine evaluates retention, places and checks holds, and carries out
// approved deletions. It is safe for concurrent use. One Engine runs per
// daemon; its only local state is a cache of hold seeds, brought up to date
// from the Store whenever HoldsVersion changes (caught up with the changes
// when the Store implements HoldChanges, else rebuilt), so replicas may
// share a Store.
type Engine struct {
	cfg    Config
	st     Store
	ix     Index
	enf    Enforcer
	pub    Publisher
	now    func() time.Time
	logger *slog.Logger
	work   int
	lease  Lease

	mu    sync.Mutex // guards cache and its version
	cache *holdCache
	// rebuilds counts reloads of the hold cache from the store, catchUps
	// the times it caught up with changes instead (HoldChanges).
	rebuilds, catchUps atomic.Int64
	// sims bounds concurrent near-copy searches (see Options.Workers).
	sims chan struct{}
	// pendingGauge counts the pending placements ResumePlacements last
	// saw, placeFailures the failed placement attempts.
	pendingGauge  prometheus.Gauge
	placeFailures prometheus.Counter
}

// New validates opts and returns an Engine. It starts nothing and touches
// no store: call Sync at start.
func New(opts Options) (*Engine, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	if opts.Store == nil || opts.Index == nil {
		return nil, errors.New("policy engine: store and index are required")
	}
	e := &Engine{cfg: opts.Config, st: opts.Store, ix: opts.Index, enf: opts.Enforcer, pub: opts.Publisher,
		now: opts.Now, logger: opts.Logger, work: opts.Workers, lease: opts.Lease}
	if e.lease == nil {
		e.lease = lease.NewLocal()
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.logger == nil {
		e.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e.logger = e.logger.With("component", "policy")
	if e.work <= 0 {
		e.work = max(1, (runtime.GOMAXPROCS(0)+2)/2)
	}
	e.sims = make(chan struct{}, e.work)
	e.pendingGauge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "simdex_policy_hold_placements_pending",
		Help: "Hold placements not complete yet (holds reading placing), as last seen by this replica."})
	e.placeFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "simdex_policy_hold_placement_failures_total",
		Help: "Failed attempts at placing a hold (each retried with backoff; the hold reads placing meanwhile)."})
	if opts.Registerer != nil {
		if err := errors.Join(opts.Registerer.Register(e.pendingGauge), opts.Registerer.Register(e.placeFailures)); err != nil {
			return nil, fmt.Errorf("policy engine: register metrics: %w", err)
		}
	}
	return e, nil
}

// ConfigActor is the actor of changes made from config.yaml.
const ConfigActor = "config"

// Sync brings the store in line with the configuration at start: it
// replaces the configured rules, creates configured holds the store does
// not have yet (placing them: a placement that fails stays pending, for
// ResumePlacements), and publishes flags left unpublished by a previous
// process. It is idempotent.
func (e *Engine) Sync(ctx context.Context) error {
	if err := e.st.PutRules(ctx, ConfigActor, e.cfg.Retention, e.cfg.KeepAtLeast); err != nil {
		return fmt.Errorf("store configured rules: %w", err)
	}
	for _, hc := range e.cfg.Holds {
		_, err := e.st.Hold(ctx, hc.Matter)
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("load hold %s: %w", hc.Matter, err)
		}
		_, _, err = e.CreateHold(ctx, hc.spec(), ConfigActor)
		switch {
		case errors.Is(err, ErrPlacementPending):
			e.logger.Warn("configured hold stored, its placement continues in the background", "hold_id", hc.Matter, "err", err)
		case err != nil && !errors.Is(err, ErrHoldExists):
			return fmt.Errorf("create configured hold %s: %w", hc.Matter, err)
		}
	}
	if _, err := e.Republish(ctx); err != nil {
		e.logger.Warn("republishing flags, will retry on schedule", "err", err)
	}
	return nil
}

// Flags returns a page of flags.
func (e *Engine) Flags(ctx context.Context, f FlagFilter) ([]Flag, error) {
	fs, err := e.st.Flags(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list flags: %w", err)
	}
	return fs, nil
}

// Flag returns one flag.
func (e *Engine) Flag(ctx context.Context, id int64) (Flag, error) {
	f, err := e.st.Flag(ctx, id)
	if err != nil {
		return Flag{}, fmt.Errorf("load flag %d: %w", id, err)
	}
	return f, nil
}

// Runs returns the latest recorded evaluations, newest first.
func (e *Engine) Runs(ctx context.Context, limit int) ([]Run, error) {
	rs, err := e.st.Runs(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return rs, nil
}

// VerifyAudit verifies the audit log against cp (see Verify).
func (e *Engine) VerifyAudit(ctx context.Context, cp Checkpoint) (Checkpoint, error) {
	return Verify(ctx, e.st, cp)
}

// raise stores flags, publishing the new ones, and returns them.
func (e *Engine) raise(ctx context.Context, flags []Flag, actor string) ([]Flag, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	added, err := e.st.AddFlags(ctx, flags, actor, e.now())
	if err != nil {
		return nil, fmt.Errorf("store flags: %w", err)
	}
	e.publish(ctx, added)
	return added, nil
}

// publish hands flags to the Publisher and marks those taken. A failure
// leaves them unpublished for Republish.
func (e *Engine) publish(ctx context.Context, flags []Flag) int {
	if e.pub == nil || len(flags) == 0 {
		return 0
	}
	var done []int64
	for i := range flags {
		if err := e.pub.Notify(ctx, flags[i].Alert()); err != nil {
			e.logger.Warn("publishing flag, left for republish", "flag", flags[i].ID, "err", err)
			continue
		}
		done = append(done, flags[i].ID)
	}
	if err := e.st.MarkPublished(ctx, done); err != nil {
		e.logger.Warn("marking flags published, they will be published again (idempotent)", "err", err)
	}
	return len(done)
}

// Republish hands every unpublished flag to the Publisher and returns how
// many were taken.
func (e *Engine) Republish(ctx context.Context) (int, error) {
	if e.pub == nil {
		return 0, nil
	}
	total := 0
	for {
		fs, err := e.st.Unpublished(ctx, 500)
		if err != nil {
			return total, fmt.Errorf("load unpublished flags: %w", err)
		}
		n := e.publish(ctx, fs)
		total += n
		if len(fs) < 500 || n < len(fs) {
			return total, nil
		}
	}
}

// similar is Index.Similar bounded to e.work concurrent searches.
func (e *Engine) similar(ctx context.Context, id index.DocID, th index.Thresholds) ([]index.Match, error) {
	return e.bounded(ctx, func() ([]index.Match, error) { return e.ix.Similar(ctx, id, th) })
}

// bounded runs a search within the engine's limit of concurrent searches.
func (e *Engine) bounded(ctx context.Context, search func() ([]index.Match, error)) ([]index.Match, error) {
	select {
	case e.sims <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-e.sims }()
	return search()
}

// thresholds are the index thresholds of near-copy scope s: policy never
// counts a pair by SimHash distance.
func thresholds(s index.Scope) index.Thresholds {
	return index.Thresholds{Scope: s, Hamming: -1}
}

// inScope reports whether sc passes s (Hamming is not used for policy).
func inScope(sc index.Scores, s index.Scope) bool {
	return sc.Exact || sc.Resemblance >= s.Resemblance ||
		sc.ContainmentAB >= s.Containment || sc.ContainmentBA >= s.Containment
}

// forEach runs fn over items with e.work goroutines and joins the errors.
func forEach[T any](ctx context.Context, workers int, items []T, fn func(context.Context, T) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	ch := make(chan T)
	for range min(workers, max(1, len(items))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				if err := fn(ctx, it); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		ch <- it
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
