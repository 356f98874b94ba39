package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
)

// dumpPostings returns every posting row of s, table by table.
func dumpPostings(t *testing.T, s tested) []string {
	t.Helper()
	return dumpRows(t, s,
		"SELECT 'chunk', h, c, 0, x'' FROM chunk_postings ORDER BY h, c",
		"SELECT 'band', h, c, 0, x'' FROM band_postings ORDER BY h, c",
		"SELECT 'anchor', h, first, n, ids FROM anchor_blocks ORDER BY h, first")
}

// dumpRows returns the rows queries read from s, each printed.
func dumpRows(t *testing.T, s tested, queries ...string) []string {
	t.Helper()
	var out []string
	for _, q := range queries {
		rows, err := s.raw().r.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func pendingCount(t *testing.T, s tested) int {
	t.Helper()
	var n int
	if err := s.raw().r.QueryRow("SELECT count(*) FROM pending_postings").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A bulk load into an empty index that defers its postings ends with the
// posting tables a load posting at each commit makes, row for row: posted
// from memory, also after a put that failed, and from the database when
// some of its contents were replaced before they were posted.
func TestDeferredPostingsMatchImmediate(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(fmt.Sprintf("replace=%v", replace), func(t *testing.T) {
			testDeferredPostingsMatchImmediate(t, replace)
		})
	}
}

func testDeferredPostingsMatchImmediate(t *testing.T, replace bool) {
	ctx := context.Background()
	dir := t.TempDir()
	var logged bytes.Buffer
	load := func(name string, deferred bool) tested {
		opts := Options{Scheme: 1, Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		var s tested
		var err error
		if deferred {
			s, err = OpenLoader(ctx, filepath.Join(dir, name), opts)
		} else {
			s, err = Open(ctx, filepath.Join(dir, name), opts)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		putBandDocs(t, s, 60, 7)
		// A put that fails after storing a content: nothing of it stays.
		failed := []index.Entry{bandDoc("failed", "failed text", 8<<40), bandDoc("child", "child text", 9<<40)}
		failed[1].Parent = 5
		if _, err := s.Put(ctx, failed); err == nil {
			t.Fatal("a put whose entry's parent comes after it succeeded")
		}
		if replace {
			// New versions of two keys: their first contents are
			// released (still pending in the deferred load), and one
			// text is shared.
			// (Versions of their own: the same key and version is the
			// same document, put again, and changes nothing.)
			again := []index.Entry{bandDoc("doc-3", "text 3, edited", 5<<40, 6<<40), bandDoc("doc-4", "text 5", 7<<40)}
			for i := range again {
				again[i].Doc.VersionID = "v2"
			}
			out, err := s.Put(ctx, again)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range out {
				if c.Duplicate || len(c.Replaced) != 1 {
					t.Fatalf("entry %d: %+v, want a new version replacing one", i, c)
				}
			}
		}
		return s
	}
	immediate, bulk := load("immediate.db", false), load("bulk.db", true).(*Loader)
	if n := pendingCount(t, bulk); n == 0 {
		t.Fatal("the bulk load deferred no postings")
	}
	if n := len(dumpPostings(t, bulk)); n != 0 {
		t.Fatalf("the bulk load wrote %d posting rows before settling", n)
	}
	// Contents not posted yet are not checked for postings.
	if err := bulk.Check(ctx); err != nil {
		t.Fatal(err)
	}
	logged.Reset()
	// (SettlePostings would keep them in memory: bulkview_test.go.)
	if err := bulk.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if fromMemory := strings.Contains(logged.String(), "from=memory"); fromMemory == replace {
		t.Errorf("postings settled from memory: %v, want %v (log: %s)", fromMemory, !replace, logged.String())
	}
	if n := pendingCount(t, bulk); n != 0 {
		t.Fatalf("%d contents still pending after settling", n)
	}
	got, want := dumpPostings(t, bulk), dumpPostings(t, immediate)
	if !slices.Equal(got, want) {
		t.Fatalf("deferred postings differ from immediate ones:\n%v\nwant\n%v", got, want)
	}
	// Documents put after settling are deferred and settled again, from
	// memory.
	late := []index.Entry{bandDoc("late", "late text", 5<<40, 99<<40)}
	for _, s := range []tested{immediate, bulk} {
		if _, err := s.Put(ctx, late); err != nil {
			t.Fatal(err)
		}
	}
	logged.Reset()
	if err := bulk.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "from=memory") {
		t.Errorf("postings put after a settlement not settled from memory (log: %s)", logged.String())
	}
	if got, want := dumpPostings(t, bulk), dumpPostings(t, immediate); !slices.Equal(got, want) {
		t.Fatalf("postings settled again differ from immediate ones:\n%v\nwant\n%v", got, want)
	}
	for _, s := range []tested{immediate, bulk} {
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A posting's key is 31 bits: sorting by key stably keeps postings added
// in content order in (key, content) order, as the comparison sort does.
func TestSortPostingsByKey(t *testing.T) {
	var (
		rows   []posting
		blocks [][]posting
	)
	for c := int64(1); c <= 500; c++ {
		if c%60 == 1 {
			blocks = append(blocks, nil)
		}
		for k := range 40 {
			h := (c*7919 + int64(k)*104729) % (1 << 31)
			if k%9 == 0 {
				h = int64(k) << 20 // shared by many contents
			}
			rows = append(rows, posting{h: h, c: c, n: int32(c % 7)})
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], rows[len(rows)-1])
		}
	}
	want := slices.Clone(rows)
	slices.SortStableFunc(want, func(a, b posting) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.c, b.c)) })
	if got := sortPostingsByKey(blocks); !slices.Equal(got, want) {
		t.Error("radix-sorted postings differ from comparison-sorted ones")
	}
}

// Postings are deferred only into an empty index: documents put into a
// live one are found as soon as they are committed.
func TestDeferredPostingsOnlyIntoAnEmptyIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	first := open(t, path, 1)
	putBandDocs(t, first, 3, 3)
	first.Close()
	s, err := OpenLoader(ctx, path, Options{Scheme: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	late := bandDoc("late", "late text", 99<<40)
	if _, err := s.Put(ctx, []index.Entry{late}); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, s); n != 0 {
		t.Fatalf("%d contents pending in an index that held contents at open", n)
	}
	got, err := s.Candidates(ctx, index.CandidateQuery{Bands: late.Bands, MaxChunkDocs: 100})
	if err != nil || len(got) != 1 {
		t.Fatalf("the late document's band finds %v, %v: want it", got, err)
	}
}

// A bulk load that dies before settling leaves its contents pending; the
// next open posts them, whoever opens the index.
func TestDeferredPostingsPostedAtNextOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	bulk, err := OpenLoader(ctx, path, Options{Scheme: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer bulk.Close()
	entries := putBandDocs(t, bulk, 20, 5)
	// Another process opens the index meanwhile (as one would after the
	// load crashed): it posts what is pending.
	other := open(t, path, 1)
	if n := pendingCount(t, other); n != 0 {
		t.Fatalf("%d contents still pending after another store opened", n)
	}
	if err := other.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		got, err := other.Candidates(ctx, index.CandidateQuery{Bands: e.Bands, MaxChunkDocs: 100})
		if err != nil || len(got) == 0 {
			t.Fatalf("%s not found by its bands after the next open: %v, %v", e.Doc.Key, got, err)
		}
	}
}

// crashImage copies the database at path, with its write-ahead log, to a
// new file, as a process killed between two transactions leaves it, and
// returns the copy's path.
func crashImage(t *testing.T, path string) string {
	t.Helper()
	image := filepath.Join(t.TempDir(), "crashed.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(image+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return image
}

// A bulk load into an index that holds only what a killed bulk load left
// pending carries that load on: the pending contents' postings are taken
// into memory rather than inserted at open, the documents it stored are
// known without asking the tables, and the load ends with the tables,
// band shares and texts of a load that had not been interrupted.
func TestBulkLoadCarriedOnAfterACrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	entries := viewDocs(0, 40)
	for i := range entries {
		entries[i].Text = []byte(fmt.Sprintf("the kept text of document %d, %s", i, strings.Repeat("shared words ", 40+i%3)))
	}
	killed := openBulk(t, filepath.Join(dir, "killed.db"))
	putEntries(t, killed, entries[:25], 6)
	image := crashImage(t, filepath.Join(dir, "killed.db"))

	var logged bytes.Buffer
	resumed, err := OpenLoader(ctx, image, Options{Scheme: 1,
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if !resumed.deferred || !strings.Contains(logged.String(), "carrying on a bulk load that did not settle") {
		t.Fatalf("the load was not carried on (log: %s)", logged.String())
	}
	if n, rows := pendingCount(t, resumed), len(dumpPostings(t, resumed)); n != 25 || rows != 0 {
		t.Fatalf("at open: %d contents pending, %d posting rows; want 25 and none", n, rows)
	}
	if resumed.seen == nil || resumed.seen.newIdem(entries[3].Doc.IdempotencyKey()) {
		t.Fatal("the carried-on load has not seen the documents the killed one stored")
	}
	// The scan run again puts every file: those stored are duplicates.
	for first := 0; first < len(entries); first += 7 {
		part := entries[first:min(first+7, len(entries))]
		got, err := resumed.Put(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range got {
			if stored := first+i < 25; c.Duplicate != stored {
				t.Fatalf("%s: duplicate %v, want %v", part[i].Doc.Key, c.Duplicate, stored)
			}
		}
	}
	if err := resumed.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	if resumed.view.Load() == nil {
		t.Fatalf("the carried-on load's postings were not kept in memory (log: %s)", logged.String())
	}
	immediate := open(t, filepath.Join(dir, "immediate.db"), 1)
	putEntries(t, immediate, entries, 7)
	if got, want := groupingAnswers(t, resumed, entries), groupingAnswers(t, immediate, entries); !slices.Equal(got, want) {
		t.Fatalf("the carried-on load answers\n%s\nthe tables\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := resumed.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "from=memory") {
		t.Fatalf("the postings were not settled from memory (log: %s)", logged.String())
	}
	shares := []string{"SELECT 'share', c, mask, hex(partners) FROM band_shares ORDER BY c"}
	if got, want := dumpRows(t, resumed, shares...), dumpRows(t, immediate, shares...); !slices.Equal(got, want) {
		t.Fatalf("band shares of the carried-on load:\n%v\nwant\n%v", got, want)
	}
	if got, want := dumpPostings(t, resumed), dumpPostings(t, immediate); !slices.Equal(got, want) {
		t.Fatalf("postings of the carried-on load:\n%v\nwant\n%v", got, want)
	}
	// The killed load's text pieces are shared by the texts stored after
	// it as if it had not been stopped.
	texts := []string{"SELECT 'block', id, refs, length(data), hex(pieces) FROM text_blocks ORDER BY id",
		"SELECT 'piece', h, block, off, len FROM text_pieces ORDER BY h",
		"SELECT 'text', content_id, hex(data) FROM texts ORDER BY content_id"}
	if got, want := dumpRows(t, resumed, texts...), dumpRows(t, immediate, texts...); !slices.Equal(got, want) {
		t.Fatalf("texts of the carried-on load:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := dumpDocuments(t, resumed), dumpDocuments(t, immediate); len(got) != len(want) {
		t.Fatalf("documents of the carried-on load:\n%v\nwant\n%v", got, want)
	}
	for i, e := range entries {
		text, err := resumed.Text(ctx, index.ContentID(i+1))
		if err != nil || !bytes.Equal(text, e.Text) {
			t.Fatalf("text of content %d: %q, %v; want %q", i+1, text, err, e.Text)
		}
	}
	if err := resumed.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// A killed load whose texts were damaged since is not carried on blindly:
// the open says which text it could not read.
func TestBulkLoadNotCarriedOnOverADamagedText(t *testing.T) {
	ctx := context.Background()
	entries := viewDocs(0, 6)
	for i := range entries {
		entries[i].Text = []byte(fmt.Sprintf("the kept text of document %d, %s", i, strings.Repeat("shared words ", 40)))
	}
	path := filepath.Join(t.TempDir(), "killed.db")
	killed := openBulk(t, path)
	putEntries(t, killed, entries, 3)
	if _, err := killed.w.Exec("UPDATE texts SET data = x'01ff' WHERE content_id = 4"); err != nil {
		t.Fatal(err)
	}
	image := crashImage(t, path)
	_, err := OpenLoader(ctx, image, Options{Scheme: 1})
	if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "content 4") {
		t.Fatalf("open over a damaged text: %v; want ErrInconsistent naming content 4", err)
	}
}
