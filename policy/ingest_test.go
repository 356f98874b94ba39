package policy_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/simdex/simdex/policy"
)

// TestIngestCommit: the commit step of the ingest check against the real
// SQLite store. A near-copy of a seed of a hold in mode hold commits its
// held record, its hold-match and duplicate-upload flags and the audit
// entry of its legal hold together; a redelivery raises nothing new; a
// document that matches nothing writes nothing.
func TestIngestCommit(t *testing.T) {
	tx := texts(t)
	apache := tx["Apache-2.0"]
	en := newEnv(t, policy.DefaultConfig())
	seed := en.add(doc{key: "seed.txt", text: apache})
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-C", Seeds: seed, Scope: policy.DefaultScope()}, "alice"); err != nil {
		t.Fatal(err)
	}
	actions := func(from int64) (out []string) {
		t.Helper()
		err := en.st.Audit(ctx, from, func(a policy.AuditEntry) error {
			out = append(out, a.Action+" "+a.Object)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := int64(len(actions(1)))

	copied := en.add(doc{bucket: "uploads", key: "copy.txt", text: edit(apache, 4, 9)})
	checks, err := en.e.CheckIngested(ctx, copied)
	if err != nil || len(checks) != 1 || !slices.Equal(checks[0].Matters, []string{"M-C"}) || len(checks[0].Flags) != 2 {
		t.Fatalf("check = %+v, %v: want held for M-C with two flags", checks, err)
	}
	kinds := []policy.FlagKind{checks[0].Flags[0].Kind, checks[0].Flags[1].Kind}
	if !slices.Equal(kinds, []policy.FlagKind{policy.KindHoldMatch, policy.KindDuplicateUpload}) {
		t.Errorf("flag kinds %v, want hold-match then duplicate-upload", kinds)
	}
	got := actions(before + 1)
	want := []string{"flag.raise flag:" + strconv.FormatInt(checks[0].Flags[0].ID, 10), "flag.raise flag:" + strconv.FormatInt(checks[0].Flags[1].ID, 10), "enforce.hold hold:M-C"}
	if !slices.Equal(got, want) {
		t.Errorf("audit entries %q, want %q", got, want)
	}
	if held, err := en.e.HeldDocuments(ctx, "M-C"); err != nil || !slices.Contains(held, copied[0]) {
		t.Errorf("held documents %v, %v: want the copy", held, err)
	}
	if !en.enf.held["s3:main/uploads/copy.txt@v1"] {
		t.Error("legal hold of the copy not on")
	}

	if again, err := en.e.CheckIngested(ctx, copied); err != nil || len(again[0].Flags) != 0 {
		t.Errorf("redelivery: %+v, %v: want no new flag", again, err)
	}
	after := int64(len(actions(1)))
	other := en.add(doc{bucket: "uploads", key: "other.txt", text: tx["MPL-2.0"]})
	if checks, err := en.e.CheckIngested(ctx, other); err != nil || len(checks[0].Matters) != 0 || len(checks[0].Flags) != 0 {
		t.Errorf("unrelated upload: %+v, %v", checks, err)
	}
	if n := int64(len(actions(1))); n != after {
		t.Errorf("an unrelated upload wrote %d audit entries", n-after)
	}
}
