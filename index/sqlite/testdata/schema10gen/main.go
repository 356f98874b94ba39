// Command schema10gen made ../schema10.db.gz and ../schema10-records.json
// with simdex at aae9838, whose index schema is version 10: an index of the
// document rows before migration 11, and its records as that code read
// them. Run from a checkout of that commit:
//
//	go run ./index/sqlite/testdata/schema10gen schema10.db schema10-records.json
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
)

func fp(b byte, text string) *index.Fingerprint {
	return &index.Fingerprint{TextSHA256: [32]byte{b}, TextSize: int64(len(text)), RawSHA256: [32]byte{b, 1}, RawSize: int64(len(text)) + 1,
		Samples: []uint32{8, 16 + uint32(b)*8}, MinHash: []uint32{uint32(b), 2}, SimHash: uint64(b)}
}

func main() {
	ctx := context.Background()
	path := os.Args[1]
	now := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	s, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: 1, Now: func() time.Time { now = now.Add(time.Second); return now }})
	if err != nil {
		panic(err)
	}
	mod := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	put := func(es ...index.Entry) {
		if _, err := s.Put(ctx, es); err != nil {
			panic(err)
		}
	}
	put(index.Entry{Doc: index.Doc{Key: "fs:/srv/in/a.txt", VersionID: fmt.Sprintf("%d-%d", mod.UnixNano(), 6), Name: "in/a.txt", Source: "scan",
		Path: []string{"in/a.txt"}, MediaType: "text/plain", Meta: map[string]string{"charset": "utf-8"}, ModTime: mod},
		Fingerprint: fp(1, "a b c"), Parent: -1, Text: []byte("a b c")})
	put(index.Entry{Doc: index.Doc{Key: "fs:/srv/gone.txt", VersionID: "x", Name: "gone.txt", Source: "scan", Path: []string{"gone.txt"}},
		Fingerprint: fp(2, "gone"), Parent: -1, Text: []byte("gone")})
	if _, err := s.Remove(ctx, "fs:/srv/gone.txt", ""); err != nil {
		panic(err)
	}
	put(index.Entry{Doc: index.Doc{Key: "s3:bucket/dir/b.eml", VersionID: "v1", Name: "dir/b.eml", Source: "s3:main",
		Idempotency: "s3:main\x00bucket\x00dir/b.eml\x00v1\x00etag", Path: []string{"dir/b.eml"}, MediaType: "message/rfc822",
		Meta: map[string]string{"thread_id": "t1", "message_id": "<m1@x>", "subject": "Hi <you> & me"}, ModTime: mod, KeepVersions: true},
		Fingerprint: fp(3, "hello"), Parent: -1, Text: []byte("hello")},
		index.Entry{Doc: index.Doc{Key: "s3:bucket/dir/b.eml!/att.docx", VersionID: "v1", Name: "dir/b.eml!/att.docx", Source: "s3:main",
			Path: []string{"dir/b.eml", "att.docx"}, MediaType: "application/docx", ModTime: mod},
			Fingerprint: fp(1, "a b c"), Parent: 0, Text: []byte("a b c")})
	put(index.Entry{Doc: index.Doc{Key: "nokey", Error: "encrypted"}, RawSHA256: [32]byte{9}, RawSize: 77, Parent: -1})
	put(index.Entry{Doc: index.Doc{Key: "fs:/srv/ünï/č.txt", VersionID: "7", Name: "ünï/č.txt", Source: "scan", Path: []string{"ünï/č.txt"},
		Meta: map[string]string{}}, Fingerprint: fp(4, "cz"), Parent: -1, Text: []byte("cz")})
	put(index.Entry{Doc: index.Doc{Key: "fs:/srv/in/d.txt", VersionID: "v", Name: "Display Name", Source: "scan", Path: []string{"elsewhere", "d"},
		Idempotency: "fs:/srv/in/d.txt"}, Fingerprint: fp(5, "dd"), Parent: -1, Text: []byte("dd")})
	put(index.Entry{Doc: index.Doc{Key: "fs:/srv/last.txt", Name: "last.txt"}, Fingerprint: fp(6, "last"), Parent: -1, Text: []byte("last")})
	if _, err := s.Remove(ctx, "fs:/srv/last.txt", ""); err != nil {
		panic(err)
	}
	if _, err := s.MarkDeletedAtSource(ctx, []index.DocID{1}, mod, "ev-1"); err != nil {
		panic(err)
	}
	var recs []*index.Record
	if err := s.Documents(ctx, func(r *index.Record) error { recs = append(recs, r); return nil }); err != nil {
		panic(err)
	}
	if err := s.Close(); err != nil {
		panic(err)
	}
	out, _ := json.MarshalIndent(recs, "", "\t")
	os.WriteFile(os.Args[2], append(out, '\n'), 0o644)
}
