package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

// TestSimilarToObjectComparesEachPart: an uploaded file is compared by its
// own text (Path nil) and by each member with text (Path from the top);
// nothing is stored; a file with no text fails with index.ErrEmpty.
func TestSimilarToObjectComparesEachPart(t *testing.T) {
	ctx := context.Background()
	opts := index.DefaultOptions()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"), sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close(); st.Close() })
	ex, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("The licensee may copy and distribute the work in any medium. ", 30)
	if _, err := ingest.New(ex, ix).Ingest(ctx, ingest.Object{Key: "test:stored.txt", Name: "stored.txt", Source: "test", Body: strings.NewReader(text)}); err != nil {
		t.Fatal(err)
	}
	similar := func(name string, body []byte) ([]ingest.Part, error) {
		return ingest.SimilarToObject(ctx, ix, ex, extract.Object{Name: name, Reader: bytes.NewReader(body)}, opts.Thresholds)
	}

	parts, err := similar("draft.txt", []byte(strings.Replace(text, "medium", "form", 3)))
	if err != nil || len(parts) != 1 || parts[0].Path != nil || len(parts[0].Matches) != 1 || parts[0].Matches[0].Record.Name != "stored.txt" {
		t.Fatalf("a near-copy: %+v, %v; want one part (the file, Path nil) matching stored.txt", parts, err)
	}

	memo := strings.Repeat("Quarterly figures for the north region were flat. ", 40)
	parts, err = similar("bundle.zip", zipOf(t, map[string]string{"copy.txt": text, "memo.txt": memo}))
	if err != nil || len(parts) != 2 {
		t.Fatalf("a zip of two texts: %+v, %v; want a part for each member", parts, err)
	}
	slices.SortFunc(parts, func(a, b ingest.Part) int {
		return strings.Compare(strings.Join(a.Path, "/"), strings.Join(b.Path, "/"))
	})
	if got := strings.Join(parts[0].Path, "/"); got != "bundle.zip/copy.txt" || len(parts[0].Matches) != 1 || !parts[0].Matches[0].SameBytes {
		t.Errorf("the copied member: path %q, matches %+v; want bundle.zip/copy.txt, the stored file byte for byte", got, parts[0].Matches)
	}
	if got := strings.Join(parts[1].Path, "/"); got != "bundle.zip/memo.txt" || len(parts[1].Matches) != 0 {
		t.Errorf("the unrelated member: path %q, matches %+v; want bundle.zip/memo.txt, none", got, parts[1].Matches)
	}

	if stats, err := st.Stats(ctx); err != nil || stats.Documents != 1 {
		t.Errorf("documents stored: %+v, %v; want only the first (comparing stores nothing)", stats, err)
	}
	if _, err := similar("blank.txt", []byte("   \n")); !errors.Is(err, index.ErrEmpty) {
		t.Errorf("a file with no text: %v, want index.ErrEmpty", err)
	}
}
