package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

// blockDicts returns the dictionary id of each text block's frame, by
// block id order.
func blockDicts(t *testing.T, s *Store) []uint32 {
	t.Helper()
	rows, err := s.w.Query("SELECT data FROM text_blocks ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []uint32
	for rows.Next() {
		var z []byte
		var h zstd.Header
		if err := rows.Scan(&z); err != nil {
			t.Fatal(err)
		}
		if err := h.Decode(z); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, h.DictionaryID)
	}
	return ids
}

// TestTextDictionary: the blocks written before the index holds dictBytes
// of text have no dictionary, those written after refer to the one made
// from that text; every text reads back byte for byte, also in a process
// that has not seen the dictionary (its codecs read again from the index)
// and after reopening.
func TestTextDictionary(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	texts := map[index.ContentID]string{}
	put := func(key string, text string) {
		t.Helper()
		e := []index.Entry{{Doc: index.Doc{Key: key}, Fingerprint: storetest.Fingerprint(key, nil, nil), Parent: -1, Text: []byte(text)}}
		c, err := s.Put(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		texts[c[0].Content] = text
	}
	put("small", words(1, 2000)) // about 13 KB: no dictionary yet
	if got := blockDicts(t, s); len(got) == 0 || got[0] != 0 {
		t.Fatalf("dictionaries of the first blocks: %v, want none", got)
	}
	put("large", words(2, 30000)) // passes dictBytes
	put("after", words(3, 3000))
	var dicts int
	var id int64
	if err := s.w.QueryRow("SELECT count(*), max(id) FROM text_dicts").Scan(&dicts, &id); err != nil || dicts != 1 {
		t.Fatalf("text dictionaries: %d, %v; want 1", dicts, err)
	}
	got := blockDicts(t, s)
	if last := got[len(got)-1]; last != uint32(id) {
		t.Errorf("last block's dictionary %d, want %d (blocks: %v)", last, id, got)
	}
	readAll := func(s *Store) {
		t.Helper()
		for c, want := range texts {
			got, err := s.Text(ctx, c)
			if err != nil || string(got) != want {
				t.Fatalf("text of content %d: %d bytes, %v; want %d bytes", c, len(got), err, len(want))
			}
		}
	}
	readAll(s)
	dictCodecs.Clear() // as in another process
	readAll(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	readAll(open(t, path, 1))
}

// rowQuerier answers every query with the rows of an empty table.
type rowQuerier struct{ db *sql.DB }

func (q rowQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.db.QueryRowContext(ctx, "SELECT NULL WHERE 0")
}

// FuzzInflateBlock: any bytes as a text block are inflated or refused
// with an error, never a panic; a frame naming a dictionary the index
// lacks is ErrInconsistent.
func FuzzInflateBlock(f *testing.F) {
	f.Add(textEncoder.EncodeAll([]byte("a text block"), nil))
	d, _ := codecFor(dictID([]byte("a dictionary")), []byte("a dictionary"))
	f.Add(d.enc.EncodeAll([]byte("a dictionary's text block"), nil))
	f.Add([]byte{})
	db, err := sql.Open("sqlite", "file:"+filepath.Join(f.TempDir(), "q.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	f.Fuzz(func(t *testing.T, z []byte) {
		dictCodecs.Clear()
		_, err := inflateBlock(context.Background(), rowQuerier{db}, z)
		var h zstd.Header
		if h.Decode(z) == nil && h.DictionaryID != 0 && !errors.Is(err, ErrInconsistent) {
			t.Errorf("a frame of dictionary %d the index lacks: %v, want ErrInconsistent", h.DictionaryID, err)
		}
	})
}

// BenchmarkDeflateBlock compresses a text block of 2 KB, the corpus's
// average, without and with a dictionary of other text.
func BenchmarkDeflateBlock(b *testing.B) {
	block := []byte(words(1, 300))
	dict := []byte(words(2, 17000))[:dictBytes]
	d, err := codecFor(dictID(dict), dict)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		enc  *zstd.Encoder
	}{{"none", textEncoder}, {"dict", d.enc}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(block)))
			var n int
			for b.Loop() {
				n = len(bc.enc.EncodeAll(block, nil))
			}
			b.ReportMetric(float64(n)/float64(len(block)), "ratio")
		})
	}
}
