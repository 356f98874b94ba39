package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

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
