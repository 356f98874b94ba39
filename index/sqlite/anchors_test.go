package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

// anchorList reads key h's whole posting list.
func anchorList(t *testing.T, s *Store, h int64) []int64 {
	t.Helper()
	return anchorListLimit(t, s, h, 1<<30)
}

// readTx begins a read transaction; the caller rolls it back.
func readTx(t *testing.T, s *Store) *sql.Tx {
	t.Helper()
	tx, err := s.r.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func anchorListLimit(t *testing.T, s *Store, h int64, limit int) []int64 {
	t.Helper()
	ctx := context.Background()
	tx := readTx(t, s)
	defer tx.Rollback()
	lists, err := s.anchorLists(ctx, tx, s.over.start(s.now()), []int64{h}, limit)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, p := range lists[h] {
		if p.n != 2 { // every test document has two anchors
			t.Fatalf("content %d posted with %d anchors, want 2", p.c, p.n)
		}
		out = append(out, p.c)
	}
	return out
}

func blockRows(t *testing.T, s *Store, h int64) int {
	t.Helper()
	var n int
	if err := s.r.QueryRow("SELECT count(*) FROM anchor_blocks WHERE h = ?", h).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// putShared stores n documents from first on, each with the shared anchor
// sample and one of its own, in batches of batch documents.
func putShared(t *testing.T, s *Store, first, n, batch int, shared uint32) []index.ContentID {
	t.Helper()
	var out []index.ContentID
	for i := first; i < first+n; i += batch {
		var entries []index.Entry
		for j := i; j < min(i+batch, first+n); j++ {
			fp := storetest.Fingerprint(fmt.Sprintf("text %d", j), []uint64{uint64(j+1) << 40},
				[]uint32{uint32(j+1) * 2 * index.AnchorEvery, shared})
			entries = append(entries, index.Entry{Doc: index.Doc{Key: fmt.Sprintf("doc-%d", j)}, Fingerprint: fp, Parent: -1})
		}
		c, err := s.Put(context.Background(), entries)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range c {
			out = append(out, e.Content)
		}
	}
	return out
}

func ids(cs []index.ContentID) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = int64(c)
	}
	return out
}

func TestAnchorBlocks(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	const shared = 0x7000 * index.AnchorEvery
	h := postingKey(uint64(shared) << 32)
	// 150 in one transaction, then 150 one at a time: both append.
	want := ids(putShared(t, s, 0, 150, 150, shared))
	want = append(want, ids(putShared(t, s, 150, 150, 1, shared))...)
	if got := anchorList(t, s, h); !slices.Equal(got, want) {
		t.Fatalf("list of 300 contents: got %d ids %v..., want %v...", len(got), got[:min(5, len(got))], want[:5])
	}
	if n := blockRows(t, s, h); n != (300+anchorBlockIDs-1)/anchorBlockIDs {
		t.Errorf("300 postings in %d blocks, want %d", n, (300+anchorBlockIDs-1)/anchorBlockIDs)
	}
	// A limit stops reading: more than limit ids come back, and the key
	// is then known to be overfull.
	if got := anchorListLimit(t, s, h, 10); len(got) <= 10 {
		t.Errorf("limit 10: %d ids, want more than 10", len(got))
	}
	if got := anchorListLimit(t, s, h, 10); got != nil {
		t.Errorf("limit 10 again: %d ids, want the key skipped", len(got))
	}

	// Removing the first id of a block, one inside, and a whole block.
	removed := []int{0, 100}
	for i := 128; i < 192; i++ {
		removed = append(removed, i)
	}
	for _, i := range removed {
		if _, err := s.Remove(ctx, fmt.Sprintf("doc-%d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	var left []int64
	for i, c := range want {
		if !slices.Contains(removed, i) {
			left = append(left, c)
		}
	}
	if got := anchorList(t, s, h); !slices.Equal(got, left) {
		t.Fatalf("after removals: %d ids, want %d", len(got), len(left))
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}

	// Out of order, into a full block: it splits.
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	const other = 99
	var rows []posting
	for _, c := range left[1 : 1+anchorBlockIDs] {
		rows = append(rows, posting{other, c, 2})
	}
	if err := addAnchorPostings(ctx, &txStmts{tx: tx}, rows); err != nil {
		t.Fatal(err)
	}
	if err := addAnchorPostings(ctx, &txStmts{tx: tx}, []posting{{other, left[0], 2}, {other, left[40], 2}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := anchorList(t, s, other), left[:1+anchorBlockIDs]; !slices.Equal(got, want) {
		t.Fatalf("out-of-order inserts: got %v, want %v", got, want)
	}
	if n := blockRows(t, s, other); n != 2 {
		t.Errorf("%d ids in %d blocks, want 2 after a split", anchorBlockIDs+1, n)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAnchorListsThroughSparseBlocks thins blocks by removals until the
// blocks one statement reads for a key hold fewer postings than the limit
// although the key holds more: the key is read again to the end.
func TestAnchorListsThroughSparseBlocks(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	const shared = 0x7100 * index.AnchorEvery
	h := postingKey(uint64(shared) << 32)
	all := ids(putShared(t, s, 0, 5*anchorBlockIDs, 5*anchorBlockIDs, shared))
	var left []int64
	for i, c := range all {
		if i%anchorBlockIDs < 4 {
			left = append(left, c)
			continue
		}
		if _, err := s.Remove(ctx, fmt.Sprintf("doc-%d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := blockRows(t, s, h); n != 5 {
		t.Fatalf("%d blocks, want 5 of 4 postings", n)
	}
	// A limit of 10 reads 10/64+2 = 2 blocks at once: 8 postings.
	if got := anchorListLimit(t, s, h, 10); len(got) <= 10 || !slices.Equal(got, left[:len(got)]) {
		t.Errorf("limit 10 over sparse blocks: got %v, want more than 10 of %v", got, left)
	}
	if got := anchorList(t, s, h); !slices.Equal(got, left) {
		t.Errorf("whole list: got %v, want %v", got, left)
	}
}

// TestMigrateToAnchorBlocks opens a schema-3 store, whose anchors are one
// row per posting, and finds the same postings in blocks.
func TestMigrateToAnchorBlocks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	const shared = 0x7000 * index.AnchorEvery
	h := postingKey(uint64(shared) << 32)
	want := ids(putShared(t, s, 0, 200, 50, shared))
	// Back to schema 3.
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE sample_postings (h INTEGER NOT NULL, c INTEGER NOT NULL, PRIMARY KEY (h, c)) WITHOUT ROWID`); err != nil {
		t.Fatal(err)
	}
	rows, err := s.w.QueryContext(ctx, "SELECT h, first, n, ids FROM anchor_blocks")
	if err != nil {
		t.Fatal(err)
	}
	var all []*block
	for rows.Next() {
		b, err := scanBlock(rows)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b)
	}
	rows.Close()
	for _, b := range all {
		for _, p := range b.ps {
			if _, err := s.w.ExecContext(ctx, "INSERT INTO sample_postings (h, c) VALUES (?, ?)", b.h, p.c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.w.ExecContext(ctx, "DROP TABLE band_shares; DROP TABLE anchor_blocks; DROP INDEX contents_simhash; PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	var logged bytes.Buffer
	s, err = Open(ctx, path, Options{Scheme: 1, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.Contains(logged.String(), `msg="migrated index schema"`) || !strings.Contains(logged.String(), "to=4") {
		t.Errorf("the migration was not logged:\n%s", logged.String())
	}
	var v int
	if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion)
	}
	if got := anchorList(t, s, h); !slices.Equal(got, want) {
		t.Fatalf("migrated list: %d ids, want %d", len(got), len(want))
	}
	var old int
	if err := s.r.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'sample_postings'").Scan(&old); err != nil || old != 0 {
		t.Errorf("sample_postings still there (%d, %v)", old, err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFindsBadAnchorBlock(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	putShared(t, s, 0, 3, 3, 0x7000*index.AnchorEvery)
	if _, err := s.w.ExecContext(ctx, "UPDATE anchor_blocks SET n = n + 1 WHERE n > 1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err == nil {
		t.Fatal("Check passed a block whose count disagrees with its ids")
	}
}

func FuzzDecodeBlock(f *testing.F) {
	f.Add(int64(7), 3, encodeBlock([]anchorPosting{{7, 2}, {9, 0}, {300, 1000}}))
	f.Add(int64(1), 1, []byte{0})
	f.Add(int64(1), 2, []byte{0x80})
	f.Fuzz(func(t *testing.T, first int64, n int, data []byte) {
		got, err := decodeBlock(nil, first, n, data)
		if err != nil {
			return
		}
		if len(got) != n || got[0].c != first {
			t.Fatalf("decoded %d postings from %d, want %d", len(got), first, n)
		}
		for i := 1; i < len(got); i++ {
			if got[i].c <= got[i-1].c {
				t.Fatalf("ids do not ascend: %v", got)
			}
		}
		if !bytes.Equal(encodeBlock(got), data) {
			t.Fatalf("re-encoded %x, decoded from %x", encodeBlock(got), data)
		}
	})
}

func TestSharedAnchors(t *testing.T) {
	lists := map[int64][]anchorPosting{
		1: {{3, 2}, {7, 5}},
		2: {{3, 2}, {5, 1 << 20}},
		3: {{1, 1}, {2, 1}, {3, 2}}, // longer than maxDocs: left out
	}
	want := []anchorPosting{{3, 2}, {3, 2}, {5, 1 << 20}, {7, 5}}
	if got := sharedAnchors(lists, 2); !slices.Equal(got, want) {
		t.Errorf("packed: got %v, want %v", got, want)
	}
	// An id too large to pack with its count: sorted all the same.
	big := int64(1) << 50
	lists[2] = append(lists[2], anchorPosting{big, 9})
	want = []anchorPosting{{1, 1}, {2, 1}, {3, 2}, {3, 2}, {3, 2}, {5, 1 << 20}, {7, 5}, {big, 9}}
	if got := sharedAnchors(lists, 3); !slices.Equal(got, want) {
		t.Errorf("unpacked: got %v, want %v", got, want)
	}
}

// TestRadixSortAbove: sorting by the bits above lo is a stable sort on
// them, whatever the number of passes.
func TestRadixSortAbove(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, width := range []int{0, 1, 5, 11, 12, 20, 39} {
		for _, n := range []int{0, 1, 2, 100, 5000} {
			keys := make([]int64, n)
			for i := range keys {
				keys[i] = r.Int64N(1<<width)<<24 | int64(i) // low bits: the original position
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, func(a, b int64) int { return cmp.Compare(a>>24, b>>24) })
			if got := radixSortAbove(keys, make([]int64, n), 24, width); !slices.Equal(got, want) {
				t.Fatalf("width %d, %d keys: not sorted stably", width, n)
			}
		}
	}
}
