package ingest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
)

// flakyObserver fails its first Indexed call, as a policy check would
// when its store is briefly unavailable, and records every call.
type flakyObserver struct {
	mu    sync.Mutex
	calls [][]index.DocID
}

func (o *flakyObserver) Indexed(_ context.Context, ids []index.DocID) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, slices.Clone(ids))
	if len(o.calls) == 1 {
		return errors.New("policy store busy")
	}
	return nil
}

func (o *flakyObserver) Removed(context.Context, []index.DocID) {}

// TestFailedCheckIsRedeliveredAndCheckedAgain: the hold check runs before
// an event is settled; when it fails the event is left for redelivery, and
// the redelivery — already indexed, so not indexed twice — is checked
// again with the same documents, children included. This also covers a
// crash between the commit and the check.
func TestFailedCheckIsRedeliveredAndCheckedAgain(t *testing.T) {
	ctx := context.Background()
	cfg := daemon.DefaultConfig()
	cfg.DataDir = t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := daemon.OpenEngine(ctx, &cfg, logger)
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
	p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 1, Logger: logger,
		Registerer: prometheus.NewRegistry(), Observers: []ingest.Observer{obs}})
	var settled []error
	ev := connectors.Event{Kind: connectors.Created, Source: "test", Key: "box.zip", VersionID: "v1",
		Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(zipped.Bytes())), nil
		},
		Done: func(_ context.Context, err error) { settled = append(settled, err) }}
	p.Handle(ctx, ev)
	p.Handle(ctx, ev)
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
	cfg := daemon.DefaultConfig()
	cfg.DataDir = t.TempDir()
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	eng, err := daemon.OpenEngine(ctx, &cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 1, Logger: logger,
		Registerer: prometheus.NewRegistry()})
	var settled []error
	ev := connectors.Event{Kind: connectors.Created, Source: "test", Key: "empty.txt", VersionID: "v1",
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(nil)), nil },
		Done: func(_ context.Context, err error) { settled = append(settled, err) }}
	p.Handle(ctx, ev)
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

// countingBody counts the bodies open at once: a body is open from Open
// to Close, which the pipeline calls before it releases the object's share
// of the in-flight budget.
type countingBody struct {
	io.Reader
	open *atomic.Int32
}

func (b countingBody) Close() error { b.open.Add(-1); return nil }

// openTestEngine opens an engine with the default configuration in a
// temporary data directory, closed when the test ends.
func openTestEngine(t *testing.T) *daemon.Engine {
	t.Helper()
	cfg := daemon.DefaultConfig()
	cfg.DataDir = t.TempDir()
	eng, err := daemon.OpenEngine(context.Background(), &cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestPipelineBoundsBytesInFlight: with four workers and a budget of
// 1 MiB, objects of 150 KB and of 60 KB of text (which hold about four
// times that while they are extracted and fingerprinted, so that the
// workers contend for the budget) are all indexed, never more than the
// budget taken; objects of unknown size (counted here as the whole
// budget) are fetched one at a time.
func TestPipelineBoundsBytesInFlight(t *testing.T) {
	ctx := context.Background()
	eng := openTestEngine(t)
	for _, tc := range []struct {
		size, textSize int64
		wantMax        int32
	}{{150 << 10, 150 << 10, 4}, {60 << 10, 60 << 10, 4}, {-1, 10 << 10, 1}} {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			const capacity = 1 << 20
			budget := extract.NewBudget(capacity)
			p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 4, Logger: slog.New(slog.DiscardHandler),
				Memory: budget, ShutdownTimeout: time.Second, Registerer: prometheus.NewRegistry()})
			ingest.SetUnknownWeight(p, capacity)
			var open, most atomic.Int32
			var used atomic.Int64
			var settled sync.WaitGroup
			events := make(chan connectors.Event)
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { p.Run(runCtx, events); close(done) }()
			for i := range 8 {
				settled.Add(1)
				text := strings.Repeat(fmt.Sprintf("Object %d of size %d, with words enough to be fingerprinted. ", i, tc.size), int(tc.textSize)/70)
				events <- connectors.Event{Kind: connectors.Created, Source: "test", Key: fmt.Sprintf("size%d-%d.txt", tc.size, i), VersionID: "v1", Size: tc.size,
					Open: func(context.Context) (io.ReadCloser, error) {
						n := open.Add(1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						time.Sleep(20 * time.Millisecond) // long enough for others to start, were they allowed to
						if u := budget.InUse(); u > used.Load() {
							used.Store(u)
						}
						return countingBody{strings.NewReader(text), &open}, nil
					},
					Done: func(_ context.Context, err error) {
						if err != nil {
							t.Errorf("settled with %v", err)
						}
						settled.Done()
					}}
			}
			settled.Wait()
			stop()
			<-done
			if got := most.Load(); got > tc.wantMax {
				t.Errorf("%d objects fetched at once, want at most %d", got, tc.wantMax)
			}
			if u := used.Load(); u > capacity {
				t.Errorf("%d bytes of the budget taken, over its %d", u, capacity)
			}
			for i := range 8 {
				recs, err := eng.Store.Lookup(ctx, fmt.Sprintf("test/size%d-%d.txt", tc.size, i))
				if err != nil || len(recs) != 1 || recs[0].Error != "" {
					t.Errorf("object %d: %v, %v", i, recs, err)
				}
			}
		})
	}
}

// TestPipelineStopsEventsWaitingForMemory: when the pipeline stops, an
// event waiting for its share of the budget is settled with a transient
// error (to be delivered again) instead of being started, while the event
// under way finishes.
func TestPipelineStopsEventsWaitingForMemory(t *testing.T) {
	ctx := context.Background()
	eng := openTestEngine(t)
	p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 2, Logger: slog.New(slog.DiscardHandler),
		Memory: extract.NewBudget(1 << 20), ShutdownTimeout: 10 * time.Second, Registerer: prometheus.NewRegistry()})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	events := make(chan connectors.Event)
	go func() { p.Run(runCtx, events); close(done) }()
	opened, release := make(chan struct{}), make(chan struct{})
	settled := make(chan error, 2)
	ev := func(key string, open func(context.Context) (io.ReadCloser, error)) connectors.Event {
		return connectors.Event{Kind: connectors.Created, Source: "test", Key: key, VersionID: "v1", Size: 1 << 20, Open: open,
			Done: func(_ context.Context, err error) { settled <- err }}
	}
	events <- ev("first.txt", func(context.Context) (io.ReadCloser, error) {
		close(opened)
		<-release
		return io.NopCloser(strings.NewReader("The first object, under way when the pipeline stops.")), nil
	})
	<-opened
	events <- ev("second.txt", func(context.Context) (io.ReadCloser, error) {
		t.Error("the waiting event was started after the stop")
		return nil, errors.New("started")
	})
	time.Sleep(50 * time.Millisecond) // the second worker waits for memory
	stop()
	if err := <-settled; !connectors.IsTransient(err) {
		t.Errorf("waiting event settled with %v, want a transient error", err)
	}
	close(release)
	if err := <-settled; err != nil {
		t.Errorf("event under way settled with %v, want success", err)
	}
	<-done
}

// TestTransientReadIsRedelivered: a body whose read fails for a transient
// reason (a connection reset halfway through an S3 GET) leaves the event
// for redelivery with nothing stored, rather than recording the object as
// unreadable for good; the redelivery indexes it. A body that cannot be
// read for a permanent reason is still recorded with its error.
func TestTransientReadIsRedelivered(t *testing.T) {
	ctx := context.Background()
	eng := openTestEngine(t)
	logger := slog.New(slog.DiscardHandler)
	p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 1, Logger: logger,
		Registerer: prometheus.NewRegistry()})
	text := strings.Repeat("A record kept for seven years and then destroyed. ", 100)
	reset := &connectors.Error{Op: "read", Source: "test", Key: "doc.txt", Kind: connectors.Transient, Err: errors.New("connection reset by peer")}
	opens := 0
	var settled []error
	ev := connectors.Event{Kind: connectors.Created, Source: "test", Key: "doc.txt", VersionID: "v1", Size: int64(len(text)),
		Open: func(context.Context) (io.ReadCloser, error) {
			opens++
			if opens == 1 {
				return io.NopCloser(io.MultiReader(strings.NewReader(text[:1000]), &errReader{reset})), nil
			}
			return io.NopCloser(strings.NewReader(text)), nil
		},
		Done: func(_ context.Context, err error) { settled = append(settled, err) }}
	p.Handle(ctx, ev)
	if len(settled) != 1 || !connectors.IsTransient(settled[0]) {
		t.Fatalf("settled with %v, want a transient error", settled)
	}
	if st, _ := eng.Store.Stats(ctx); st.Documents != 0 {
		t.Fatalf("%d documents stored after a transient read failure, want none", st.Documents)
	}
	p.Handle(ctx, ev)
	if len(settled) != 2 || settled[1] != nil {
		t.Fatalf("redelivery settled with %v, want success", settled[1:])
	}
	if st, _ := eng.Store.Stats(ctx); st.Documents != 1 || st.Contents != 1 {
		t.Errorf("after the redelivery: %+v, want the document indexed", st)
	}

	// A permanent read failure is the object's, recorded for review.
	broken := &connectors.Error{Op: "read", Source: "test", Key: "broken.txt", Kind: connectors.Permanent, Err: errors.New("checksum mismatch")}
	ev = connectors.Event{Kind: connectors.Created, Source: "test", Key: "broken.txt", VersionID: "v1",
		Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(strings.NewReader(text[:1000]), &errReader{broken})), nil
		},
		Done: func(_ context.Context, err error) { settled = append(settled, err) }}
	p.Handle(ctx, ev)
	if len(settled) != 3 || settled[2] != nil {
		t.Fatalf("permanent read failure settled with %v, want success (recorded)", settled[2:])
	}
	if st, _ := eng.Store.Stats(ctx); st.Documents != 2 {
		t.Errorf("%d documents stored, want the unreadable one recorded too", st.Documents)
	}

	// The daemon stopping halfway through a read leaves the object to be
	// read again, not recorded as unreadable.
	stopping, stop := context.WithCancel(ctx)
	ev = connectors.Event{Kind: connectors.Created, Source: "test", Key: "late.txt", VersionID: "v1",
		Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(strings.NewReader(text[:1000]), stopReader{stop}, strings.NewReader(text[1000:]))), nil
		},
		Done: func(_ context.Context, err error) { settled = append(settled, err) }}
	p.Handle(stopping, ev)
	if len(settled) != 4 || !connectors.IsTransient(settled[3]) {
		t.Fatalf("read interrupted by the daemon stopping settled with %v, want a transient error", settled[3:])
	}
	if st, _ := eng.Store.Stats(ctx); st.Documents != 2 {
		t.Errorf("%d documents stored, want the interrupted one left out", st.Documents)
	}
}

// stopReader cancels its context when read, as a daemon stopping would.
type stopReader struct{ stop context.CancelFunc }

func (r stopReader) Read([]byte) (int, error) { r.stop(); return 0, io.EOF }

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }
