package index_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/index"
)

// TestFamilyWalk: a document's family holds its near-copies and theirs,
// not an unrelated text; its edges are ordered pairs with rounded scores;
// the pivot is the copy with two identical twins; a limit truncates the
// walk and a visibility filter leaves documents out.
func TestFamilyWalk(t *testing.T) {
	ctx := context.Background()
	ix, st := openIndex(t, filepath.Join(t.TempDir(), "idx.db"))
	apache, mit := corpus(t, "spdx/text/Apache-2.0.txt"), corpus(t, "spdx/text/MIT.txt")
	res := add(t, ix, input("a.txt", apache), input("a-copy.txt", apache), input("a-edited.txt", edit(apache, 20, 1)), input("mit.txt", mit))
	edited, err := st.Get(ctx, res[2].ID)
	if err != nil {
		t.Fatal(err)
	}
	all := func(*index.Record) bool { return true }
	fam, err := ix.Family(ctx, edited, index.DefaultThresholds(), 50, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(fam.Members) != 3 || fam.Truncated {
		t.Fatalf("family of %d members (truncated %v), want the three Apache texts", len(fam.Members), fam.Truncated)
	}
	for i, m := range fam.Members {
		if m.ID != res[i].ID {
			t.Errorf("member %d is %s, want %s (by id)", i, m.Name, []string{"a.txt", "a-copy.txt", "a-edited.txt"}[i])
		}
	}
	if fam.Pivot != res[0].ID {
		t.Errorf("pivot %d, want a.txt (%d): the copy with an identical twin", fam.Pivot, res[0].ID)
	}
	if len(fam.Edges) != 3 {
		t.Fatalf("%d edges, want the three pairs", len(fam.Edges))
	}
	for i, e := range fam.Edges {
		if e.A >= e.B || (i > 0 && (fam.Edges[i-1].A > e.A || fam.Edges[i-1].A == e.A && fam.Edges[i-1].B >= e.B)) {
			t.Errorf("edge %d (%d, %d) out of order", i, e.A, e.B)
		}
		if r := e.Resemblance * 1000; r != math.Round(r) {
			t.Errorf("edge %d resemblance %v not rounded to three decimals", i, e.Resemblance)
		}
	}

	fam, err = ix.Family(ctx, edited, index.DefaultThresholds(), 2, all)
	if err != nil || len(fam.Members) != 2 || !fam.Truncated {
		t.Fatalf("family limited to 2: %d members, truncated %v, err %v", len(fam.Members), fam.Truncated, err)
	}
	fam, err = ix.Family(ctx, edited, index.DefaultThresholds(), 50, func(r *index.Record) bool { return r.ID != res[1].ID })
	if err != nil || len(fam.Members) != 2 || len(fam.Edges) != 1 {
		t.Fatalf("family without a-copy.txt: %d members, %d edges, err %v", len(fam.Members), len(fam.Edges), err)
	}
}
