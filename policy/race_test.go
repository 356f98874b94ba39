package policy_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// randomText is n words drawn from a large vocabulary: texts of different
// seeds are not near-copies of each other.
func randomText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%x", r.Uint32()%200000)
	}
	return b.String()
}

// envInt reads a size from the environment, for larger runs.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestRaceDeletionAgainstHold races Execute of an approved deletion with
// the placement of a hold on the same document, thousands of times, and
// checks that no document is deleted when its hold was committed before
// the deletion was claimed — and that every document ends up either
// deleted (deletion first) or held (hold first), never neither.
func TestRaceDeletionAgainstHold(t *testing.T) {
	n := envInt("SIMDEX_POLICY_RACE_N", 2000)
	if testing.Short() {
		n = 200
	}
	if onPostgres { // the race is the same; fewer rounds keep CI lean
		n = min(n, 500)
	}
	en := newEnv(t, retentionConfig())
	docs := make([]doc, n)
	for i := range docs {
		docs[i] = doc{key: fmt.Sprintf("r/%05d.txt", i), text: randomText(uint64(i+1), 60), mod: epoch.AddDate(-8, 0, 0)}
	}
	var ids []index.DocID
	for i := 0; i < n; i += 500 {
		ids = append(ids, en.add(docs[i:min(i+500, n)]...)...)
	}
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	flagOf := map[index.DocID]policy.Flag{}
	for _, f := range en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue}) {
		flagOf[f.Document.ID] = f
	}
	if len(flagOf) != n {
		t.Fatalf("%d flags for %d documents", len(flagOf), n)
	}
	for _, f := range flagOf {
		if _, err := en.e.Approve(ctx, f.ID, "carol", "due"); err != nil {
			t.Fatal(err)
		}
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				var inner sync.WaitGroup
				inner.Add(2)
				go func() {
					defer inner.Done()
					_, _, _ = en.e.CreateHold(ctx, policy.HoldSpec{Matter: fmt.Sprintf("R-%d", i), Seeds: []index.DocID{ids[i]},
						Scope: policy.DefaultScope(), Mode: policy.ModeHold}, "alice")
				}()
				go func() {
					defer inner.Done()
					_, _ = en.e.Execute(ctx, flagOf[ids[i]].ID, "carol")
				}()
				inner.Wait()
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()

	order := auditOrder(t, en)
	deleted, wrong := 0, 0
	for i := range n {
		o := policy.Object{IndexKey: "s3:main/records/" + docs[i].key, VersionID: "v1"}
		k := o.IndexKey + "@v1"
		hold, claim := order[fmt.Sprintf("hold:R-%d", i)], order[fmt.Sprintf("flag:%d", flagOf[ids[i]].ID)]
		en.enf.mu.Lock()
		gone, held := en.enf.deleted[k], en.enf.held[k]
		en.enf.mu.Unlock()
		switch {
		case gone && (claim == 0 || hold != 0 && hold < claim):
			wrong++
			t.Errorf("%s: deleted although its hold (audit %d) preceded the claim (audit %d)", k, hold, claim)
		case gone:
			deleted++
		case !held:
			t.Errorf("%s: neither deleted nor held", k)
		}
		f, err := en.e.Flag(ctx, flagOf[ids[i]].ID)
		if err != nil {
			t.Fatal(err)
		}
		if gone != (f.Status == policy.StatusExecuted) {
			t.Errorf("%s: deleted %v but flag %s", k, gone, f.Status)
		}
	}
	if _, err := en.e.VerifyAudit(ctx, policy.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d iterations: %d deleted before their hold, %d held, %d wrong deletions", n, deleted, n-deleted, wrong)
}

// auditOrder maps objects to the sequence number of their hold.create or
// delete.claim entry (the last claim wins).
func auditOrder(t testing.TB, en *env) map[string]int64 {
	out := map[string]int64{}
	err := en.st.Audit(ctx, 1, func(a policy.AuditEntry) error {
		switch a.Action {
		case policy.AuditHoldCreate, policy.AuditDeleteClaim:
			out[a.Object] = a.Seq
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
