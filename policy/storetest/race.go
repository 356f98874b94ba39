package storetest

import (
	"fmt"
	"testing"

	"github.com/simdex/simdex/policy"
)

// writers is how many writers race, split over two handles.
const writers = 8

// pair returns two handles on one fresh store.
func pair(t *testing.T, open Open) [2]policy.Store {
	st, again := open(t)
	return [2]policy.Store{st, again(t)}
}

// testRaceHold races writers creating one hold, then releasing it: one of
// each commits, the others get the sentinel, and the chain is one chain.
func testRaceHold(t *testing.T, open Open) {
	sts := pair(t, open)
	errs := race(writers, func(i int) error {
		return sts[i%2].CreateHold(ctx, hold("M-1", 1), []policy.HeldDoc{heldDoc("M-1", 1, true)}, entry(policy.AuditHoldCreate, "hold:M-1"))
	})
	if n := count(t, errs, policy.ErrHoldExists); n != 1 {
		t.Fatalf("%d writers created the hold, want 1", n)
	}
	errs = race(writers, func(i int) error {
		_, err := sts[i%2].ReleaseHold(ctx, policy.Hold{Matter: "M-1", Released: epoch, ReleasedBy: fmt.Sprint(i)}, entry(policy.AuditHoldRelease, "hold:M-1"))
		return err
	})
	if n := count(t, errs, policy.ErrHoldReleased); n != 1 {
		t.Fatalf("%d writers released the hold, want 1", n)
	}
	if n := verify(t, sts[1]); n != 2 {
		t.Errorf("audit has %d entries, want 2", n)
	}
}

// testRaceFlag races writers raising one flag, then resolving it twice
// (approve against dismiss): one of each commits.
func testRaceFlag(t *testing.T, open Open) {
	sts := pair(t, open)
	ids := make([]int64, writers)
	errs := race(writers, func(i int) error {
		added, err := sts[i%2].AddFlags(ctx, []policy.Flag{flag(policy.KindDispositionDue, 1, "r1", "")}, "retention", epoch)
		if len(added) == 1 {
			ids[i] = added[0].ID
		}
		return err
	})
	count(t, errs)
	var raised []int64
	for _, id := range ids {
		if id != 0 {
			raised = append(raised, id)
		}
	}
	if len(raised) != 1 {
		t.Fatalf("the flag was raised %d times, want once", len(raised))
	}
	errs = race(writers, func(i int) error {
		to, action := policy.StatusApproved, policy.AuditFlagApprove
		if i%2 == 1 {
			to, action = policy.StatusDismissed, policy.AuditFlagDismiss
		}
		_, err := sts[i%2].Transition(ctx, policy.Transition{ID: raised[0], From: []policy.FlagStatus{policy.StatusOpen}, To: to,
			Actor: fmt.Sprint(i), At: epoch, Audit: entry(action, fmt.Sprintf("flag:%d", raised[0]))})
		return err
	})
	if n := count(t, errs, policy.ErrFlagState); n != 1 {
		t.Fatalf("%d writers resolved the flag, want 1", n)
	}
	if n := verify(t, sts[0]); n != 2 {
		t.Errorf("audit has %d entries, want 2 (raise, resolve)", n)
	}
}

// testRaceIngest races replicas committing the ingest check of one
// document (a redelivered event): its flags are committed once, with one
// audit entry each.
func testRaceIngest(t *testing.T, open Open) {
	sts := pair(t, open)
	createHold(t, sts[0], "M-1", 1)
	flags := []policy.Flag{flag(policy.KindHoldMatch, 7, "", "M-1"), flag(policy.KindDuplicateUpload, 7, "", "")}
	added := make([]int, writers)
	errs := race(writers, func(i int) error {
		_, fs, err := sts[i%2].AddHeldAndFlags(ctx, []policy.HeldDoc{heldDoc("M-1", 7, false)}, flags, nil, "ingest", epoch)
		added[i] = len(fs)
		return err
	})
	count(t, errs)
	total := 0
	for _, n := range added {
		total += n
	}
	if total != len(flags) {
		t.Fatalf("%d flags committed, want %d", total, len(flags))
	}
	h, err := sts[1].Hold(ctx, "M-1")
	must(t, err)
	if h.Held != 2 {
		t.Errorf("hold has %d documents, want 2", h.Held)
	}
	if n := verify(t, sts[1]); n != 3 {
		t.Errorf("audit has %d entries, want 3 (hold, two flags)", n)
	}
}

// testRaceAudit appends from many writers on two handles: one chain, every
// entry once.
func testRaceAudit(t *testing.T, open Open) {
	sts := pair(t, open)
	const each = 25
	errs := race(writers, func(i int) error {
		for j := range each {
			e := entry(policy.AuditFlagApprove, fmt.Sprintf("w%d:%d", i, j))
			if err := sts[i%2].Append(ctx, e, e); err != nil {
				return err
			}
		}
		return nil
	})
	count(t, errs)
	if n := verify(t, sts[0]); n != writers*each*2 {
		t.Fatalf("audit has %d entries, want %d", n, writers*each*2)
	}
	seen := map[string]int{}
	must(t, sts[1].Audit(ctx, 1, func(e policy.AuditEntry) error { seen[e.Object]++; return nil }))
	for o, n := range seen {
		if n != 2 {
			t.Errorf("%s appended %d times, want 2", o, n)
		}
	}
}
