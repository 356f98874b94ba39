package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

// newTestAPI serves the API over a real index in a temporary directory,
// holding one stored document.
func newTestAPI(t *testing.T, maxBody int64) (*httptest.Server, string) {
	t.Helper()
	return newTestAPIWith(t, maxBody, true, nil)
}

// openTestIndex opens a real index with opts on SQLite in a temporary
// folder, closed when the test ends, and the default extractor.
func openTestIndex(t testing.TB, opts index.Options) (*index.Index, *extract.Extractor) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"), sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close(); st.Close() })
	ex, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return ix, ex
}

// newTestAPIWith is newTestAPI keeping texts or not, and reading them
// again with reread.
func newTestAPIWith(t *testing.T, maxBody int64, keepText bool, reread TextRereader) (*httptest.Server, string) {
	t.Helper()
	ctx := context.Background()
	opts := index.DefaultOptions()
	opts.KeepText = keepText
	ix, ex := openTestIndex(t, opts)
	text := strings.Repeat("The licensee may copy and distribute the work in any medium. ", 30)
	if _, err := ingest.New(ex, ix).Ingest(ctx, ingest.Object{
		Key: "test:stored.txt", Name: "stored.txt", Source: "test",
		Body: strings.NewReader(text),
	}); err != nil {
		t.Fatal(err)
	}
	a := &Server{Deps: Deps{Index: ix, Extractor: ex, Thresholds: opts.Thresholds, Registry: prometheus.NewRegistry(),
		MaxBody: maxBody, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Authn: staticAuth{}, Reread: reread}}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	signAs(srv.URL, func() string { return testAdminToken })
	return srv, text
}

func TestAPISimilarByUpload(t *testing.T) {
	srv, text := newTestAPI(t, 1<<20)
	edited := strings.Replace(text, "medium", "form", 3)
	resp, err := http.Post(srv.URL+"/api/v1/similar?name=draft.txt", "text/plain", strings.NewReader(edited))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Matches []map[string]any `json:"matches"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if len(got.Matches) != 1 {
		t.Fatalf("matches = %v, want the stored document", got.Matches)
	}
	m := got.Matches[0]
	for _, k := range []string{"id", "name", "resemblance", "containment_ab", "containment_ba", "bytes_in_common", "hamming", "exact"} {
		if _, ok := m[k]; !ok {
			t.Errorf("match has no %q (contract of issue 5): %v", k, m)
		}
	}
	if m["name"] != "stored.txt" || m["exact"] != false {
		t.Errorf("match = %v", m)
	}
}

func TestAPIBadRequests(t *testing.T) {
	srv, _ := newTestAPI(t, 1024)
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/api/v1/documents/abc/similar", "", http.StatusBadRequest},
		{"GET", "/api/v1/documents/999999/similar", "", http.StatusNotFound},
		{"GET", "/api/v1/documents/1/similar?resemblance=2", "", http.StatusBadRequest},
		{"GET", "/api/v1/documents/999999", "", http.StatusNotFound},
		{"POST", "/api/v1/similar", strings.Repeat("too large ", 200), http.StatusRequestEntityTooLarge},
		{"POST", "/api/v1/similar", "", http.StatusUnprocessableEntity},
		{"POST", "/api/v1/similar", "\x00\x01\x02binary\xff\xfe", http.StatusUnprocessableEntity},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, bytes.NewBufferString(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || !strings.Contains(string(b), `"error"`) {
			t.Errorf("%s %s (%q): %d %s, want %d with an error message", c.method, c.path, c.body, resp.StatusCode, b, c.want)
		}
	}
}
