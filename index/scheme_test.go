package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
)

// schemeTexts are a long text, a near copy of it and an excerpt of it.
func schemeTexts() []string {
	r := rand.New(rand.NewPCG(5, 6))
	w := make([]string, 12000)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", r.IntN(5000))
	}
	edited := append([]string(nil), w...)
	for i := 0; i < 40; i++ {
		edited[r.IntN(len(edited))] = "changed"
	}
	return []string{strings.Join(w, " "), strings.Join(edited, " "), strings.Join(w[3000:3400], " ")}
}

// openScheme opens the index at path as the daemon and a scan do: with
// opts, or with the options of the scheme the file records
// (index.Options.ForScheme).
func openScheme(t *testing.T, path string, opts index.Options) (*index.Index, index.Options) {
	t.Helper()
	ctx := context.Background()
	recorded, err := sqlite.RecordedScheme(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	opts = opts.ForScheme(recorded)
	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close(); st.Close() })
	return ix, opts
}

// checkVersions adds the texts under keys prefix+i and checks that the
// first text's versions are the other two, the excerpt contained.
func checkVersions(t *testing.T, ix *index.Index, prefix string) {
	t.Helper()
	ctx := context.Background()
	var in []index.Input
	for i, text := range schemeTexts() {
		in = append(in, index.Input{Doc: index.Doc{Key: fmt.Sprintf("%s%d", prefix, i)}, Text: []byte(text), Parent: -1})
	}
	res, err := ix.Add(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ix.Similar(ctx, res[0].ID, index.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	found := map[index.DocID]index.Scores{}
	for _, m := range ms {
		found[m.Record.ID] = m.Scores
	}
	if s, ok := found[res[1].ID]; !ok || s.Resemblance < 0.8 {
		t.Errorf("near copy: %+v (found %v)", s, ok)
	}
	if s, ok := found[res[2].ID]; !ok || s.ContainmentBA < 0.9 {
		t.Errorf("excerpt: %+v (found %v)", s, ok)
	}
}

// TestOldIndexKeepsItsScheme opens an index built with 32-bit MinHash and
// every Mod-16 sample, without kept texts, with options that would make
// new indexes with 16 bits and a sampling floor: it keeps its scheme
// (fingerprinting it again would be impossible without texts), answers
// and takes new documents. A new index gets the new scheme.
func TestOldIndexKeepsItsScheme(t *testing.T) {
	old := index.DefaultOptions()
	old.Sketch.MinHashBits, old.Sketch.SampleFloor = 32, 0
	next := old
	next.Sketch.MinHashBits, next.Sketch.SampleFloor = 16, 256
	dir := t.TempDir()
	path := filepath.Join(dir, "old.db")
	ix, _ := openScheme(t, path, old)
	checkVersions(t, ix, "before/")
	ix.Close()

	ix, got := openScheme(t, path, next)
	if got.Scheme() != old.Scheme() {
		t.Fatalf("reopened with scheme %d, want the recorded %d", got.Scheme(), old.Scheme())
	}
	checkVersions(t, ix, "after/")

	ix, got = openScheme(t, filepath.Join(dir, "new.db"), next)
	if got.Scheme() != next.Scheme() {
		t.Fatalf("new index with scheme %d, want %d", got.Scheme(), next.Scheme())
	}
	checkVersions(t, ix, "new/")
}

// TestForScheme: only the later sketch parameters fall back to their
// older values; any other difference leaves the options as given.
func TestForScheme(t *testing.T) {
	next := index.DefaultOptions()
	next.Sketch.MinHashBits, next.Sketch.SampleFloor = 16, 128
	for name, tc := range map[string]struct {
		recorded func(*index.Options)
		want     func(*index.Options)
	}{
		"same":         {func(*index.Options) {}, func(*index.Options) {}},
		"32 bits":      {func(o *index.Options) { o.Sketch.MinHashBits = 32 }, func(o *index.Options) { o.Sketch.MinHashBits = 32 }},
		"no floor":     {func(o *index.Options) { o.Sketch.SampleFloor = 0 }, func(o *index.Options) { o.Sketch.SampleFloor = 0 }},
		"neither":      {func(o *index.Options) { o.Sketch.MinHashBits, o.Sketch.SampleFloor = 0, 0 }, func(o *index.Options) { o.Sketch.MinHashBits, o.Sketch.SampleFloor = 32, 0 }},
		"other window": {func(o *index.Options) { o.Sketch.Window = 12 }, func(*index.Options) {}},
	} {
		t.Run(name, func(t *testing.T) {
			rec, want := next, next
			tc.recorded(&rec)
			tc.want(&want)
			if got := next.ForScheme(rec.Scheme()); got.Scheme() != want.Scheme() {
				t.Errorf("scheme %d, want %d", got.Scheme(), want.Scheme())
			}
		})
	}
	if got := next.ForScheme(0); got.Scheme() != next.Scheme() {
		t.Error("a new index does not get the options given")
	}
}
