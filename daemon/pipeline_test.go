package daemon

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/index"
)

// flakyObserver fails its first Indexed call, as a policy check would
// when its store is briefly unavailable, and records every call.
type flakyObserver struct {
	mu    sync.Mutex
	calls [][]index.DocID
}

func (o *flakyObserver) Indexed(_ context.Context, _ connectors.Event, ids []index.DocID) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, slices.Clone(ids))
	if len(o.calls) == 1 {
		return errors.New("policy store busy")
	}
	return nil
}

func (o *flakyObserver) Removed(context.Context, connectors.Event, []index.DocID) {}

// TestFailedCheckIsRedeliveredAndCheckedAgain: the hold check runs before
// an event is settled; when it fails the event is left for redelivery, and
// the redelivery — already indexed, so not indexed twice — is checked
// again with the same documents, children included. This also covers a
// crash between the commit and the check.
func TestFailedCheckIsRedeliveredAndCheckedAgain(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := OpenEngine(ctx, &cfg, "", logger)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for _, name := range []string{"a.txt", "b.txt"} {
		w, _ := zw.Create(name)
		io.WriteString(w, "Text of "+name+" with enough words to be compared with the others. ")
	}
	zw.Close()
	obs := &flakyObserver{}
	p := &pipeline{ing: eng.Ingester, led: eng.Store, rm: eng.Index, workers: 1, logger: logger,
		m: newPipelineMetrics(prometheus.NewRegistry()), obs: []Observer{obs}}
	var settled []error
	ev := connectors.Event{Kind: connectors.Created, Source: "test", Key: "box.zip", VersionID: "v1",
		Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(zipped.Bytes())), nil
		},
		Done: func(_ context.Context, err error) { settled = append(settled, err) }}
	p.handle(ctx, ev)
	p.handle(ctx, ev)
	if len(settled) != 2 || !connectors.IsTransient(settled[0]) || settled[1] != nil {
		t.Fatalf("settled with %v, want a transient error then success", settled)
	}
	if len(obs.calls) != 2 || len(obs.calls[0]) != 3 || !slices.Equal(obs.calls[0], obs.calls[1]) {
		t.Fatalf("checks %v, want the zip and its two members twice", obs.calls)
	}
	st, _ := eng.Store.Stats(ctx)
	if st.Documents != 3 {
		t.Errorf("%d documents stored, want 3 (indexed once)", st.Documents)
	}
}

// TestEmptyObjectIsRecordedAndLogged: an empty object is indexed with its
// error for reviewers, the event settles, and the log says so.
func TestEmptyObjectIsRecordedAndLogged(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	eng, err := OpenEngine(ctx, &cfg, "", logger)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	p := &pipeline{ing: eng.Ingester, led: eng.Store, rm: eng.Index, workers: 1, logger: logger,
		m: newPipelineMetrics(prometheus.NewRegistry())}
	var settled []error
	ev := connectors.Event{Kind: connectors.Created, Source: "test", Key: "empty.txt", VersionID: "v1",
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(nil)), nil },
		Done: func(_ context.Context, err error) { settled = append(settled, err) }}
	p.handle(ctx, ev)
	if len(settled) != 1 || settled[0] != nil {
		t.Fatalf("settled with %v, want success", settled)
	}
	if st, _ := eng.Store.Stats(ctx); st.Documents != 1 {
		t.Errorf("%d documents stored, want the empty one", st.Documents)
	}
	if !strings.Contains(logged.String(), "level=WARN msg=\"indexed without a fingerprint") || !strings.Contains(logged.String(), "empty") {
		t.Errorf("log does not report the empty object:\n%s", logged.String())
	}
}
