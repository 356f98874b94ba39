package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
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
