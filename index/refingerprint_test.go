package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
)

// v1Scheme is the scheme of testdata/v1-*.db: normal form 1 with the
// default options (testdata/v1-index.md).
const v1Scheme = 1484174564

// copyFixture copies testdata/name into a temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// documents returns the store's documents by id.
func documents(t *testing.T, st index.Store) map[index.DocID]*index.Record {
	t.Helper()
	docs := map[index.DocID]*index.Record{}
	if err := st.Documents(context.Background(), func(r *index.Record) error {
		docs[r.ID] = r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestRefingerprintOldIndex opens an index written by normal form 1
// (testdata/v1-index.md) with the current code: every content is
// fingerprinted again from its kept text, document ids are kept, the
// replies that quote a text at depths 1 to 3 become one content with it,
// and a text with no word is left with an error.
func TestRefingerprintOldIndex(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(map[bool]string{false: "anchors on disk", true: "anchors in memory"}[mem], func(t *testing.T) {
			refingerprintOldIndex(t, mem)
		})
	}
}

func refingerprintOldIndex(t *testing.T, anchorsInMemory bool) {
	ctx := context.Background()
	path := copyFixture(t, "v1-index.db")
	opts := index.DefaultOptions()
	opts.KeepText = true
	if opts.Scheme() == v1Scheme {
		t.Fatal("the scheme did not change with the normal form")
	}
	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal, AnchorsInMemory: anchorsInMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before := documents(t, st)
	if len(before) != 10 {
		t.Fatalf("fixture holds %d documents, want 10", len(before))
	}
	if _, err := st.Candidates(ctx, index.CandidateQuery{}); !errors.Is(err, index.ErrSchemeMismatch) {
		t.Fatalf("a stale store's Candidates: %v, want ErrSchemeMismatch", err)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()

	after := documents(t, st)
	for id, b := range before {
		a := after[id]
		if a == nil || a.Key != b.Key || a.Parent != b.Parent || a.RawSHA256 != b.RawSHA256 {
			t.Errorf("document %d: %+v after, %+v before", id, a, b)
		}
	}
	// Every content's fingerprint is that of its text in the new form.
	for id, r := range after {
		if r.Content == 0 {
			continue
		}
		text, err := st.Text(ctx, r.Content)
		if err != nil {
			t.Fatalf("document %d: %v", id, err)
		}
		want, err := ix.Fingerprint(r.RawSHA256, r.RawSize, text)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Fingerprints(ctx, []index.ContentID{r.Content}, func(_ index.ContentID, got *index.Fingerprint) error {
			if got.TextSHA256 != want.TextSHA256 || got.SimHash != want.SimHash || len(got.Samples) != len(want.Samples) ||
				len(got.Chunks) != len(want.Chunks) || got.MinHash[0] != want.MinHash[0] {
				t.Errorf("document %d: content %d has not been fingerprinted again", id, r.Content)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The excerpt, its copy and its quotations at depths 1, 2 and 3.
	for id := index.DocID(2); id <= 5; id++ {
		if after[id].Content != after[1].Content {
			t.Errorf("document %d (%s) has content %d, the excerpt %d", id, after[id].Key, after[id].Content, after[1].Content)
		}
	}
	if r := after[7]; r.Content != 0 || r.Error != index.ErrEmpty.Error() {
		t.Errorf("rules-only.txt: content %d, error %q; want none and %q", r.Content, r.Error, index.ErrEmpty)
	}
	if r := after[10]; r.Error != "malformed PDF" {
		t.Errorf("broken.pdf: error %q", r.Error)
	}
	matches, err := ix.Similar(ctx, 3, index.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	found := map[index.DocID]bool{}
	for _, m := range matches {
		found[m.Record.ID] = m.Exact
	}
	for _, id := range []index.DocID{1, 2, 4, 5} {
		if !found[id] {
			t.Errorf("the depth-1 reply's identical copies: %d missing from %v", id, found)
		}
	}
	if matches, err = ix.Similar(ctx, 6, index.DefaultThresholds()); err != nil || len(matches) != 1 || matches[0].Record.ID != 9 {
		t.Errorf("menu-policy.txt's near-copies: %v, %v; want document 9", matches, err)
	}
	if err := st.Check(ctx); err != nil {
		t.Fatalf("check after: %v", err)
	}

	// Opened again, nothing is left to do.
	ix.Close()
	st.Close()
	st2, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if n, err := st2.Refingerprint(ctx, nil); n != 0 || err != nil {
		t.Errorf("Refingerprint of a current store: %d, %v", n, err)
	}
}

// TestRefingerprintWithoutTexts checks that an index written by normal
// form 1 without its texts (index.keep_text off) is refused with an error
// naming both conditions, and left as it was.
func TestRefingerprintWithoutTexts(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "v1-notext.db")
	opts := index.DefaultOptions()
	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	_, err = index.New(ctx, st, opts)
	if !errors.Is(err, index.ErrSchemeMismatch) || !errors.Is(err, index.ErrNoText) {
		t.Fatalf("index.New: %v, want ErrSchemeMismatch and ErrNoText", err)
	}
	t.Log(err)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	old, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: v1Scheme, Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Candidates(ctx, index.CandidateQuery{}); err != nil {
		t.Fatalf("the index is no longer of its scheme: %v", err)
	}
	if err := old.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
