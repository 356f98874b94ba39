package daemon

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/policy"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
)

// cuttingEnforcer is the daemon's enforcer that cancels the placement's
// context once it has turned on the legal holds of `after` objects, as a
// process killed in the middle of enforcing would stop.
type cuttingEnforcer struct {
	*s3Enforcer
	after  int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *cuttingEnforcer) HoldAll(ctx context.Context, o policy.Object) ([]string, error) {
	vs, err := c.s3Enforcer.HoldAll(ctx, o)
	if c.calls.Add(1) == c.after {
		c.cancel() // after a call that succeeded: nothing reports the rest
	}
	return vs, err
}

// TestMinIOPlacementResumesAfterCrash: a hold of many seeds whose
// placement stops part-way through turning legal holds on (issue 47: the
// hold read active while most seed versions had no legal hold) stays
// placing; an engine opened afterwards over the same stores, as a
// restarted daemon's, resumes it, and every version of every seed and
// near-copy then has its legal hold on in MinIO.
func TestMinIOPlacementResumesAfterCrash(t *testing.T) {
	ctx := t.Context()
	b := startLocked(t)
	en := newPolicyEnv(t, retentionConfig())
	var docs []s3Doc
	for i := range 12 {
		text := randomText(uint64(i+1), 600)
		docs = append(docs, b.put(t, fmt.Sprintf("legal/seed%02d.txt", i), text))
		docs = append(docs, b.put(t, fmt.Sprintf("inbox/copy%02d.txt", i), edit(text, 8, uint64(i))))
		if i%3 == 0 { // a second version of the copy
			docs = append(docs, b.put(t, fmt.Sprintf("inbox/copy%02d.txt", i), edit(text, 12, uint64(i+100))))
		}
	}
	en.add(docs...)

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cut := &cuttingEnforcer{s3Enforcer: b.enforcer(), after: 5, cancel: cancel}
	e1, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix), Enforcer: cut, Now: en.clock.Now, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	spec := policy.HoldSpec{Matter: "M-47", Reason: "litigation", Selectors: []policy.Selector{{Prefix: "legal/"}}, Scope: policy.DefaultScope()}
	h, _, err := e1.CreateHold(cctx, spec, "alice")
	if !errors.Is(err, policy.ErrPlacementPending) || h.Status != policy.HoldPlacing {
		t.Fatalf("placement cut short: hold %s, %v; want placing and ErrPlacementPending", h.Status, err)
	}
	off := 0
	for _, d := range docs {
		if !b.held(t, d.key, d.version) {
			off++
		}
	}
	if off == 0 {
		t.Fatal("every version held before the cut: the test cuts nothing short")
	}
	if got, err := en.e.Hold(ctx, "M-47"); err != nil || got.Status != policy.HoldPlacing {
		t.Fatalf("hold after the cut: %+v, %v; want placing", got, err)
	}
	for _, d := range docs { // what it covers stays in the index meanwhile
		ms, err := en.e.HoldingMatters(ctx, "s3:main/records/"+d.key, d.version)
		if err != nil || !slices.Contains(ms, "M-47") {
			t.Errorf("%s@%s: holding matters %v, %v", d.key, d.version, ms, err)
		}
	}

	// Restart: a new engine with the daemon's enforcer resumes it.
	e2, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix), Enforcer: b.enforcer(), Now: en.clock.Now, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	en.clock.mu.Lock()
	en.clock.t = en.clock.t.Add(time.Minute) // past the backoff
	en.clock.mu.Unlock()
	if n, err := e2.ResumePlacements(ctx); n != 1 || err != nil {
		t.Fatalf("resume: %d, %v", n, err)
	}
	got, err := e2.Hold(ctx, "M-47")
	if err != nil || got.Status != policy.HoldActive || got.Held != len(docs) {
		t.Fatalf("hold after resuming: %s holding %d, %v; want active holding every version (%d)", got.Status, got.Held, err, len(docs))
	}
	for _, d := range docs {
		if !b.held(t, d.key, d.version) {
			t.Errorf("%s@%s: legal hold off after resuming", d.key, d.version)
		}
	}
}

// pendingPlacements counts the pending placements in the policy store at
// path, read on a connection of the test's own (-1 while the daemon has
// not made the table yet).
func pendingPlacements(db *sql.DB) int {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM placement`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// TestDaemonResumesPlacementAfterStop: a daemon stopped while it places
// a configured hold of many seeds (its context cancelled the moment the
// hold and its pending placement are committed) leaves the hold placing;
// a daemon started on the same data directory resumes the placement at
// start, and every version of every seed and near-copy then has its
// legal hold on in MinIO.
func TestDaemonResumesPlacementAfterStop(t *testing.T) {
	r := newRig(t)
	r.bucket = "locked"
	r.minio.MakeBucket(t, r.bucket, true, true)
	r.minio.EnableNotifications(t, r.bucket)
	cfg := r.config(t, t.TempDir())
	cfg.Connectors.S3[0].Bucket = r.bucket
	cfg.Connectors.S3[0].Reconcile = ""
	d := startDaemon(t, cfg, r.env)
	const seeds = 60
	var objs []minio.UploadInfo
	for i := range seeds {
		text := randomText(uint64(i+1), 400)
		objs = append(objs, r.put(t, fmt.Sprintf("legal/seed%03d.txt", i), text), r.put(t, fmt.Sprintf("inbox/copy%03d.txt", i), edit(text, 6, uint64(i))))
	}
	waitFor(t, 120*time.Second, "every object indexed", func() bool {
		var st index.Stats
		getJSON(t, d.Addr().String(), "/api/v1/stats", &st)
		return st.Documents == int64(len(objs))
	})
	stopDaemon(t, d)

	// The configured hold is placed at start; the daemon stops as soon as
	// the hold is stored.
	cfg.Policy.Holds = []policy.HoldConfig{{Matter: "M-47", Reason: "litigation", Selectors: []policy.Selector{{Prefix: "legal/"}},
		Scope: policy.DefaultScope(), Mode: policy.ModeHold}}
	db, err := sql.Open("sqlite", "file:"+cfg.PolicyPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d2, err := New(cfg, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d2.Run(ctx) }()
	waitFor(t, 60*time.Second, "the hold stored", func() bool { return pendingPlacements(db) > 0 })
	cancel()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("daemon did not stop within 60s")
	}
	if n := pendingPlacements(db); n != 1 {
		t.Fatalf("%d pending placements after the stop, want the hold's", n)
	}
	off := 0
	for _, o := range objs {
		if !r.legalHold(t, o) {
			off++
		}
	}
	if off == 0 {
		t.Fatal("every version held before the stop: the test cut nothing short")
	}
	t.Logf("%d of %d versions without their legal hold after the stop", off, len(objs))

	d3 := startDaemon(t, cfg, r.env)
	waitFor(t, 120*time.Second, "the placement resumed and complete", func() bool {
		var h policy.Hold
		return getJSON(t, d3.Addr().String(), "/api/v1/holds/M-47", &h) == 200 && h.Status == policy.HoldActive
	})
	for _, o := range objs {
		if !r.legalHold(t, o) {
			t.Errorf("%s@%s: legal hold off after the restart", o.Key, o.VersionID)
		}
	}
	if n := pendingPlacements(db); n != 0 {
		t.Errorf("%d pending placements after the restart", n)
	}
}

// legalHold reports whether the legal hold of the version o is on.
func (r *rig) legalHold(t *testing.T, o minio.UploadInfo) bool {
	t.Helper()
	st, err := r.mc.GetObjectLegalHold(context.Background(), r.bucket, o.Key, minio.GetObjectLegalHoldOptions{VersionID: o.VersionID})
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.Code == "NoSuchObjectLockConfiguration" {
		return false // never held
	}
	if err != nil {
		t.Fatalf("legal hold of %s@%s: %v", o.Key, o.VersionID, err)
	}
	return st != nil && *st == minio.LegalHoldEnabled
}

// stallingIndex is the real index whose near-copy searches wait for
// release, signalling entered at the first, so that a placement stays in
// its recording phase as long as a test needs.
type stallingIndex struct {
	policy.Index
	entered chan struct{}
	release chan struct{}
}

func (x stallingIndex) Similar(ctx context.Context, id index.DocID, th index.Thresholds) ([]index.Match, error) {
	select {
	case x.entered <- struct{}{}:
	default:
	}
	select {
	case <-x.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return x.Index.Similar(ctx, id, th)
}

// TestPlacingHoldDefersRemovalAtSource: while a hold is placed and has not
// recorded its near-copies (issue 47: two near-copies deleted at the
// source then left the index for good), the pipeline keeps every version
// deleted at its source, marked so; once the placement has recorded them,
// the near-copy stays (held) and the unrelated document is purged.
func TestPlacingHoldDefersRemovalAtSource(t *testing.T) {
	ctx := t.Context()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	logger := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	eng, err := OpenEngine(ctx, &cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	pst, err := policysqlite.Open(ctx, filepath.Join(cfg.DataDir, "policy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pst.Close() })
	tx := licences(t)
	var ins []index.Input
	for _, d := range []s3Doc{
		{key: "legal/seed.txt", text: tx["Apache-2.0"]},
		{key: "inbox/copy.txt", text: edit(tx["Apache-2.0"], 10, 1)},
		{key: "inbox/unrelated.txt", text: tx["GPL-3.0-only"]},
	} {
		// Metadata, as S3 objects carry: the index's mark of a deletion at
		// source is lost on a document stored without any (see the report).
		ins = append(ins, index.Input{Doc: index.Doc{Key: "s3:main/records/" + d.key, VersionID: "v1", Name: d.key, Source: "s3:main",
			ModTime: epoch, MediaType: "text/plain", Meta: map[string]string{"content-type": "text/plain"}, KeepVersions: true},
			RawSHA256: sha256.Sum256([]byte(d.text)), RawSize: int64(len(d.text)), Text: []byte(d.text), Parent: -1})
	}
	res, err := eng.Index.Add(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	ids := []index.DocID{res[0].ID}
	stall := stallingIndex{Index: policy.IndexOf(eng.Index), entered: make(chan struct{}, 1), release: make(chan struct{})}
	e, err := policy.New(policy.Options{Config: retentionConfig(), Store: pst, Index: stall, Now: (&fakeClock{t: epoch}).Now, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	pipe := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Holds: e,
		Workers: 2, ShutdownTimeout: 10 * time.Second, Registerer: prometheus.NewRegistry(), Logger: logger})
	events := make(chan connectors.Event)
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { pipe.Run(pctx, events) })
	wg.Go(func() { pipe.PurgeEvery(pctx, 20*time.Millisecond) })
	defer func() { stop(); wg.Wait() }()

	placed := make(chan error, 1)
	go func() {
		_, _, err := e.CreateHold(ctx, policy.HoldSpec{Matter: "M-47", Seeds: ids[:1], Scope: policy.DefaultScope()}, "alice")
		placed <- err
	}()
	<-stall.entered // the hold is stored; its near-copies are being searched
	for _, key := range []string{"inbox/copy.txt", "inbox/unrelated.txt"} {
		settled := make(chan error, 1)
		events <- connectors.Event{Source: "s3:main", Kind: connectors.Removed, Bucket: "records", Key: key, VersionID: "v1",
			Time: epoch, Done: func(_ context.Context, err error) { settled <- err }}
		if err := <-settled; err != nil {
			t.Fatalf("delete %s at source: %v", key, err)
		}
	}
	time.Sleep(100 * time.Millisecond) // purges run meanwhile, and must keep both
	marked := map[string]bool{}
	if err := eng.Store.DeletedAtSource(ctx, func(r *index.Record) error { marked[r.Key] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"inbox/copy.txt", "inbox/unrelated.txt"} {
		rs, err := eng.Store.Lookup(ctx, "s3:main/records/"+key)
		if err != nil || len(rs) != 1 || !marked["s3:main/records/"+key] {
			t.Fatalf("%s deleted at source while the hold is placed: %d versions, marked %v, %v; want it kept, marked deleted at source",
				key, len(rs), marked["s3:main/records/"+key], err)
		}
	}

	close(stall.release)
	if err := <-placed; err != nil {
		t.Fatalf("placement: %v", err)
	}
	waitFor(t, 10*time.Second, "the unrelated document purged", func() bool {
		_, err := eng.Store.Lookup(ctx, "s3:main/records/inbox/unrelated.txt")
		return errors.Is(err, index.ErrNotFound)
	})
	if rs, err := eng.Store.Lookup(ctx, "s3:main/records/inbox/copy.txt"); err != nil || len(rs) != 1 {
		t.Fatalf("the held near-copy after the placement: %d versions, %v; want it kept", len(rs), err)
	}
	if ms, err := e.HoldingMatters(ctx, "s3:main/records/inbox/copy.txt", "v1"); err != nil || !slices.Equal(ms, []string{"M-47"}) {
		t.Fatalf("the near-copy's holds: %v, %v", ms, err)
	}
}
