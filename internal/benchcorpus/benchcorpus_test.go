package benchcorpus

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/corpustest"
)

func TestTextIsDeterministic(t *testing.T) {
	a, err := New(Spec{Docs: 2000, Sources: corpustest.Fixtures()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Spec{Docs: 2000, Sources: corpustest.Fixtures()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(Spec{Docs: 2000, Seed: 2, Sources: corpustest.Fixtures()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(a.Groups(), b.Groups(), func(x, y Group) bool { return x.Seed == y.Seed && slices.Equal(x.Members, y.Members) }) {
		t.Fatal("two corpora of one spec planted different groups")
	}
	for _, i := range []int{0, 1, 999, 1999, 2000, 50_000} {
		ta, tb := a.Text(i), b.Text(i)
		if !bytes.Equal(ta, tb) {
			t.Fatalf("document %d differs between two corpora of one spec", i)
		}
		if bytes.Equal(ta, other.Text(i)) {
			t.Fatalf("document %d is the same under another seed", i)
		}
		if len(ta) < minSize {
			t.Fatalf("document %d is %d bytes, below %d", i, len(ta), minSize)
		}
	}
}

func TestLayout(t *testing.T) {
	c, err := New(Spec{Docs: 10_000, Sources: corpustest.Fixtures()})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Groups()); got != 200 {
		t.Fatalf("%d groups, want one per 50 documents", got)
	}
	seen := map[int]bool{}
	kinds := map[Kind]int{}
	for gi, g := range c.Groups() {
		docs := []int{g.Seed}
		for _, m := range g.Members {
			docs = append(docs, m.Doc)
			kinds[m.Kind]++
		}
		if !slices.IsSorted(docs) {
			t.Fatalf("group %d is not in document order: %v", gi, docs)
		}
		for j, d := range docs {
			if seen[d] {
				t.Fatalf("document %d planted twice", d)
			}
			seen[d] = true
			g2, k, ok := c.GroupOf(d)
			if !ok || g2 != gi || (j == 0) != (k == 0) {
				t.Fatalf("GroupOf(%d) = %d, %v, %v; want group %d", d, g2, k, ok, gi)
			}
		}
	}
	for _, k := range []Kind{Edited, Excerpt, Superset, Exact, SameBytes} {
		if kinds[k] == 0 {
			t.Errorf("no member of kind %v", k)
		}
	}
	if err := (Spec{Docs: 100, Groups: 50}).Validate(); err == nil {
		t.Error("50 groups of up to 9 documents fit in 100 documents")
	}
}

// TestFixtureRecall builds a small fixture and checks the ground truth:
// "all versions" of every seed lists every planted member with the
// relation its kind promises, and almost nothing else.
func TestFixtureRecall(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Docs: 1500, Sources: corpustest.Fixtures()}
	f := ensureTemp(t, spec)
	ix, st, err := f.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Documents != int64(spec.Docs) {
		t.Fatalf("fixture holds %d documents, want %d", stats.Documents, spec.Docs)
	}
	for _, i := range []int{0, 1, 1499} {
		r, err := st.Get(ctx, f.ID(i))
		if err != nil || r.Key != f.Corpus.Key(i) {
			t.Fatalf("document %d: id %d is %v, %v", i, f.ID(i), r, err)
		}
	}
	missed, extra := 0, 0
	for gi, g := range f.Corpus.Groups() {
		ms, err := ix.Similar(ctx, f.ID(g.Seed), index.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		found := map[index.DocID]index.Match{}
		for _, m := range ms {
			found[m.Record.ID] = m
		}
		for _, m := range g.Members {
			got, ok := found[f.ID(m.Doc)]
			if !ok {
				missed++
				t.Errorf("group %d: %v member %d not found from its seed", gi, m.Kind, m.Doc)
				continue
			}
			delete(found, f.ID(m.Doc))
			switch {
			case m.Kind == SameBytes && !got.SameBytes,
				m.Kind == Exact && (!got.Exact || got.SameBytes),
				m.Kind == Excerpt && got.ContainmentBA < 0.8,
				m.Kind == Superset && got.ContainmentAB < 0.8,
				m.Kind == Edited && got.Resemblance < 0.5:
				t.Errorf("group %d: %v member %d scores %+v, same bytes %v", gi, m.Kind, m.Doc, got.Scores, got.SameBytes)
			}
		}
		extra += len(found)
	}
	if err := errors.Join(ix.Close(), st.Close()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d groups: %d members missed, %d unplanted matches", len(f.Corpus.Groups()), missed, extra)
	if extra > len(f.Corpus.Groups())/20 {
		t.Errorf("%d unplanted matches: unrelated documents are too alike", extra)
	}
}

// TestFixtureCache checks that Ensure reuses a fresh fixture and rebuilds
// a stale one.
func TestFixtureCache(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Docs: 200, Sources: corpustest.Fixtures()}
	f := ensureTemp(t, spec)
	again, err := Ensure(ctx, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Marker.Built.Equal(f.Marker.Built) || again.Marker.BuildSeconds != f.Marker.BuildSeconds || again.ID(7) != f.ID(7) {
		t.Fatal("a fresh fixture was not reused")
	}
	m := f.Marker
	m.Generator = Generator - 1
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(f.Dir, "marker.json"), b, 0o640); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := Ensure(ctx, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt.Marker.Generator != Generator || rebuilt.Marker.BuildSeconds == m.BuildSeconds {
		t.Fatalf("a stale fixture was reused: %+v", rebuilt.Marker)
	}
}

// BenchmarkBuild measures how fast Build indexes documents into a new
// store: SIMDEX_BENCHCORPUS_DOCS documents (default 20,000) per op.
func BenchmarkBuild(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("SIMDEX_BENCHCORPUS_DOCS")); err == nil && v > 0 {
		n = v
	}
	c, err := New(Spec{Docs: n})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var rate float64
	for b.Loop() {
		m, _, err := Build(ctx, c, filepath.Join(b.TempDir(), "index.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		rate = m.DocsPerSecond
	}
	b.ReportMetric(rate, "docs/s")
}

// TestFixtureMigratedInPlace checks that a fixture built with an older
// store schema is migrated, not rebuilt.
func TestFixtureMigratedInPlace(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Docs: 200, Sources: corpustest.Fixtures()}
	f := ensureTemp(t, spec)
	// Back to schema 3 in form (its anchor postings are not carried back:
	// this test is about the cache, the store's own tests about the data).
	db, err := sql.Open("sqlite", "file:"+f.Path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`DROP TABLE band_shares; DROP TABLE anchor_blocks; DROP INDEX contents_simhash; DELETE FROM meta WHERE key = 'anchors_gen';
		CREATE TABLE sample_postings (h INTEGER NOT NULL, c INTEGER NOT NULL, PRIMARY KEY (h, c)) WITHOUT ROWID;
		PRAGMA user_version = 3`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := f.Marker
	m.StoreSchema = 3
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(f.Dir, "marker.json"), b, 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := Ensure(ctx, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Marker.BuildSeconds != f.Marker.BuildSeconds || got.Marker.MigratedFrom != 3 || got.Marker.StoreSchema != f.Marker.StoreSchema {
		t.Fatalf("fixture of schema 3 not migrated in place: %+v", got.Marker)
	}
}

// ensureTemp builds the fixture of spec in a cache of the test's own.
func ensureTemp(t *testing.T, spec Spec) *Fixture {
	t.Helper()
	t.Setenv("SIMDEX_CACHE", t.TempDir())
	f, err := Ensure(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
