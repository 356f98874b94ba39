package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

// viewDocs returns n entries from first on whose chunks, anchors and bands
// are shared by groups of every size: a chunk of each content's own, one
// of a third of them, one of four, and one of all, twice in each; anchors
// likewise; half the bands shared.
func viewDocs(first, n int) []index.Entry {
	var out []index.Entry
	for i := first; i < first+n; i++ {
		chunks := []uint64{uint64(i+1) << 40, uint64(100_000+i%3) << 40, uint64(200_000+i/4) << 40, 300_000 << 40, 300_000 << 40}
		samples := []uint32{1, 3, 8 * uint32(1000+i%5), 8 * 5000, 8 * uint32(10_000+i), 8*uint32(20_000+i/3) + 1}
		slices.Sort(samples)
		bands := make([]uint64, 8)
		for b := range bands {
			bands[b] = uint64((i*7+b*13)%90+1) << 40
			if b%2 == 1 {
				bands[b] = uint64(1_000_000+i*8+b) << 40
			}
		}
		out = append(out, index.Entry{Doc: index.Doc{Key: fmt.Sprintf("doc-%d", i)},
			Fingerprint: storetest.Fingerprint(fmt.Sprintf("text %d", i), chunks, samples), Bands: bands, Parent: -1})
	}
	return out
}

// openBulk opens a store for a bulk load at path, closed when t ends.
func openBulk(t *testing.T, path string) *Loader {
	t.Helper()
	s, err := OpenLoader(context.Background(), path, Options{Scheme: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func putEntries(t *testing.T, s tested, entries []index.Entry, batch int) {
	t.Helper()
	for part := range slices.Chunk(entries, batch) {
		if _, err := s.Put(context.Background(), part); err != nil {
			t.Fatal(err)
		}
	}
}

// groupingAnswers returns what Groups, AnchorGroups and ChunkContents
// answer about entries, with small limits and large ones, for every
// content and for some.
func groupingAnswers(t *testing.T, s tested, entries []index.Entry) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, of := range [][]index.ContentID{nil, {2, 7}} {
		for _, limit := range []int{3, 1000} {
			err := s.Groups(ctx, limit, of, func(ids []index.ContentID) error {
				out = append(out, fmt.Sprintf("groups of %v limit %d: %v", of, limit, ids))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = s.AnchorGroups(ctx, limit, of, func(ids []index.ContentID, ns []int) error {
				out = append(out, fmt.Sprintf("anchor groups of %v limit %d: %v %v", of, limit, ids, ns))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var hashes []uint64
	for _, e := range entries {
		for _, c := range e.Fingerprint.Chunks {
			hashes = append(hashes, c.Hash)
		}
	}
	hashes = append(hashes, 999_999<<40) // held by none
	counts, err := s.ChunkContents(ctx, hashes)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes {
		out = append(out, fmt.Sprintf("chunk %x: %d", h, counts[h]))
	}
	return out
}

// After a bulk load into an empty index, SettlePostings leaves the
// postings in memory, where the grouping reads find what the tables of a
// load that posted at each commit answer; a write drops them, the next
// SettlePostings keeps them again, and a read that only the tables answer
// gets them inserted.
func TestBulkViewAnswersAsTheTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var logged bytes.Buffer
	immediate := open(t, filepath.Join(dir, "immediate.db"), 1)
	bulk, err := OpenLoader(ctx, filepath.Join(dir, "bulk.db"), Options{Scheme: 1,
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer bulk.Close()
	entries := viewDocs(0, 40)
	putEntries(t, immediate, entries, 7)
	putEntries(t, bulk, entries, 7)

	if err := bulk.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "kept the postings of a bulk load in memory") || bulk.view.Load() == nil {
		t.Fatalf("postings not kept in memory (log: %s)", logged.String())
	}
	if n, rows := pendingCount(t, bulk), len(dumpPostings(t, bulk)); n != len(entries) || rows != 0 {
		t.Fatalf("after SettlePostings: %d contents pending, %d posting rows; want %d and none", n, rows, len(entries))
	}
	want := groupingAnswers(t, immediate, entries)
	if got := groupingAnswers(t, bulk, entries); !slices.Equal(got, want) {
		t.Fatalf("the view answers\n%s\nthe tables\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A put drops the view; SettlePostings keeps the postings again,
	// the new ones with them.
	late := viewDocs(40, 5)
	putEntries(t, immediate, late, 2)
	putEntries(t, bulk, late, 2)
	if bulk.view.Load() != nil {
		t.Fatal("the view outlived a put")
	}
	if err := bulk.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	if bulk.view.Load() == nil {
		t.Fatal("postings not kept in memory after a second SettlePostings")
	}
	all := append(slices.Clone(entries), late...)
	want = groupingAnswers(t, immediate, all)
	if got := groupingAnswers(t, bulk, all); !slices.Equal(got, want) {
		t.Fatalf("the view after a put answers\n%s\nthe tables\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Candidates reads the tables: the postings are inserted first.
	got, err := bulk.Candidates(ctx, index.CandidateQuery{Bands: late[0].Bands, MaxChunkDocs: 100})
	if err != nil || !slices.Contains(got, 41) {
		t.Fatalf("candidates of a late document: %v, %v; want content 41 among them", got, err)
	}
	if n := pendingCount(t, bulk); n != 0 {
		t.Fatalf("%d contents still pending after a read of the tables", n)
	}
	if got, want := dumpPostings(t, bulk), dumpPostings(t, immediate); !slices.Equal(got, want) {
		t.Fatalf("postings inserted from the view differ from immediate ones:\n%v\nwant\n%v", got, want)
	}
	// Inserted from memory, the postings are the tables': the view stays,
	// and answers as the tables do without it.
	if bulk.view.Load() == nil {
		t.Fatal("the view was dropped when its postings were inserted")
	}
	if got := groupingAnswers(t, bulk, all); !slices.Equal(got, want) {
		t.Fatal("the view answers otherwise once its postings are inserted")
	}
	bulk.dropView()
	if got := groupingAnswers(t, bulk, all); !slices.Equal(got, want) {
		t.Fatal("the tables answer otherwise once the view's postings are inserted")
	}
	if err := bulk.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// Close inserts the postings of a view, as it does a bulk load's.
func TestBulkViewSettledAtClose(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bulk.db")
	bulk := openBulk(t, path)
	entries := viewDocs(0, 30)
	putEntries(t, bulk, entries, 4)
	if err := bulk.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bulk.Close(); err != nil {
		t.Fatal(err)
	}
	immediate := open(t, filepath.Join(t.TempDir(), "immediate.db"), 1)
	putEntries(t, immediate, entries, 4)
	reopened := open(t, path, 1)
	if n := pendingCount(t, reopened); n != 0 {
		t.Fatalf("%d contents pending after Close", n)
	}
	if got, want := dumpPostings(t, reopened), dumpPostings(t, immediate); !slices.Equal(got, want) {
		t.Fatalf("postings inserted at Close differ from immediate ones:\n%v\nwant\n%v", got, want)
	}
	if err := reopened.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// Another process that adds a content while a view is kept is noticed by
// the next grouping read, which the tables then answer, the new content
// with the rest.
func TestBulkViewDroppedWhenAnotherProcessWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	bulk := openBulk(t, path)
	putEntries(t, bulk, viewDocs(0, 20), 5)
	if err := bulk.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	if bulk.view.Load() == nil {
		t.Fatal("postings not kept in memory")
	}
	other := open(t, path, 1) // posts what is pending, as after a crash
	putEntries(t, other, viewDocs(20, 1), 1)
	found := false
	err := bulk.Groups(ctx, 1000, nil, func(ids []index.ContentID) error {
		found = found || slices.Contains(ids, 21)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found || bulk.view.Load() != nil {
		t.Fatalf("another process's content grouped: %v, view kept: %v; want it grouped and the view dropped", found, bulk.view.Load() != nil)
	}
}
