package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
	"github.com/simdex/simdex/internal/sqlitedb/sqlitetest"
)

// tested is a Store or a Loader, for helpers that write and read through
// either's methods and reach its tables (raw).
type tested interface {
	index.Store
	index.Preparer
	Check(ctx context.Context) error
	raw() *Store
}

func (s *Store) raw() *Store { return s }

func open(t *testing.T, path string, scheme uint32) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) index.Store { return open(t, filepath.Join(t.TempDir(), "index.db"), 1) },
		Reopen: func(t *testing.T, s index.Store) index.Store {
			path := s.(*Store).Path()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, path, 1)
		},
		// Another process's store on the same file.
		Replica: func(t *testing.T, s index.Store) index.Store { return open(t, s.(*Store).Path(), 1) },
	})
}

// TestSchemeMismatch checks that a store of another scheme opens stale,
// refuses to read or write fingerprints until Refingerprint has made them
// again, and then holds the new ones.
func TestSchemeMismatch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	fp := &index.Fingerprint{TextSHA256: [32]byte{1}, TextSize: 3, Samples: []uint32{8, 16}, MinHash: []uint32{1, 2}, SimHash: 7}
	if _, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: "a"}, Fingerprint: fp, Parent: -1, Text: []byte("a b")}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err := Open(ctx, path, Options{Scheme: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(ctx, nil); !errors.Is(err, index.ErrSchemeMismatch) {
		t.Fatalf("Put: %v, want ErrSchemeMismatch", err)
	}
	if err := s.Fingerprints(ctx, []index.ContentID{1}, nil); !errors.Is(err, index.ErrSchemeMismatch) {
		t.Fatalf("Fingerprints: %v, want ErrSchemeMismatch", err)
	}
	n, err := s.Refingerprint(ctx, func(text []byte) (*index.Fingerprint, []uint64, error) {
		if string(text) != "a b" {
			t.Errorf("text %q", text)
		}
		return &index.Fingerprint{TextSHA256: [32]byte{2}, TextSize: 3, Samples: []uint32{24}, MinHash: []uint32{3, 4}, SimHash: 9}, []uint64{5 << 33}, nil
	})
	if n != 1 || err != nil {
		t.Fatalf("Refingerprint: %d, %v", n, err)
	}
	if err := s.Fingerprints(ctx, []index.ContentID{1}, func(_ index.ContentID, fp *index.Fingerprint) error {
		if fp.TextSHA256 != [32]byte{2} || fp.SimHash != 9 || fp.Samples[0] != 24 {
			t.Errorf("fingerprint %+v", fp)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	if _, err := s.w.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(context.Background(), path, Options{Scheme: 1}); !errors.Is(err, index.ErrSchemaVersion) {
		t.Fatalf("got %v, want ErrSchemaVersion", err)
	}
}

func TestBadDurability(t *testing.T) {
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), Options{Durability: "sometimes"}); err == nil {
		t.Fatal("bad durability accepted")
	}
}

func TestCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	e := index.Entry{Doc: index.Doc{Key: "a"}, Fingerprint: storetest.Fingerprint("alpha", []uint64{1 << 40}, nil), Bands: []uint64{1 << 50}, Parent: -1}
	if _, err := s.Put(ctx, []index.Entry{e}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	if _, err := s.w.Exec("DELETE FROM band_postings"); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("damaged store: %v", err)
	}
}

// TestPostingsOfOneTransaction puts many contents in one transaction, one
// of them replaced by a later entry of the same transaction: postings are
// inserted at the end of the transaction, so the replaced content's must
// still be deleted with it, and every other content must find its own.
func TestPostingsOfOneTransaction(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	var entries []index.Entry
	for i := range 300 {
		key, version := fmt.Sprintf("doc-%d", i), "v1"
		if i == 299 {
			key, version = "doc-7", "v2" // replaces entry 7, in the same transaction
		}
		h := uint64(i+1) * 0x9e3779b97f4a7c15
		fp := storetest.Fingerprint(fmt.Sprintf("text %d", i), []uint64{h, h ^ 1}, []uint32{uint32(i+1) * index.AnchorEvery, uint32(i+1000) * index.AnchorEvery})
		entries = append(entries, index.Entry{Doc: index.Doc{Key: key, VersionID: version}, Fingerprint: fp, Bands: []uint64{h ^ 2, h ^ 3}, Parent: -1})
	}
	c, err := s.Put(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(c[299].Replaced) != 1 || c[299].Replaced[0] != c[7].ID {
		t.Fatalf("entry 299 replaced %v, want [%d]", c[299].Replaced, c[7].ID)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"chunk_postings", "band_postings"} {
		var n int
		if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE c NOT IN (SELECT id FROM contents)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d postings of removed contents", table, n)
		}
	}
	for i, e := range entries {
		got, err := s.Candidates(ctx, index.CandidateQuery{Bands: e.Bands[:1], MaxChunkDocs: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := []index.ContentID{c[i].Content}
		if i == 7 {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Fatalf("entry %d: candidates by band %v, want %v", i, got, want)
		}
	}
}

// TestOverfullKeysForgottenOnRemove checks that a chunk found too common
// to propose candidates is looked up again once removals make it rare.
func TestOverfullKeysForgottenOnRemove(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	const shared = 0x5eed << 40
	for i := range 12 {
		fp := storetest.Fingerprint(fmt.Sprintf("text %d", i), []uint64{shared, uint64(i+1) << 40}, nil)
		if _, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: fmt.Sprintf("doc-%d", i)}, Fingerprint: fp, Parent: -1}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // the second lookup is answered from memory
		if got, err := s.Candidates(ctx, index.CandidateQuery{Chunks: []uint64{shared}, MaxChunkDocs: 10}); err != nil || len(got) != 0 {
			t.Fatalf("chunk held by 12 contents, limit 10: candidates %v, %v", got, err)
		}
	}
	for i := range 3 {
		if _, err := s.Remove(ctx, fmt.Sprintf("doc-%d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Candidates(ctx, index.CandidateQuery{Chunks: []uint64{shared}, MaxChunkDocs: 10}); err != nil || len(got) != 9 {
		t.Fatalf("chunk held by 9 contents after removals, limit 10: candidates %v, %v", got, err)
	}
}

// TestPreparedTexts: texts cut into pieces by Prepare, texts left unprepared
// and texts of contents removed between Prepare and Put are all kept.
func TestPreparedTexts(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	entry := func(key, text string) index.Entry {
		return index.Entry{Doc: index.Doc{Key: key}, Fingerprint: storetest.Fingerprint(text, nil, nil), Parent: -1, Text: []byte(text)}
	}
	put := func(e index.Entry) index.ContentID {
		t.Helper()
		c, err := s.Put(ctx, []index.Entry{e})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Text(ctx, c[0].Content)
		if err != nil || string(got) != string(e.Text) {
			t.Fatalf("text of %s: %q, %v; want %q", e.Doc.Key, got, err, e.Text)
		}
		return c[0].Content
	}

	first := []index.Entry{entry("a", "the first text, prepared")}
	s.Prepare(ctx, first)
	if first[0].Prepared == nil {
		t.Fatal("a new content's text was not prepared")
	}
	put(first[0])

	copies := []index.Entry{entry("b", "the first text, prepared")}
	s.Prepare(ctx, copies)
	put(copies[0])

	put(entry("c", "a text nobody prepared"))

	// Prepared while its content was stored, committed once it is not.
	late := []index.Entry{entry("d", "the first text, prepared")}
	s.Prepare(ctx, late)
	for _, key := range []string{"a", "b"} {
		if _, err := s.Remove(ctx, key, ""); err != nil {
			t.Fatal(err)
		}
	}
	put(late[0])
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointsBesideTheWriter: commits reach the database file without
// the writer checkpointing, and a steady stream of commits does not grow
// the log without bound.
func TestCheckpointsBesideTheWriter(t *testing.T) {
	// Restored by a cleanup registered before the store's, so after the
	// store (and its checkpointing goroutine, which reads it) is closed.
	old := walResetFrames
	t.Cleanup(func() { walResetFrames = old })
	walResetFrames = 64
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	before := size(path)
	var maxLog int64
	for b := range 200 {
		var entries []index.Entry
		for i := range 20 {
			h := uint64(b*20+i+1) * 0x9e3779b97f4a7c15
			fp := storetest.Fingerprint(fmt.Sprintf("text %d %d", b, i), []uint64{h}, []uint32{uint32(h>>40) * index.AnchorEvery})
			entries = append(entries, index.Entry{Doc: index.Doc{Key: fmt.Sprintf("doc-%d-%d", b, i)}, Fingerprint: fp, Bands: []uint64{h ^ 1, h ^ 2}, Parent: -1})
		}
		if _, err := s.Put(ctx, entries); err != nil {
			t.Fatal(err)
		}
		maxLog = max(maxLog, size(path+"-wal"))
	}
	deadline := time.Now().Add(10 * time.Second)
	for size(path) == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if size(path) == before {
		t.Errorf("database file still %d bytes after 200 commits: nothing checkpointed", before)
	}
	// 64 pages before the writer is held, plus what the commits of one
	// checkpoint interval add; unbounded, the log grows past 40 MB here.
	if limit := int64(16 << 20); maxLog > limit {
		t.Errorf("log grew to %d bytes, want at most %d", maxLog, limit)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesAnotherDatabase points the index at another
// application's database and at simdex's policy store: both are refused
// with ErrNotIndex and left as they were, not converted to a write-ahead
// log and given the index's tables.
func TestOpenRefusesAnotherDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, stmts := range map[string][]string{
		"customers.db": {`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)`, `INSERT INTO customers(name) VALUES ('acme')`},
		"policy.db":    {`CREATE TABLE rule (id INTEGER)`, `CREATE TABLE hold (id INTEGER)`, `CREATE TABLE flag (id INTEGER)`, `PRAGMA user_version = 1`},
	} {
		path := filepath.Join(dir, name)
		before := sqlitetest.Create(t, path, stmts...)
		_, err := Open(ctx, path, Options{Scheme: 1})
		if !errors.Is(err, index.ErrNotIndex) {
			t.Fatalf("%s: Open = %v, want ErrNotIndex", name, err)
		}
		t.Logf("%s: %v", name, err)
		sqlitetest.Untouched(t, path, before)
	}
}

// TestOpenMarksAnOldIndex opens an index written before simdex marked its
// files: it is recognised by its tables, and marked.
func TestOpenMarksAnOldIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	if _, err := s.w.ExecContext(ctx, "PRAGMA application_id = 0"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path, 1)
	var id int32
	if err := s.w.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id != indexKind.ID {
		t.Fatalf("application_id = %#x, want %#x", id, indexKind.ID)
	}
}
