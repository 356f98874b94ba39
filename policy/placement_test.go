package policy_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/lease"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/policy"
)

// faultyStore is the real policy store whose AddHeld fails while fail is
// set, as when its database is lost in the middle of a placement.
type faultyStore struct {
	policy.Store
	fail atomic.Bool
}

func (s *faultyStore) AddHeld(ctx context.Context, held []policy.HeldDoc) (int, error) {
	if s.fail.Load() {
		return 0, errors.New("connection lost")
	}
	return s.Store.AddHeld(ctx, held)
}

// cancellingIndex is the real index that cancels the placement's context
// at its first near-copy search, as a process stopping mid-way would.
type cancellingIndex struct {
	policy.Index
	cancel context.CancelFunc
}

func (x cancellingIndex) Similar(ctx context.Context, id index.DocID, th index.Thresholds) ([]index.Match, error) {
	x.cancel()
	return x.Index.Similar(ctx, id, th)
}

// engineOver returns an engine over en's stores and enforcer, as another
// process (or the same one restarted) would open.
func (en *env) engineOver(st policy.Store, ix policy.Index) *policy.Engine {
	en.t.Helper()
	e, err := policy.New(policy.Options{Config: en.cfg, Store: st, Index: ix, Enforcer: en.enf, Publisher: en.pub, Now: en.clock.Now, Workers: 2})
	if err != nil {
		en.t.Fatal(err)
	}
	return e
}

// placingCorpus indexes a seed, two near-copies and an unrelated document,
// all due for disposition, evaluates, and returns their ids and the
// disposition flag of each by name.
func placingCorpus(t *testing.T, en *env) ([]index.DocID, map[string]policy.Flag) {
	t.Helper()
	tx := texts(t)
	old := epoch.AddDate(-8, 0, 0)
	ids := en.add(
		doc{key: "seed.txt", text: tx["Apache-2.0"], mod: old},
		doc{key: "copy.txt", text: edit(tx["Apache-2.0"], 10, 1), mod: old},
		doc{key: "copy2.txt", text: edit(tx["Apache-2.0"], 15, 2), mod: old},
		doc{key: "unrelated.txt", text: tx["GPL-3.0-only"], mod: old},
	)
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	flags := byName(en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue}))
	for _, n := range []string{"copy.txt", "unrelated.txt"} {
		if _, err := en.e.Approve(ctx, flags[n].ID, "carol", "past retention"); err != nil {
			t.Fatal(err)
		}
	}
	return ids, flags
}

// TestPlacementResumesAfterFailure: a placement whose store fails after
// the hold is stored leaves the hold placing, not active (issue 47): until
// it has recorded its near-copies, the deletion of one (or of anything)
// is refused, its removal at source deferred and retention holds it; an
// engine opened afterwards (a restart) resumes it once its backoff has
// passed, and completes it.
func TestPlacementResumesAfterFailure(t *testing.T) {
	en := newEnv(t, retentionConfig())
	ids, flags := placingCorpus(t, en)
	fs := &faultyStore{Store: en.st}
	fs.fail.Store(true)
	e1 := en.engineOver(fs, policy.IndexOf(en.ix))
	spec := policy.HoldSpec{Matter: "M-47", Reason: "litigation", Seeds: ids[:1], Scope: policy.DefaultScope()}
	h, p, err := e1.CreateHold(ctx, spec, "alice")
	if !errors.Is(err, policy.ErrPlacementPending) || h.Status != policy.HoldPlacing || !p.Created {
		t.Fatalf("create with a failing store: hold %s, created %v, err %v; want placing, created, ErrPlacementPending", h.Status, p.Created, err)
	}
	got, err := en.e.Hold(ctx, "M-47")
	if err != nil || got.Status != policy.HoldPlacing || got.Placement == nil || got.Placement.Attempts != 1 || got.Placement.LastError == "" {
		t.Fatalf("hold after the failure: %+v, %v; want placing after 1 attempt with its error", got, err)
	}
	if hs, err := en.e.Holds(ctx, policy.HoldPlacing); err != nil || len(hs) != 1 {
		t.Fatalf("placing holds: %+v, %v", hs, err)
	}

	// While placing: nothing the hold might cover leaves.
	for _, n := range []string{"copy.txt", "unrelated.txt"} {
		f := flags[n]
		ms, err := en.e.HoldingMatters(ctx, f.Object.IndexKey, f.Object.VersionID)
		if err != nil || !slices.Contains(ms, "M-47") {
			t.Errorf("%s: holding matters %v, %v; want M-47 while it is placed", n, ms, err)
		}
		_, err = en.e.Execute(ctx, f.ID, "carol")
		if !errors.Is(err, policy.ErrLegalHold) || !errors.Is(err, policy.ErrPlacementPending) {
			t.Errorf("%s: execute while placing: %v; want ErrLegalHold and ErrPlacementPending", n, err)
		}
	}
	if len(en.enf.deleted) != 0 {
		t.Fatalf("deleted while placing: %v", en.enf.deleted)
	}
	run, err := en.e.Evaluate(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range run.Decisions {
		if d.Outcome != policy.OutcomeHeld {
			t.Errorf("%s decided %s while a hold is placed (%s); want held", d.Document.Name, d.Outcome, d.Reason)
		}
	}

	// A restart: another engine over the same stores resumes it, after
	// the backoff.
	e2 := en.engineOver(en.st, policy.IndexOf(en.ix))
	if n, err := e2.ResumePlacements(ctx); n != 0 || err != nil {
		t.Fatalf("resume before the backoff passed: %d, %v", n, err)
	}
	en.clock.Advance(time.Minute)
	if n, err := e2.ResumePlacements(ctx); n != 1 || err != nil {
		t.Fatalf("resume: %d, %v; want 1 completed", n, err)
	}
	got, err = e2.Hold(ctx, "M-47")
	if err != nil || got.Status != policy.HoldActive || got.Placement != nil || got.Held != 3 {
		t.Fatalf("hold after resuming: %+v, %v; want active, holding the seed and two copies", got, err)
	}
	for _, n := range []string{"seed.txt", "copy.txt", "copy2.txt"} {
		if !en.enf.held["s3:main/records/"+n+"@v1"] {
			t.Errorf("%s: legal hold off after resuming", n)
		}
	}
	if _, err := en.e.Execute(ctx, flags["copy.txt"].ID, "carol"); !errors.Is(err, policy.ErrLegalHold) || errors.Is(err, policy.ErrPlacementPending) {
		t.Errorf("execute a held copy once placed: %v; want ErrLegalHold for the hold itself", err)
	}
	if ms, err := en.e.HoldingMatters(ctx, flags["unrelated.txt"].Object.IndexKey, "v1"); err != nil || len(ms) != 0 {
		t.Errorf("unrelated document once placed: holding matters %v, %v; want none", ms, err)
	}
	if _, err := en.e.Execute(ctx, flags["unrelated.txt"].ID, "carol"); err != nil {
		t.Errorf("execute the unrelated document once placed: %v", err)
	}
	placed := 0
	if err := en.st.Audit(ctx, 1, func(a policy.AuditEntry) error {
		if a.Action == policy.AuditHoldPlaced {
			placed++
		}
		return nil
	}); err != nil || placed != 1 {
		t.Errorf("%d hold.placed audit entries, %v; want 1", placed, err)
	}
	if n, err := e2.ResumePlacements(ctx); n != 0 || err != nil {
		t.Errorf("resume again: %d, %v; want nothing to do", n, err)
	}
}

// TestPlacementCancelledResumes: a placement whose context ends (the
// process stopping) at its first near-copy search leaves the hold placing
// with nothing enforced; a new engine completes it, seeds' legal holds
// included.
func TestPlacementCancelledResumes(t *testing.T) {
	en := newEnv(t, retentionConfig())
	ids, _ := placingCorpus(t, en)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e1 := en.engineOver(en.st, cancellingIndex{Index: policy.IndexOf(en.ix), cancel: cancel})
	h, _, err := e1.CreateHold(cctx, policy.HoldSpec{Matter: "M-47", Seeds: ids[:1], Scope: policy.DefaultScope()}, "alice")
	if !errors.Is(err, policy.ErrPlacementPending) || !errors.Is(err, context.Canceled) || h.Status != policy.HoldPlacing {
		t.Fatalf("create cancelled mid-way: %s, %v; want placing, ErrPlacementPending and context.Canceled", h.Status, err)
	}
	if en.enf.held["s3:main/records/seed.txt@v1"] {
		t.Fatal("seed enforced before the cancellation: the test cuts nothing short")
	}
	en.clock.Advance(time.Minute)
	e2 := en.engineOver(en.st, policy.IndexOf(en.ix))
	if n, err := e2.ResumePlacements(ctx); n != 1 || err != nil {
		t.Fatalf("resume: %d, %v", n, err)
	}
	for _, n := range []string{"seed.txt", "copy.txt", "copy2.txt"} {
		if !en.enf.held["s3:main/records/"+n+"@v1"] {
			t.Errorf("%s: legal hold off after resuming", n)
		}
	}
}

// TestCreateHoldRepeated: a create repeated with the same spec answers the
// hold it made (completing its placement if pending), another spec for
// the matter, or the same after a release, is ErrHoldExists.
func TestCreateHoldRepeated(t *testing.T) {
	en := newEnv(t, retentionConfig())
	ids, _ := placingCorpus(t, en)
	spec := policy.HoldSpec{Matter: "M-1", Reason: "litigation", Seeds: ids[:1], Scope: policy.DefaultScope()}
	first, p, err := en.e.CreateHold(ctx, spec, "alice")
	if err != nil || !p.Created || first.Status != policy.HoldActive {
		t.Fatalf("create: %+v %+v %v", first, p, err)
	}
	again, p, err := en.e.CreateHold(ctx, spec, "alice")
	if err != nil || p.Created || again.Status != policy.HoldActive || !again.Created.Equal(first.Created) || again.Held != first.Held {
		t.Fatalf("same create again: %+v %+v %v; want the hold it made", again, p, err)
	}
	other := spec
	other.Reason = "another matter's reason"
	if _, _, err := en.e.CreateHold(ctx, other, "alice"); !errors.Is(err, policy.ErrHoldExists) {
		t.Fatalf("another spec for the matter: %v; want ErrHoldExists", err)
	}
	other = spec
	other.Seeds = ids[:2]
	if _, _, err := en.e.CreateHold(ctx, other, "alice"); !errors.Is(err, policy.ErrHoldExists) {
		t.Fatalf("other seeds for the matter: %v; want ErrHoldExists", err)
	}

	// A placing hold: the repeated create places it.
	fs := &faultyStore{Store: en.st}
	fs.fail.Store(true)
	e1 := en.engineOver(fs, policy.IndexOf(en.ix))
	spec2 := spec
	spec2.Matter = "M-2"
	if _, _, err := e1.CreateHold(ctx, spec2, "alice"); !errors.Is(err, policy.ErrPlacementPending) {
		t.Fatalf("create with a failing store: %v", err)
	}
	fs.fail.Store(false)
	h, p, err := e1.CreateHold(ctx, spec2, "alice")
	if err != nil || p.Created || h.Status != policy.HoldActive || h.Held != 3 {
		t.Fatalf("same create of a placing hold: %+v %+v %v; want it placed", h, p, err)
	}

	if _, err := en.e.ReleaseHold(ctx, "M-1", "settled", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := en.e.CreateHold(ctx, spec, "alice"); !errors.Is(err, policy.ErrHoldExists) {
		t.Fatalf("same create after the release: %v; want ErrHoldExists", err)
	}
}

// blockingEnforcer is the test enforcer whose HoldAll waits for its
// context to end while block is set, as a replica stuck in S3 would.
type blockingEnforcer struct {
	*fakeEnforcer
	block   atomic.Bool
	blocked chan struct{}
}

func (b *blockingEnforcer) HoldAll(ctx context.Context, o policy.Object) ([]string, error) {
	if b.block.Load() {
		select {
		case b.blocked <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return b.fakeEnforcer.HoldAll(ctx, o)
}

// TestPlacementResumedByAnotherReplica: two replicas share the PostgreSQL
// policy store and take their leases in one PostgreSQL database. While replica A places a hold (stuck in
// S3), B's resumption leaves it to A; once A stops mid-way, B completes
// it.
func TestPlacementResumedByAnotherReplica(t *testing.T) {
	onPostgres = true
	en := newEnv(t, retentionConfig())
	onPostgres = false
	ids, _ := placingCorpus(t, en)
	dsn := pgtest.DSN(t) // the fleet's database of leases
	replica := func(enf policy.Enforcer) *policy.Engine {
		pool, err := pgdb.Open(ctx, dsn, 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		l, err := lease.NewPostgres(ctx, pool, lease.PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix), Enforcer: enf,
			Now: en.clock.Now, Workers: 2, Lease: l})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	stuck := &blockingEnforcer{fakeEnforcer: en.enf, blocked: make(chan struct{}, 1)}
	stuck.block.Store(true)
	a, b := replica(stuck), replica(en.enf)

	actx, stop := context.WithCancel(ctx)
	placed := make(chan error, 1)
	go func() {
		_, _, err := a.CreateHold(actx, policy.HoldSpec{Matter: "M-F", Seeds: ids[:1], Scope: policy.DefaultScope()}, "alice")
		placed <- err
	}()
	select {
	case <-stuck.blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("replica A never reached enforcement")
	}
	if n, err := b.ResumePlacements(ctx); n != 0 || err != nil {
		t.Fatalf("B resumes while A places: %d, %v; want it left to A", n, err)
	}
	stop() // A stops mid-way
	if err := <-placed; !errors.Is(err, policy.ErrPlacementPending) {
		t.Fatalf("A's create: %v; want ErrPlacementPending", err)
	}
	en.clock.Advance(time.Minute)
	// A's session lets go of the lease as PostgreSQL ends it: B's polls
	// take it at the latest a few polls later.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, err := b.ResumePlacements(ctx)
		if err != nil || n == 1 {
			if err != nil {
				t.Fatalf("B resumes after A stopped: %d, %v", n, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B did not resume within 10 s of A stopping")
		}
	}
	if h, err := a.Hold(ctx, "M-F"); err != nil || h.Status != policy.HoldActive || h.Held != 3 {
		t.Fatalf("hold: %+v, %v", h, err)
	}
	for _, n := range []string{"seed.txt", "copy.txt", "copy2.txt"} {
		if !en.enf.held["s3:main/records/"+n+"@v1"] {
			t.Errorf("%s: legal hold off after B resumed", n)
		}
	}
}

// cuttingEnforcer is the test enforcer that cancels the placement's
// context after its first legal hold, which succeeds: the objects not yet
// handed out are never tried, and nothing reports them.
type cuttingEnforcer struct {
	*fakeEnforcer
	cancel context.CancelFunc
}

func (c cuttingEnforcer) HoldAll(ctx context.Context, o policy.Object) ([]string, error) {
	defer c.cancel()
	return c.fakeEnforcer.HoldAll(ctx, o)
}

// TestPlacementCutDuringEnforcement: a placement whose context ends while
// it turns legal holds on is not complete, though no legal hold failed.
func TestPlacementCutDuringEnforcement(t *testing.T) {
	en := newEnv(t, retentionConfig())
	ids, _ := placingCorpus(t, en)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e1, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix),
		Enforcer: cuttingEnforcer{fakeEnforcer: en.enf, cancel: cancel}, Now: en.clock.Now, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	h, p, err := e1.CreateHold(cctx, policy.HoldSpec{Matter: "M-47", Seeds: ids[:1], Scope: policy.DefaultScope()}, "alice")
	if !errors.Is(err, policy.ErrPlacementPending) || h.Status != policy.HoldPlacing || p.Enforced == 3 {
		t.Fatalf("create cut during enforcement: %s, %d enforced, %v; want placing and ErrPlacementPending", h.Status, p.Enforced, err)
	}
}
