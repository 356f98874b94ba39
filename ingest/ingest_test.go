package ingest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

// newIngester opens the daemon's engine (real extractor, index and store)
// in a temporary directory, closed when the test ends.
func newIngester(t *testing.T) (*ingest.Ingester, *sqlite.Store) {
	t.Helper()
	eng := newEngine(t, true)
	return eng.Ingester, eng.Store.(*sqlite.Store)
}

// newEngine opens the daemon's engine in a temporary directory, keeping
// texts or not, closed when the test ends.
func newEngine(tb testing.TB, keepText bool) *daemon.Engine {
	tb.Helper()
	cfg := daemon.DefaultConfig()
	cfg.DataDir = tb.TempDir()
	cfg.Index.KeepText = keepText
	eng, err := daemon.OpenEngine(context.Background(), &cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	return eng
}

func zipOf(t *testing.T, members map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, text := range members {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(text))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Ingest in two halves: Prepare reads, extracts and fingerprints an object
// and its children without writing; Commit stores them together.
func TestPrepareThenCommit(t *testing.T) {
	ctx := context.Background()
	ing, st := newIngester(t)
	text := strings.Repeat("Records are kept for seven years and then destroyed. ", 40)
	archive := zipOf(t, map[string]string{"a.txt": text, "empty.txt": ""})
	p, err := ing.Prepare(ctx, ingest.Object{Key: "fs:bundle.zip", Name: "bundle.zip", Source: "test", Body: bytes.NewReader(archive)})
	if err != nil {
		t.Fatal(err)
	}
	if stats, err := st.Stats(ctx); err != nil || stats.Documents != 0 {
		t.Fatalf("after Prepare: stats %+v %v, want nothing stored", stats, err)
	}
	out, err := ing.Commit(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Inputs) != 3 || len(out.Results) != 3 {
		t.Fatalf("outcome: %d inputs, %d results, want the archive and its 2 members", len(out.Inputs), len(out.Results))
	}
	byKey := map[string]index.Result{}
	for i, in := range out.Inputs {
		if out.Results[i].ID == 0 {
			t.Errorf("%s not stored: %+v", in.Doc.Key, out.Results[i])
		}
		byKey[in.Doc.Key] = out.Results[i]
	}
	if r := byKey["fs:bundle.zip"+ingest.ChildSeparator+"a.txt"]; r.Err != nil || r.Fingerprint == nil {
		t.Errorf("member a.txt: %+v", r)
	}
	// An empty member is stored with its error, for review, not dropped.
	if r := byKey["fs:bundle.zip"+ingest.ChildSeparator+"empty.txt"]; !errors.Is(r.Err, index.ErrEmpty) {
		t.Errorf("member empty.txt: %+v, want ErrEmpty", r)
	}
	if stats, err := st.Stats(ctx); err != nil || stats.Documents != 3 {
		t.Errorf("after Commit: stats %+v %v, want 3 documents", stats, err)
	}
}

// An unreadable body is extracted as a failed document, stored for review;
// only a context that ends before anything is read fails Prepare.
func TestPrepareBadBodies(t *testing.T) {
	ctx := context.Background()
	ing, _ := newIngester(t)
	out, err := ing.Ingest(ctx, ingest.Object{Key: "fs:unreadable", Name: "unreadable", Source: "test", Body: failing{}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || len(out.Results) != 1 || out.Results[0].ID == 0 {
		t.Errorf("unreadable body: %+v, want it stored with its error", out)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ing.Prepare(cancelled, ingest.Object{Key: "fs:late", Name: "late", Source: "test", Body: strings.NewReader("text")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Prepare after cancel: %v, want context.Canceled", err)
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }
