package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// benchDocs is how many documents the document benchmarks' index holds.
const benchDocs = 20000

// openBenchDocs returns a store of benchDocs documents keyed as a scan of
// a folder of 100 subfolders keys them, with no text.
func openBenchDocs(b *testing.B) *Store {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "index.db"), Options{Scheme: 1, Durability: Normal})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	mod := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for first := 0; first < benchDocs; first += 1000 {
		var es []index.Entry
		for i := first; i < first+1000; i++ {
			name := benchName(i)
			es = append(es, index.Entry{Doc: index.Doc{Key: "fs:/srv/bench/corpus/" + name, Name: name, Source: "scan",
				VersionID: strconv.FormatInt(mod.UnixNano(), 10) + "-7", ModTime: mod, Path: []string{name}, Error: "e",
				Meta: map[string]string{"charset": "utf-8"}}, RawSize: 7, Parent: -1})
		}
		if _, err := s.Put(ctx, es); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func benchName(i int) string { return fmt.Sprintf("%03d/doc-%06d.txt", i%100, i) }

// BenchmarkDocuments: the reads of document records by key, idempotency
// key and name. Its code uses only index.Store's methods, so that it runs
// unchanged in a build before compact document rows (schema 10): copy
// this file alone into it to compare.
func BenchmarkDocuments(b *testing.B) {
	s := openBenchDocs(b)
	ctx := context.Background()
	b.Run("lookup", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if rs, err := s.Lookup(ctx, "fs:/srv/bench/corpus/"+benchName(i%benchDocs)); err != nil || len(rs) != 1 {
				b.Fatal(rs, err)
			}
		}
	})
	b.Run("seen", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if ok, err := s.Seen(ctx, "fs:/srv/bench/corpus/"+benchName(i%benchDocs)+"\x00x"); err != nil || ok {
				b.Fatal(ok, err)
			}
		}
	})
	for _, q := range []string{"zzz", "zz/z", "doc-0123"} {
		b.Run("find/"+q, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Find(ctx, q, 50); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
