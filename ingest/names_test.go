package ingest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/connectors"
	fsconn "github.com/simdex/simdex/connectors/fs"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

// stored returns the one document stored under key.
func stored(t *testing.T, st *sqlite.Store, key string) *index.Record {
	t.Helper()
	recs, err := st.Lookup(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d documents stored under %q, want 1", len(recs), key)
	}
	return recs[0]
}

// An object whose key or name is not valid UTF-8 is recorded in the index
// with ErrInvalidName, under its key as given (so that its removal finds
// it), instead of being dropped.
func TestInvalidNamesRecorded(t *testing.T) {
	cases := []struct{ name, key, objName string }{
		{"key and name", "fs:inbox/caf\xe9.txt", "caf\xe9.txt"},
		{"name", "nats:docs/42", "r\xe9sum\xe9.pdf"},
		{"directory", "fs:inbox/\xff\xfe/report.txt", "\xff\xfe/report.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			ing, st := newIngester(t)
			out, err := ing.Ingest(ctx, ingest.Object{Key: c.key, Name: c.objName, Source: "test", Idempotency: c.key + "\x00v1", Body: strings.NewReader("some text")})
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(out.Err, ingest.ErrInvalidName) || len(out.Results) != 1 || out.Results[0].ID == 0 {
				t.Fatalf("outcome %+v, want one document stored with ErrInvalidName", out)
			}
			rec := stored(t, st, c.key)
			if !strings.Contains(rec.Error, ingest.ErrInvalidName.Error()) || !strings.Contains(rec.Error, `\x`) {
				t.Errorf("stored error %q, want ErrInvalidName quoting the name's bytes", rec.Error)
			}
			if seen, err := st.Seen(ctx, c.key+"\x00v1"); err != nil || !seen {
				t.Errorf("idempotency key not recorded: %v %v", seen, err)
			}
			if ids, err := st.Remove(ctx, c.key, ""); err != nil || len(ids) != 1 {
				t.Errorf("Remove(%q) = %v, %v, want the document", c.key, ids, err)
			}
		})
	}
}

// A file whose name is not UTF-8, dropped in a watched folder, reaches the
// index with its error: the connector emits it and ingest records it.
func TestWatchedFileWithInvalidNameIndexed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "caf\xe9.txt"), []byte("menu du jour"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "caf\xe9.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	src, err := fsconn.New(fsconn.Config{Dir: dir, Interval: 10 * time.Millisecond, Settle: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events := make(chan connectors.Event, 1)
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, events) }()
	var ev connectors.Event
	select {
	case ev = <-events:
	case <-ctx.Done():
		t.Fatal("no event for a file whose name is not UTF-8")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ev.Key != "caf\xe9.txt" || ev.Kind != connectors.Created {
		t.Fatalf("event %v %q, want created caf\\xe9.txt", ev.Kind, ev.Key)
	}
	body, err := ev.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	ing, st := newIngester(t)
	key := ev.Source + "/" + ev.Key // as the daemon's pipeline keys it
	out, err := ing.Ingest(context.Background(), ingest.Object{Key: key, Name: ev.Key, Source: ev.Source, Idempotency: ev.IdempotencyKey(), Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(out.Err, ingest.ErrInvalidName) {
		t.Fatalf("outcome error %v, want ErrInvalidName", out.Err)
	}
	if rec := stored(t, st, key); !strings.Contains(rec.Error, `caf\xe9.txt`) {
		t.Errorf("stored error %q, want the name quoted", rec.Error)
	}
}

// nested returns a zip holding a zip, levels deep, with a text at the
// bottom.
func nested(t *testing.T, levels int) []byte {
	t.Helper()
	data := []byte(strings.Repeat("The bottom of the archive holds this text. ", 20))
	name := "bottom.txt"
	for i := levels; i >= 1; i-- {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data, name = b.Bytes(), fmt.Sprintf("level%d.zip", i)
	}
	return data
}

// The top of an archive nested too deep reports why it was not wholly
// extracted, as does every archive between it and the deepest one opened,
// instead of "empty text".
func TestNestedTooDeepReportedOnTop(t *testing.T) {
	ctx := context.Background()
	ing, st := newIngester(t)
	out, err := ing.Ingest(ctx, ingest.Object{Key: "fs:deep.zip", Name: "deep.zip", Source: "test", Body: bytes.NewReader(nested(t, 12))})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(out.Err, extract.ErrTooDeep) {
		t.Fatalf("outcome error %v, want ErrTooDeep", out.Err)
	}
	var me *ingest.MemberError
	if !errors.As(out.Err, &me) || len(me.Path) != extract.DefaultLimits().MaxDepth {
		t.Fatalf("outcome error %v, want a MemberError %d levels down", out.Err, extract.DefaultLimits().MaxDepth)
	}
	for i, in := range out.Inputs {
		if r := out.Results[i]; r.ID == 0 || !strings.Contains(r.Err.Error(), extract.ErrTooDeep.Error()) {
			t.Errorf("%s: %v, want it stored with the depth error", in.Doc.Key, r.Err)
		}
	}
	if rec := stored(t, st, "fs:deep.zip"); !strings.HasPrefix(rec.Error, "member level2.zip!/level3.zip") || !strings.Contains(rec.Error, "nested too deep") {
		t.Errorf("top document's stored error %q", rec.Error)
	}
}

// Only extraction errors travel up, and only to documents without text:
// an archive whose members are fine but empty still reads "empty text",
// and a message keeps its own text and fingerprint when an attachment
// fails.
func TestMemberErrorsOnlyOnTextlessDocuments(t *testing.T) {
	ctx := context.Background()
	ing, _ := newIngester(t)
	out, err := ing.Ingest(ctx, ingest.Object{Key: "fs:plain.zip", Name: "plain.zip", Source: "test", Body: bytes.NewReader(zipOf(t, map[string]string{"empty.txt": ""}))})
	if err != nil {
		t.Fatal(err)
	}
	if out.Err != nil || !errors.Is(out.Results[0].Err, index.ErrEmpty) {
		t.Errorf("archive of an empty text: outcome %v, top %v, want no error and ErrEmpty", out.Err, out.Results[0].Err)
	}
	mail := "From: a@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: text/plain\r\n\r\n" + strings.Repeat("The message body has words of its own. ", 10) + "\r\n" +
		"--B\r\nContent-Type: application/zip\r\nContent-Disposition: attachment; filename=deep.zip\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString(nested(t, 12)) + "\r\n--B--\r\n"
	out, err = ing.Ingest(ctx, ingest.Object{Key: "fs:m.eml", Name: "m.eml", Source: "test", Body: strings.NewReader(mail)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Err != nil || out.Results[0].Fingerprint == nil {
		t.Errorf("message: outcome %v, top %+v, want it fingerprinted without error", out.Err, out.Results[0])
	}
	if len(out.Inputs) < 2 || !strings.Contains(out.Inputs[1].Doc.Error, "nested too deep") {
		t.Errorf("attachment error %q, want the depth error", out.Inputs[1].Doc.Error)
	}
}
