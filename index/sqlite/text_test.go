package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

// words returns n pseudo-random words of English-like text, the same for
// the same seed.
func words(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := strings.Fields("the licensee shall retain all copies of this agreement and any notice " +
		"under section records must be kept for seven years unless a legal hold applies to the matter " +
		"document version draft final review counsel privileged confidential")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(" \n"[min(r.IntN(12), 1)])
		}
		b.WriteString(vocab[r.IntN(len(vocab))])
		fmt.Fprintf(&b, "%d", r.IntN(100))
	}
	return b.String()
}

// blockStats returns the number of text blocks and pieces and the bytes
// the blocks hold once inflated.
func blockStats(t *testing.T, s tested) (blocks, pieces, raw int) {
	t.Helper()
	rows, err := s.raw().w.Query("SELECT data FROM text_blocks")
	if err != nil {
		t.Fatal(err)
	}
	var zs [][]byte // read before inflating: the writer has one connection
	for rows.Next() {
		var z []byte
		if err := rows.Scan(&z); err != nil {
			t.Fatal(err)
		}
		zs = append(zs, z)
	}
	rows.Close()
	for _, z := range zs {
		data, err := inflateBlock(context.Background(), s.raw().w, z)
		if err != nil {
			t.Fatal(err)
		}
		blocks++
		raw += len(data)
	}
	if err := s.raw().w.QueryRow("SELECT count(*) FROM text_pieces").Scan(&pieces); err != nil {
		t.Fatal(err)
	}
	return blocks, pieces, raw
}

// TestTextsSharePieces: near-copies' texts are stored once, piece by
// piece, read back byte for byte, and their blocks go with the last text
// using them; in a bulk load too, whose pieces are kept in memory.
func TestTextsSharePieces(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprint("bulk=", bulk), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			if !bulk {
				textsSharePieces(t, open(t, path, 1))
				return
			}
			s, err := OpenLoader(context.Background(), path, Options{Scheme: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.pieces == nil {
				t.Fatalf("bulk pieces: %v", s.pieces)
			}
			textsSharePieces(t, s)
		})
	}
}

func textsSharePieces(t *testing.T, s tested) {
	ctx := context.Background()
	orig := words(1, 6000) // about 40 KB
	texts := map[string]string{
		"original": orig,
		"excerpt":  orig[10000:25000],
		"edited":   orig[:20000] + " an inserted clause " + orig[20000:],
		"twice":    orig + orig,                       // repeats its own pieces
		"large":    words(2, 60000),                   // several new blocks
		"empty":    "",                                // no pieces at all
		"unicode":  "naïve café — 契約書 " + orig[:5000], // pieces cut inside characters
	}
	content := map[string]index.ContentID{}
	var total int
	for _, key := range []string{"original", "excerpt", "edited", "twice", "large", "empty", "unicode"} {
		e := []index.Entry{{Doc: index.Doc{Key: key}, Fingerprint: storetest.Fingerprint(key, nil, nil), Parent: -1, Text: []byte(texts[key])}}
		if key != "edited" {
			s.Prepare(ctx, e) // and "edited" is cut into pieces by Put
		}
		c, err := s.Put(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		content[key] = c[0].Content
		total += len(texts[key])
	}
	readAll := func() {
		t.Helper()
		for key, c := range content {
			got, err := s.Text(ctx, c)
			if err != nil || string(got) != texts[key] {
				t.Fatalf("text of %s: %d bytes, %v; want %d bytes", key, len(got), err, len(texts[key]))
			}
		}
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	readAll()
	if l, ok := s.(*Loader); ok {
		if err := l.Settle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	blocks, pieces, raw := blockStats(t, s)
	// The original, the large text and the unicode text's first pieces
	// are new; the others add a few pieces around their cuts and edits.
	want := len(orig) + len(texts["large"]) + 3*pieceParams.Max*2 + 100
	if raw > want {
		t.Errorf("blocks hold %d bytes of %d stored (want at most %d): near-copies not shared", raw, total, want)
	}
	if blocks < 3 || pieces == 0 {
		t.Errorf("%d blocks, %d pieces", blocks, pieces)
	}
	if n := (len(texts["large"]) + maxBlock - 1) / maxBlock; blocks < n {
		t.Errorf("%d blocks for a text needing %d", blocks, n)
	}

	// Removing texts keeps the others whole; the last one takes every
	// block and piece with it.
	for _, key := range []string{"original", "large", "excerpt", "twice", "empty", "unicode", "edited"} {
		if _, err := s.Remove(ctx, key, ""); err != nil {
			t.Fatal(err)
		}
		delete(content, key)
		readAll()
	}
	if blocks, pieces, _ := blockStats(t, s); blocks != 0 || pieces != 0 {
		t.Fatalf("%d blocks and %d pieces left after every text was removed", blocks, pieces)
	}
}

// TestBulkPiecesAfterRollback: the pieces of a bulk load's transaction
// that failed are forgotten, and those it committed are in text_pieces
// once it settles, where the next process finds them.
func TestBulkPiecesAfterRollback(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := OpenLoader(ctx, path, Options{Scheme: 1})
	if err != nil {
		t.Fatal(err)
	}
	text, other := words(10, 2000), words(11, 2000)
	entry := func(key, text string) index.Entry {
		return index.Entry{Doc: index.Doc{Key: key}, Fingerprint: storetest.Fingerprint(key, nil, nil), Parent: -1, Text: []byte(text)}
	}
	bad := entry("bad", "")
	bad.Parent = 7 // after it: the transaction fails
	if _, err := s.Put(ctx, []index.Entry{entry("a", text), bad}); err == nil {
		t.Fatal("a put with a bad parent succeeded")
	}
	c, err := s.Put(ctx, []index.Entry{entry("b", text), entry("c", other)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Text(ctx, c[0].Content); err != nil || string(got) != text {
		t.Fatalf("text stored after a failed transaction with the same pieces: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	live := open(t, path, 1) // no Loader: it keeps no pieces in memory
	_, pieces, raw := blockStats(t, live)
	if pieces == 0 {
		t.Fatal("a bulk load's pieces not in text_pieces after Close")
	}
	c, err = live.Put(ctx, []index.Entry{entry("d", text[100:]+other[:500])})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := live.Text(ctx, c[0].Content); err != nil || string(got) != text[100:]+other[:500] {
		t.Fatalf("text sharing a bulk load's pieces: %v", err)
	}
	if _, _, after := blockStats(t, live); after-raw > 2*pieceParams.Max {
		t.Fatalf("a near-copy of the bulk load's texts added %d bytes of blocks", after-raw)
	}
	if err := live.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTextsReplacedInOneCommit: a commit that replaces a text and then
// stores others sharing its pieces leaves every text whole, whether the
// replaced text's blocks stay (a new version uses them) or go.
func TestTextsReplacedInOneCommit(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	v1, other := words(7, 3000), words(8, 3000)
	texts := []string{
		v1,                      // a: first version
		v1[:9000] + " amended ", // a: second version, sharing most of v1
		other,                   // b: first version
		words(9, 500),           // b: second version: other's blocks go
		other[2000:12000],       // c: an excerpt of the replaced b
		v1[4000:],               // d: an excerpt of a's first version
	}
	keys := []string{"a", "a", "b", "b", "c", "d"}
	var entries []index.Entry
	for i, text := range texts {
		entries = append(entries, index.Entry{Doc: index.Doc{Key: keys[i], VersionID: fmt.Sprint("v", i)}, Fingerprint: storetest.Fingerprint(fmt.Sprint(i), nil, nil), Parent: -1, Text: []byte(text)})
	}
	s.Prepare(ctx, entries)
	c, err := s.Put(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if i == 0 || i == 2 {
			continue // replaced
		}
		if got, err := s.Text(ctx, c[i].Content); err != nil || string(got) != text {
			t.Fatalf("text %d: %d bytes, %v; want %d", i, len(got), err, len(text))
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTextsStoredWholeStillRead: texts kept by schema 3 to 7, one zstd
// frame each, are still read, and removing them leaves the pieces alone.
func TestTextsStoredWholeStillRead(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	text := words(3, 2000)
	var cs []index.ContentID
	for _, key := range []string{"old", "new"} {
		c, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: key}, Fingerprint: storetest.Fingerprint(key, nil, nil), Parent: -1}})
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c[0].Content)
	}
	if _, err := s.w.Exec("INSERT INTO texts (content_id, codec, data) VALUES (?, ?, ?)", int64(cs[0]), codecZstd, textEncoder.EncodeAll([]byte(text), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: "new2"}, Fingerprint: storetest.Fingerprint("new2", nil, nil), Parent: -1, Text: []byte(text)}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Text(ctx, cs[0]); err != nil || string(got) != text {
		t.Fatalf("text stored whole: %v", err)
	}
	if _, err := s.Remove(ctx, "old", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if blocks, _, raw := blockStats(t, s); blocks == 0 || raw != len(text) {
		t.Fatalf("the pieced copy's blocks: %d, %d bytes", blocks, raw)
	}
}

// TestDamagedTexts: a text whose block is missing, altered or counted
// wrongly is reported as inconsistent, never returned altered.
func TestDamagedTexts(t *testing.T) {
	ctx := context.Background()
	damage := map[string]string{
		"altered block": "UPDATE text_blocks SET data = ?",
		"missing block": "DELETE FROM text_blocks WHERE ? IS NOT NULL",
		"bad row":       "UPDATE texts SET data = substr(data, 1, length(data) - 1) WHERE ? IS NOT NULL",
		"unknown codec": "UPDATE texts SET codec = 'lz4' WHERE ? IS NOT NULL",
	}
	for name, stmt := range damage {
		t.Run(name, func(t *testing.T) {
			s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
			text := words(4, 1000)
			c, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: "a"}, Fingerprint: storetest.Fingerprint("a", nil, nil), Parent: -1, Text: []byte(text)}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.w.Exec("PRAGMA foreign_keys = OFF"); err != nil {
				t.Fatal(err)
			}
			altered := []byte(strings.Replace(text, "the", "THE", 1))
			if _, err := s.w.Exec(stmt, textEncoder.EncodeAll(altered, nil)); err != nil {
				t.Fatal(err)
			}
			got, err := s.Text(ctx, c[0].Content)
			if !errors.Is(err, ErrInconsistent) {
				t.Fatalf("Text = %d bytes, %v; want ErrInconsistent", len(got), err)
			}
		})
	}
	// Damage Check finds: a piece whose block is not there, a block
	// whose reference count is wrong.
	for name, damage := range map[string]string{
		"orphan piece": "UPDATE text_pieces SET block = block + 100 WHERE rowid = (SELECT min(rowid) FROM text_pieces)",
		"wrong count":  "UPDATE text_blocks SET refs = refs + 1",
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
			if _, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: "a"}, Fingerprint: storetest.Fingerprint("a", nil, nil), Parent: -1, Text: []byte(words(5, 500))}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.w.Exec(damage); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(ctx); !errors.Is(err, ErrInconsistent) {
				t.Fatalf("Check = %v; want ErrInconsistent", err)
			}
		})
	}
}

// TestTextBlocksInAMigratedStore: a store made at schema 7 gains the
// tables of version 8 and keeps pieced texts from then on.
func TestTextBlocksInAMigratedStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	for _, stmt := range []string{"DROP TABLE text_pieces", "DROP TABLE text_blocks", "PRAGMA user_version = 7"} {
		if _, err := s.w.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, 1)
	text := words(6, 800)
	c, err := s.Put(ctx, []index.Entry{{Doc: index.Doc{Key: "a"}, Fingerprint: storetest.Fingerprint("a", nil, nil), Parent: -1, Text: []byte(text)}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Text(ctx, c[0].Content); err != nil || string(got) != text {
		t.Fatalf("text after migration: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeTextRow(f *testing.F) {
	f.Add(appendTextRow(nil, &textRow{size: 10, runs: []textRun{{block: 3, off: 0, len: 4}, {block: 1, off: 9, len: 6}}}))
	f.Add(appendTextRow(nil, &textRow{}))
	f.Add([]byte{textVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeTextRow(b)
		if err != nil {
			if !errors.Is(err, ErrInconsistent) {
				t.Fatalf("error %v does not wrap ErrInconsistent", err)
			}
			return
		}
		var total uint64
		for _, run := range r.runs {
			total += uint64(run.len)
		}
		if total != r.size {
			t.Fatalf("runs cover %d of %d bytes", total, r.size)
		}
		again, err := decodeTextRow(appendTextRow(nil, r))
		if err != nil || again.size != r.size || again.sum != r.sum || len(again.runs) != len(r.runs) {
			t.Fatalf("re-encoded row differs: %v", err)
		}
		for i := range r.runs {
			if again.runs[i] != r.runs[i] {
				t.Fatalf("run %d: %v, was %v", i, again.runs[i], r.runs[i])
			}
		}
		if !bytes.Equal(appendTextRow(nil, again), appendTextRow(nil, r)) {
			t.Fatal("encoding not stable")
		}
	})
}
