package policy_test

import (
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// TestHeldSourceChangedFlagsOncePerChange: a held document deleted or
// overwritten at its source raised no alarm (issue 40, item 2). Each
// change now raises one hold-source-changed flag for the holding matter,
// alerted; a redelivered change raises nothing new, and an unheld
// document none.
func TestHeldSourceChangedFlagsOncePerChange(t *testing.T) {
	en := newEnv(t, policy.DefaultConfig())
	tx := texts(t)
	ids := en.add(doc{key: "seed.txt", text: tx["Apache-2.0"]}, doc{key: "unrelated.txt", text: tx["GPL-3.0-only"]})
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-17", Reason: "litigation", Seeds: ids[:1], Scope: policy.DefaultScope()}, "alice"); err != nil {
		t.Fatal(err)
	}
	before := en.pub.count()
	for range 2 { // the second time, a redelivery
		if err := en.e.HeldSuperseded(ctx, ids[:1], "overwrite v2 of seed.txt from fs:inbox"); err != nil {
			t.Fatal(err)
		}
		if err := en.e.HeldDeleted(ctx, ids, "deletion of seed.txt from fs:inbox"); err != nil {
			t.Fatal(err)
		}
	}
	fs := en.flags(policy.FlagFilter{Kind: policy.KindHoldSourceChanged})
	rules := map[string]index.DocID{}
	for _, f := range fs {
		if f.Matter != "M-17" || f.Evidence.Note == "" {
			t.Errorf("flag %+v: want matter M-17 and the event in its note", f)
		}
		rules[f.Rule] = f.Document.ID
	}
	if len(fs) != 2 || rules[policy.ChangeSuperseded] != ids[0] || rules[policy.ChangeDeleted] != ids[0] {
		t.Fatalf("hold-source-changed flags: %+v; want one superseded and one deleted-at-source flag of the seed", fs)
	}
	if n := en.pub.count() - before; n != 2 {
		t.Errorf("%d alerts published, want 2", n)
	}
}
