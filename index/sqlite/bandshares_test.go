package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

// bandDoc is a document whose text has the given band keys (as 64-bit
// hashes: their posting keys are the top 31 bits).
func bandDoc(key, text string, bands ...uint64) index.Entry {
	return index.Entry{Doc: index.Doc{Key: key}, Fingerprint: storetest.Fingerprint(text, nil, nil), Bands: bands, Parent: -1}
}

// putBandDocs stores n documents of 8 bands, half of them drawn from a few
// keys, so that many are shared, at different positions, and half their
// own, in batches of batch.
func putBandDocs(t *testing.T, s tested, n, batch int) []index.Entry {
	t.Helper()
	var all []index.Entry
	for i := 0; i < n; i += batch {
		var entries []index.Entry
		for j := i; j < min(i+batch, n); j++ {
			bands := make([]uint64, 8)
			for b := range bands {
				bands[b] = uint64((j*7+b*13)%(n*3)+1) << 40
				if b%2 == 1 { // held by this content alone
					bands[b] = uint64(1_000_000+j*8+b) << 40
				}
			}
			entries = append(entries, bandDoc(fmt.Sprintf("doc-%d", j), fmt.Sprintf("text %d", j), bands...))
		}
		if _, err := s.Put(context.Background(), entries); err != nil {
			t.Fatal(err)
		}
		all = append(all, entries...)
	}
	return all
}

// sameCandidates fails unless every entry's query naming its stored text
// finds what the query without it finds. It returns how many band keys
// those queries did not look up.
func sameCandidates(t *testing.T, s tested, entries []index.Entry) (skipped int) {
	t.Helper()
	ctx := context.Background()
	for _, e := range entries {
		q := index.CandidateQuery{Bands: e.Bands, MaxChunkDocs: 100}
		all, err := s.Candidates(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		q.TextSHA256 = e.Fingerprint.TextSHA256
		got, err := s.Candidates(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(all)
		slices.Sort(got)
		if !slices.Equal(got, all) {
			t.Fatalf("%s: candidates %v, without naming its text %v", e.Doc.Key, got, all)
		}
		tx := readTx(t, s.raw())
		_, mask, _, known, err := s.raw().storedBands(ctx, tx, e.Fingerprint.TextSHA256, 0)
		tx.Rollback()
		if err != nil {
			t.Fatal(err)
		}
		for i := range e.Bands {
			if known || mask&(1<<i) == 0 {
				skipped++
			}
		}
	}
	return skipped
}

// TestMigrateToBandShares takes a store back to schema 5, whose contents
// have no band masks: the migration must compute them from the postings.
func TestMigrateToBandShares(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	entries := putBandDocs(t, s, 60, 7)
	if _, err := s.w.ExecContext(ctx, "DROP TABLE band_shares; PRAGMA user_version = 5"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	var logged bytes.Buffer
	s, err := Open(ctx, path, Options{Scheme: 1, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.Contains(logged.String(), "to=6") {
		t.Errorf("the migration was not logged:\n%s", logged.String())
	}
	var shared int
	if err := s.r.QueryRow("SELECT count(*) FROM band_shares").Scan(&shared); err != nil || shared == 0 {
		t.Fatalf("%d masks after the migration (%v)", shared, err)
	}
	if skipped := sameCandidates(t, s, entries); skipped == 0 {
		t.Fatal("no band key is skipped: the test shares too many")
	}
	var listed int
	if err := s.r.QueryRow("SELECT count(*) FROM band_shares WHERE partners IS NOT NULL").Scan(&listed); err != nil || listed == 0 {
		t.Fatalf("%d contents list their partners after the migration (%v)", listed, err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestBandSharesAcrossStores: a content stored by another process (a
// `simdex scan --index` into the daemon's index) shares bands with this
// one's; each must find the other, whichever wrote last.
func TestBandSharesAcrossStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	a, b := open(t, path, 1), open(t, path, 1)
	x := bandDoc("x", "x", 1<<40, 2<<40, 3<<40)
	y := bandDoc("y", "y", 4<<40, 2<<40, 5<<40)
	if _, err := a.Put(ctx, []index.Entry{x}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, []index.Entry{y}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{a, b} {
		if sameCandidates(t, s, []index.Entry{x, y}) != 6 {
			t.Fatal("band keys held by one content looked up")
		}
	}
}

func TestCheckFindsMissingBandShare(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	putBandDocs(t, s, 20, 5)
	if err := s.Check(ctx); err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	if _, err := s.w.Exec("UPDATE band_shares SET mask = mask & ~1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("store with a band bit missing: %v", err)
	}
}

// TestBandSharesBeyondPartners: contents sharing a band key with more
// contents than a row lists fall back to looking their shared keys up,
// and still find every one, through puts in one transaction and several,
// removals, and a migration.
func TestBandSharesBeyondPartners(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	var entries []index.Entry
	n := maxPartners + 10
	for i := range n {
		entries = append(entries, bandDoc(fmt.Sprintf("doc-%d", i), fmt.Sprintf("text %d", i),
			uint64(i+1)<<40, 7<<40, uint64(1000+i/2)<<40)) // key 7: everyone's; the third: pairs
	}
	if _, err := s.Put(ctx, entries[:n/2]); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries[n/2:] {
		if _, err := s.Put(ctx, []index.Entry{e}); err != nil {
			t.Fatal(err)
		}
	}
	var overflowed int
	if err := s.r.QueryRow("SELECT count(*) FROM band_shares WHERE partners IS NULL").Scan(&overflowed); err != nil || overflowed != n {
		t.Fatalf("%d of %d contents past the partner limit (%v)", overflowed, n, err)
	}
	sameCandidates(t, s, entries)
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// Fewer than the limit once most are removed: lists already dropped
	// stay dropped (the keys are looked up), and a newcomer lists its own.
	for _, e := range entries[:n-5] {
		if _, err := s.Remove(ctx, e.Doc.Key, ""); err != nil {
			t.Fatal(err)
		}
	}
	late := bandDoc("late", "late", 7<<40)
	if _, err := s.Put(ctx, []index.Entry{late}); err != nil {
		t.Fatal(err)
	}
	sameCandidates(t, s, append(entries[n-5:], late))
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, "DROP TABLE band_shares; PRAGMA user_version = 5"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, path, 1)
	sameCandidates(t, s, append(entries[n-5:], late))
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDeferredBandShares: a bulk load leaves band_shares to its close,
// even once its postings are settled; meanwhile queries look up every key
// and still find everything, and a store opened without deferring (after
// a crash, or beside the load) computes them.
func TestDeferredBandShares(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	bulk, err := OpenLoader(ctx, path, Options{Scheme: 1})
	if err != nil {
		t.Fatal(err)
	}
	entries := putBandDocs(t, bulk, 60, 7)
	if err := bulk.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	if skipped := sameCandidates(t, bulk, entries); skipped != 0 {
		t.Fatalf("%d band keys skipped while band shares are stale", skipped)
	}
	if err := bulk.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// Another store opens beside the load (or after it crashed): it
	// computes them, and the load's next put makes them stale again.
	other := open(t, path, 1)
	if skipped := sameCandidates(t, other, entries); skipped == 0 {
		t.Fatal("band shares not computed at open")
	}
	if err := other.Check(ctx); err != nil {
		t.Fatal(err)
	}
	more := bandDoc("late", "late", entries[0].Bands...)
	if _, err := bulk.Put(ctx, []index.Entry{more}); err != nil {
		t.Fatal(err)
	}
	if err := bulk.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	all := append(entries, more)
	if skipped := sameCandidates(t, other, all); skipped != 0 {
		t.Fatalf("%d band keys skipped while band shares are stale again", skipped)
	}
	if err := bulk.Close(); err != nil {
		t.Fatal(err)
	}
	if skipped := sameCandidates(t, other, all); skipped == 0 {
		t.Fatal("band shares not computed when the load closed")
	}
	if err := other.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSettleBeforeClose computes a bulk load's band shares while
// the store stays open, as scan does while it writes its report.
func TestSettleBeforeClose(t *testing.T) {
	ctx := context.Background()
	bulk, err := OpenLoader(ctx, filepath.Join(t.TempDir(), "index.db"), Options{Scheme: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer bulk.Close()
	entries := putBandDocs(t, bulk, 60, 7)
	if err := bulk.SettlePostings(ctx); err != nil {
		t.Fatal(err)
	}
	if skipped := sameCandidates(t, bulk, entries); skipped != 0 {
		t.Fatalf("%d band keys skipped while band shares are stale", skipped)
	}
	if err := bulk.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if skipped := sameCandidates(t, bulk, entries); skipped == 0 {
		t.Fatal("band shares not computed by Settle")
	}
	if err := bulk.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bulk.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenBesideWriter opens a store while another process holds the
// file's write lock (a scan committing): opening must not need it.
func TestOpenBesideWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	open(t, path, 1)
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// Waiting for the lock would end in "database is locked" once the
	// busy timeout is over.
	s, err := Open(context.Background(), path, Options{Scheme: 1})
	if err != nil {
		t.Fatalf("open beside a writer: %v", err)
	}
	s.Close()
}

// TestRemovalUnsharesBands: removing contents takes them out of their
// partners' lists and clears the bits of keys their partners are left
// holding alone, so that band_shares stays exactly what the postings say
// (a daemon deleting for years would otherwise pile removed partners up
// until the lists passed their limit).
func TestRemovalUnsharesBands(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	entries := putBandDocs(t, s, 60, 7)
	exact := func() {
		t.Helper()
		sharesExact(t, s)
	}
	exact()
	for i, e := range entries {
		if i%3 == 1 {
			if _, err := s.Remove(ctx, e.Doc.Key, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	exact()
	var kept []index.Entry
	for i, e := range entries {
		if i%3 != 1 {
			kept = append(kept, e)
		}
	}
	sameCandidates(t, s, kept)
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// Removed in the transaction that stores a content sharing its keys.
	batch := []index.Entry{bandDoc(entries[0].Doc.Key, "replaced", entries[3].Bands...), bandDoc("new", "new", entries[0].Bands...)}
	if _, err := s.Put(ctx, batch); err != nil {
		t.Fatal(err)
	}
	exact()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// sharesExact fails unless band_shares holds exactly what the postings
// say: every mask, every listed partner, and a row for every content
// sharing a band key.
func sharesExact(t *testing.T, s tested) {
	t.Helper()
	ctx := context.Background()
	want, partners, err := sharedBands(ctx, s.raw().r)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.raw().r.QueryContext(ctx, "SELECT c, mask, partners FROM band_shares")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var c, mask int64
		var blob []byte
		if err := rows.Scan(&c, &mask, &blob); err != nil {
			t.Fatal(err)
		}
		seen++
		if mask != want[c] {
			t.Errorf("content %d: mask %#x, its shared bands are %#x", c, mask, want[c])
		}
		got, ps := decodeIDs(blob), slices.Clone(partners[c])
		slices.Sort(got)
		slices.Sort(ps)
		if blob != nil && !slices.Equal(got, ps) {
			t.Errorf("content %d lists partners %v, shares band keys with %v", c, got, ps)
		}
		if (blob == nil) != (partners[c] == nil) {
			t.Errorf("content %d: list dropped %v, shares with more than %d: %v", c, blob == nil, maxPartners, partners[c] == nil)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(partners) {
		t.Errorf("%d band_shares rows for %d contents sharing band keys", seen, len(partners))
	}
}

// TestBandSharesFromMemory: a bulk load into an empty index settles its
// postings from memory and computes the band shares from them, the same
// as from the tables (past the partner limit too); a write in between
// sends the computation back to the tables.
func TestBandSharesFromMemory(t *testing.T) {
	for _, write := range []bool{false, true} {
		t.Run(fmt.Sprintf("write=%v", write), func(t *testing.T) {
			ctx := context.Background()
			var logged bytes.Buffer
			s, err := OpenLoader(ctx, filepath.Join(t.TempDir(), "index.db"), Options{Scheme: 1,
				Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			putBandDocs(t, s, 60, 7)
			var crowd []index.Entry
			for i := range maxPartners + 10 { // key 7: everyone's; key 9 at two positions
				crowd = append(crowd, bandDoc(fmt.Sprintf("crowd-%d", i), fmt.Sprintf("crowd %d", i), 7<<40, uint64(5000+i)<<40, 9<<40, 9<<40))
			}
			if _, err := s.Put(ctx, crowd); err != nil {
				t.Fatal(err)
			}
			if err := s.SettlePostings(ctx); err != nil {
				t.Fatal(err)
			}
			if write {
				if _, err := s.Remove(ctx, "doc-3", ""); err != nil {
					t.Fatal(err)
				}
			}
			logged.Reset()
			if err := s.Settle(ctx); err != nil {
				t.Fatal(err)
			}
			msg := `msg="settled the band shares left by a bulk load"`
			line := logged.String()[strings.Index(logged.String(), msg):]
			if fromMemory := strings.Contains(line, "from=memory"); fromMemory == write {
				t.Errorf("band shares computed from memory: %v, want %v (log: %s)", fromMemory, !write, line)
			}
			sharesExact(t, s)
			if err := s.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
