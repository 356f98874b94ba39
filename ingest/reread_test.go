package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
)

// objects is an origin in memory, by name and version: the daemon's
// tests read real MinIO buckets and folders again.
type objects map[string][]byte

func (o objects) Reopen(_ context.Context, loc ingest.Location) (io.ReadCloser, string, error) {
	b, ok := o[loc.Name+"@"+loc.VersionID]
	if !ok {
		return nil, "", &connectors.Error{Op: "open", Key: loc.Name, Kind: connectors.Permanent, Err: connectors.ErrObjectMissing}
	}
	return io.NopCloser(bytes.NewReader(b)), "", nil
}

// A document's text that the index does not keep is read again from its
// object's origin: the object itself or a member inside it, and only if
// it is still the text indexed.
func TestRereaderReadsTheTextIndexed(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, false)

	memo := strings.Repeat("The retention schedule keeps payroll records for seven years. ", 30)
	minutes := strings.Repeat("The board met on Tuesday and approved the budget for the year. ", 30)
	archive := zipOf(t, map[string]string{"memo.txt": memo, "minutes.txt": minutes})
	origin := objects{"b/bundle.zip@v1": archive, "b/memo.txt@v1": []byte(memo)}
	rr := ingest.NewRereader(eng.Extractor, eng.Index, map[string]ingest.Origin{"s3:x": origin})

	byKey := map[string]*index.Record{}
	for _, name := range []string{"bundle.zip", "memo.txt"} {
		out, err := eng.Ingester.Ingest(ctx, ingest.Object{Key: "s3:x/b/" + name, VersionID: "v1", Name: name, Source: "s3:x", Body: bytes.NewReader(origin["b/"+name+"@v1"])})
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range out.Results {
			rec, err := eng.Index.Get(ctx, res.ID)
			if err != nil {
				t.Fatal(err)
			}
			byKey[rec.Key] = rec
		}
	}
	member := byKey["s3:x/b/bundle.zip"+ingest.ChildSeparator+"minutes.txt"]
	if member == nil {
		t.Fatalf("no member minutes.txt among %v", byKey)
	}
	if _, err := eng.Store.Text(ctx, member.Content); !errors.Is(err, index.ErrNoText) {
		t.Fatalf("kept text: err = %v, want index.ErrNoText", err)
	}
	for key, want := range map[string]string{"s3:x/b/memo.txt": memo, member.Key: minutes} {
		got, err := rr.Text(ctx, byKey[key])
		if err != nil || string(got) != want {
			t.Errorf("Text(%s) = %.40q, %v; want %.40q", key, got, err, want)
		}
	}

	// The object overwritten in place under the same version.
	origin["b/memo.txt@v1"] = []byte(strings.Replace(memo, "seven", "ten", 1))
	if _, err := rr.Text(ctx, byKey["s3:x/b/memo.txt"]); !errors.Is(err, ingest.ErrTextChanged) {
		t.Errorf("changed object: err = %v, want ErrTextChanged", err)
	}
	// The member gone from the archive.
	origin["b/bundle.zip@v1"] = zipOf(t, map[string]string{"memo.txt": memo})
	if _, err := rr.Text(ctx, member); !errors.Is(err, ingest.ErrTextChanged) {
		t.Errorf("member gone: err = %v, want ErrTextChanged", err)
	}
	// The version gone from its origin.
	delete(origin, "b/bundle.zip@v1")
	if _, err := rr.Text(ctx, member); !errors.Is(err, connectors.ErrObjectMissing) {
		t.Errorf("version gone: err = %v, want connectors.ErrObjectMissing", err)
	}
	// A source with no origin (a NATS message carried its body).
	nats := ingest.NewRereader(eng.Extractor, eng.Index, map[string]ingest.Origin{})
	if _, err := nats.Text(ctx, byKey["s3:x/b/memo.txt"]); !errors.Is(err, ingest.ErrNoOrigin) {
		t.Errorf("no origin: err = %v, want ErrNoOrigin", err)
	}
}

// A document whose object cannot be read again (a hold's seed file) keeps
// its text, and its members theirs, where the index keeps none.
func TestKeepTextKeepsWhereTheIndexDoesNot(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, false)
	text := strings.Repeat("Evidence for the matter: the contract was signed on the first of May. ", 20)
	out, err := eng.Ingester.Ingest(ctx, ingest.Object{Key: "hold-seed:m/seed.zip", Name: "seed.zip", Source: "hold-seed", KeepText: true,
		Body: bytes.NewReader(zipOf(t, map[string]string{"a.txt": text}))})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2 {
		t.Fatalf("%d results, want the zip and its member", len(out.Results))
	}
	rec, err := eng.Index.Get(ctx, out.Results[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := eng.Store.Text(ctx, rec.Content); err != nil || string(got) != text {
		t.Errorf("member's kept text = %.40q, %v", got, err)
	}
}
