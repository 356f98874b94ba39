package index_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/benchcorpus"
	"github.com/simdex/simdex/internal/corpustest"
)

// TestWatchlistAgreesWithSimilar compares every document of a synthetic
// collection with the seeds of its planted groups both ways: every seed
// Similar reports must be matched by the watchlist with the same scores,
// and every planted near-copy must match its seed.
func TestWatchlistAgreesWithSimilar(t *testing.T) {
	ctx := context.Background()
	c, err := benchcorpus.New(benchcorpus.Spec{Docs: 600, Sources: corpustest.Fixtures()})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "index.db")
	if _, _, err := benchcorpus.Build(ctx, c, path, nil); err != nil {
		t.Fatal(err)
	}
	ix, st, err := benchcorpus.OpenIndex(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ix.Close()
		st.Close()
	})
	id := func(i int) index.DocID {
		rs, err := st.Lookup(ctx, c.Key(i))
		if err != nil {
			t.Fatal(err)
		}
		return rs[0].ID
	}
	seedOf := map[index.ContentID]int{} // seed content → group
	var contents []index.ContentID
	for g, grp := range c.Groups() {
		r, err := ix.Get(ctx, id(grp.Seed))
		if err != nil {
			t.Fatal(err)
		}
		seedOf[r.Content] = g
		contents = append(contents, r.Content)
	}
	// Built in two overlapping steps, as a hold gains seeds: Add extends
	// the list to what Watch of every content would hold.
	w, err := ix.Watch(ctx, contents[:len(contents)/2])
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, contents[len(contents)/3:]); err != nil {
		t.Fatal(err)
	}
	if w.Len() != len(contents) {
		t.Fatalf("watchlist holds %d contents, want %d", w.Len(), len(contents))
	}
	th := index.DefaultThresholds()
	for i := range c.Len() {
		if _, _, planted := c.GroupOf(i); !planted && i%4 != 0 {
			continue // every planted document, a quarter of the others
		}
		r, fp, err := ix.FingerprintOf(ctx, id(i))
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.Match(ctx, fp, th)
		if err != nil {
			t.Fatal(err)
		}
		matched := map[index.ContentID]index.Scores{}
		for _, m := range got {
			matched[m.Content] = m.Scores
		}
		ms, err := ix.Similar(ctx, r.ID, th)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if _, ok := seedOf[m.Record.Content]; !ok || m.Record.Content == r.Content {
				continue
			}
			if s, ok := matched[m.Record.Content]; !ok || s != m.Scores {
				t.Errorf("document %d: Similar reports seed content %d with %+v, the watchlist %+v (found %v)", i, m.Record.Content, m.Scores, s, ok)
			}
		}
		if g, k, ok := c.GroupOf(i); ok && k != 0 {
			seed, _ := ix.Get(ctx, id(c.Groups()[g].Seed))
			if _, ok := matched[seed.Content]; !ok {
				t.Errorf("document %d (%v of group %d) does not match its seed", i, k, g)
			}
		}
	}
}
