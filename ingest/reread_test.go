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

// counted counts the objects an origin opens.
type counted struct {
	ingest.Origin
	opens int
}

func (c *counted) Reopen(ctx context.Context, loc ingest.Location) (io.ReadCloser, string, error) {
	c.opens++
	return c.Origin.Reopen(ctx, loc)
}

// textOf reads one document's text again.
func textOf(ctx context.Context, rr *ingest.Rereader, rec *index.Record) ([]byte, error) {
	texts, err := rr.Texts(ctx, rec)
	if err != nil {
		return nil, err
	}
	return texts[0], nil
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
	opened := &counted{Origin: origin}
	rr := ingest.NewRereader(eng.Extractor, eng.Index, map[string]ingest.Origin{"s3:x": opened})

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
		got, err := textOf(ctx, rr, byKey[key])
		if err != nil || string(got) != want {
			t.Errorf("Text(%s) = %.40q, %v; want %.40q", key, got, err, want)
		}
	}
	// Two members of one object, as a diff asks for them: one read.
	other := byKey["s3:x/b/bundle.zip"+ingest.ChildSeparator+"memo.txt"]
	opened.opens = 0
	texts, err := rr.Texts(ctx, member, other)
	if err != nil || len(texts) != 2 || string(texts[0]) != minutes || string(texts[1]) != memo {
		t.Errorf("Texts(two members) = %d texts, %v", len(texts), err)
	}
	if opened.opens != 1 {
		t.Errorf("two members of one object opened it %d times, want once", opened.opens)
	}

	// The object overwritten in place under the same version.
	origin["b/memo.txt@v1"] = []byte(strings.Replace(memo, "seven", "ten", 1))
	if _, err := textOf(ctx, rr, byKey["s3:x/b/memo.txt"]); !errors.Is(err, ingest.ErrTextChanged) {
		t.Errorf("changed object: err = %v, want ErrTextChanged", err)
	}
	// The member gone from the archive.
	origin["b/bundle.zip@v1"] = zipOf(t, map[string]string{"memo.txt": memo})
	if _, err := textOf(ctx, rr, member); !errors.Is(err, ingest.ErrTextChanged) {
		t.Errorf("member gone: err = %v, want ErrTextChanged", err)
	}
	// The version gone from its origin.
	delete(origin, "b/bundle.zip@v1")
	if _, err := textOf(ctx, rr, member); !errors.Is(err, connectors.ErrObjectMissing) {
		t.Errorf("version gone: err = %v, want connectors.ErrObjectMissing", err)
	}
	// A source with no origin (a NATS message carried its body).
	nats := ingest.NewRereader(eng.Extractor, eng.Index, map[string]ingest.Origin{})
	if _, err := textOf(ctx, nats, byKey["s3:x/b/memo.txt"]); !errors.Is(err, ingest.ErrNoOrigin) {
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
