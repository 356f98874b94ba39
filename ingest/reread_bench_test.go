package ingest_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/connectors/fs"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/internal/corpustest"
)

// BenchmarkDocumentText reads a document's text the two ways a review
// does: kept in the index, or read again from its origin (a real folder)
// when the index keeps none, for a PDF, a plain text and one message of a
// PST mailbox (which is extracted whole for it).
func BenchmarkDocumentText(b *testing.B) {
	for _, file := range []string{
		"debian-docs/raw/debian-policy/usr/share/doc/debian-policy/policy.pdf",
		"debian-docs/raw/debian-reference-en/usr/share/debian-reference/debian-reference.en.txt",
		"outlook/support.pst",
	} {
		for _, keep := range []bool{true, false} {
			way := map[bool]string{true: "kept", false: "reread"}[keep]
			b.Run(fmt.Sprintf("%s/%s", filepath.Base(file), way), func(b *testing.B) {
				benchDocumentText(b, file, keep)
			})
		}
	}
}

// folder is a watched folder as an origin, as the daemon adapts it.
type folder struct{ src *fs.Source }

func (f folder) Reopen(ctx context.Context, loc ingest.Location) (io.ReadCloser, string, error) {
	return f.src.Reopen(ctx, loc.Name, loc.VersionID)
}

func benchDocumentText(b *testing.B, file string, keep bool) {
	ctx := context.Background()
	corpora := corpustest.Dir(b)
	eng := newEngine(b, keep)
	src, err := fs.New(fs.Config{Dir: corpora, Name: "fs:corpora"})
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(corpora, file))
	if err != nil {
		b.Fatalf("the benchmark reads the full corpora: %v", err)
	}
	body, err := os.Open(filepath.Join(corpora, file))
	if err != nil {
		b.Fatal(err)
	}
	defer body.Close()
	out, err := eng.Ingester.Ingest(ctx, ingest.Object{Key: "fs:corpora/" + file, Name: file, Source: "fs:corpora",
		VersionID: fmt.Sprintf("%d-%d", st.ModTime().UnixNano(), st.Size()), Body: body})
	if err != nil {
		b.Fatal(err)
	}
	// The last document with text: the file, or its last message.
	var rec *index.Record
	for _, res := range out.Results {
		if res.Fingerprint != nil {
			if rec, err = eng.Index.Get(ctx, res.ID); err != nil {
				b.Fatal(err)
			}
		}
	}
	if rec == nil {
		b.Fatalf("%s: no document with text", file)
	}
	rr := ingest.NewRereader(eng.Extractor, eng.Index, map[string]ingest.Origin{"fs:corpora": folder{src}})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var text []byte
		if keep {
			text, err = eng.Store.Text(ctx, rec.Content)
		} else {
			text, err = textOf(ctx, rr, rec)
		}
		if err != nil || int64(len(text)) == 0 {
			b.Fatalf("text of %s: %d bytes, %v", rec.Key, len(text), err)
		}
	}
}
