package ingest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/internal/benchcorpus"
)

// compressibleText returns size bytes of text that deflate compresses
// about 70:1, as office prose repeated from a few paragraphs does: six
// paragraphs of twelve lines of random words, in random order.
func compressibleText(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"invoice", "contract", "shipment", "payment", "customer", "supplier", "warehouse", "order",
		"delivery", "the", "of", "and", "for", "within", "thirty", "days", "agreed", "terms", "schedule", "amount",
		"due", "report", "quarter", "budget"}
	var paras [][]byte
	for range 6 {
		var b bytes.Buffer
		for l := range 12 {
			for w := range 10 {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			fmt.Fprintf(&b, " %d.\n", l)
		}
		b.WriteByte('\n')
		paras = append(paras, b.Bytes())
	}
	out := make([]byte, 0, size)
	for len(out) < size {
		p := paras[r.IntN(len(paras))]
		out = append(out, p[:min(len(p), size-len(out))]...)
	}
	return out
}

// bombZip returns a zip of members text members of size bytes each, and
// its compression ratio.
func bombZip(tb testing.TB, members, size int, seed uint64) ([]byte, float64) {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range members {
		w, err := zw.Create(fmt.Sprintf("member-%02d.txt", i))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(compressibleText(size, seed*100+uint64(i))); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), float64(members*size) / float64(buf.Len())
}

// memoryBudget is the budget of the memory tests: 256 MiB.
const memoryBudget = 256 << 20

// rssBound is the peak RSS asserted for a process whose RSS was start MiB
// before the objects came: the budget bounds the bytes the objects hold,
// so what is live stays under start and the budget, and Go's collector
// (GOGC=100) lets the heap reach about twice what is live before it
// collects; 128 MiB more for what the budget does not count (SQLite's
// caches, goroutines, copies an object stopped halfway still makes while
// it stops). 740 MiB for this test, which peaked at 607 to 649 MiB.
func rssBound(start float64, budget int64) float64 {
	return 2*(start+float64(budget>>20)) + 128
}

// TestPipelineMemoryBoundedByBudget: 24 zips of 12 text members each,
// about 70:1 (under the ratio and size limits), go through the pipeline
// at once, its 24 workers drawing from one budget of 256 MiB: every zip
// is indexed in full, and the process's peak RSS stays under rssBound.
// Before the budget charged decompressed bytes and texts (it counted the
// zips' 0.7 MB each) the peak was 2,713 MiB. Members are 4 MiB so that
// the test takes seconds on two cores; SIMDEX_MEMTEST_MEMBER_MB=100
// SIMDEX_MEMTEST_BUDGET_MB=1536 runs the 100 MB members (1.2 GB of
// text in a 17 MB zip), SIMDEX_MEMTEST_ZIPS another count.
func TestPipelineMemoryBoundedByBudget(t *testing.T) {
	ctx := context.Background()
	eng := openTestEngine(t)
	memberMB, budgetMB := 4, memoryBudget>>20
	if benchcorpus.RaceDetector {
		// No bound on RSS is asserted under the race detector (see
		// rssBound's caller), which makes the test several times slower:
		// a quarter of the bytes against a quarter of the budget keeps
		// the contention and the reading again, at a quarter of the work.
		memberMB, budgetMB = 1, budgetMB/4
	}
	zips, budget := envInt(t, "SIMDEX_MEMTEST_ZIPS", 24), int64(envInt(t, "SIMDEX_MEMTEST_BUDGET_MB", budgetMB))<<20
	size := envInt(t, "SIMDEX_MEMTEST_MEMBER_MB", memberMB) << 20
	var objs [][]byte
	for i := range zips {
		z, ratio := bombZip(t, 12, size, uint64(i))
		if i == 0 {
			t.Logf("zip of 12 members of %d MiB: %d bytes, ratio %.0f:1", size>>20, len(z), ratio)
			if ratio < 40 || ratio > extract.DefaultLimits().MaxCompressionRatio {
				t.Fatalf("ratio %.0f:1, want a realistic one under the limit", ratio)
			}
		}
		objs = append(objs, z)
	}
	reg := prometheus.NewRegistry()
	p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 24,
		Logger: slog.New(slog.DiscardHandler), Memory: extract.NewBudget(budget), ShutdownTimeout: time.Minute, Registerer: reg})
	if err := benchcorpus.ResetPeakRSS(); err != nil {
		t.Fatal(err)
	}
	base := benchcorpus.PeakRSS()
	events := make(chan connectors.Event)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { p.Run(runCtx, events); close(done) }()
	var settled sync.WaitGroup
	start := time.Now()
	for i, z := range objs {
		settled.Add(1)
		events <- connectors.Event{Kind: connectors.Created, Source: "test", Key: fmt.Sprintf("bomb-%02d.zip", i), VersionID: "v1", Size: int64(len(z)),
			Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(z)), nil },
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
	peak := benchcorpus.PeakRSS()
	bound := rssBound(base, budget)
	t.Logf("peak RSS %.0f MiB (start %.0f MiB, bound %.0f MiB), %v, %.0f objects read again", peak, base, bound,
		time.Since(start), counterSum(t, reg, "simdex_events_reread_for_memory_total"))
	if peak > bound && !benchcorpus.RaceDetector {
		t.Errorf("peak RSS %.0f MiB, over the bound of %.0f MiB", peak, bound)
	}
	for i := range objs {
		checkIndexed(t, eng, fmt.Sprintf("test/bomb-%02d.zip", i), 12)
	}
}

// checkIndexed fails unless key is stored without error with members
// children, none with an error.
func checkIndexed(t *testing.T, eng *daemon.Engine, key string, members int) {
	t.Helper()
	ctx := context.Background()
	recs, err := eng.Store.Lookup(ctx, key)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%s: %d records, %v", key, len(recs), err)
	}
	if e := recs[0].Error; e != "" && !strings.Contains(e, index.ErrEmpty.Error()) { // a zip has no text of its own
		t.Errorf("%s recorded with %s", key, e)
	}
	kids, err := eng.Store.Children(ctx, recs[0].ID)
	if err != nil || len(kids) != members {
		t.Fatalf("%s: %d children, want %d (%v)", key, len(kids), members, err)
	}
	for _, k := range kids {
		if k.Error != "" || k.Content == 0 {
			t.Errorf("%s: %s recorded with %q, content %d", key, k.Key, k.Error, k.Content)
		}
	}
}

// envInt returns the integer in the environment variable name, or def.
func envInt(tb testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return n
}

// TestObjectLargerThanBudgetIsRecorded: an object whose extraction needs
// more than the whole budget is neither dropped nor retried for ever: it
// is recorded with the error, and its event settled.
func TestObjectLargerThanBudgetIsRecorded(t *testing.T) {
	eng := openTestEngine(t)
	z, _ := bombZip(t, 12, 1<<20, 7)
	p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 2,
		Logger: slog.New(slog.DiscardHandler), Memory: extract.NewBudget(4 << 20), ShutdownTimeout: time.Minute, Registerer: prometheus.NewRegistry()})
	var settled []error
	p.Handle(context.Background(), connectors.Event{Kind: connectors.Created, Source: "test", Key: "big.zip", VersionID: "v1", Size: int64(len(z)),
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(z)), nil },
		Done: func(_ context.Context, err error) { settled = append(settled, err) }})
	if len(settled) != 1 || settled[0] != nil {
		t.Fatalf("settled with %v, want once with success", settled)
	}
	recs, err := eng.Store.Lookup(context.Background(), "test/big.zip")
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if e := recs[0].Error; !strings.Contains(e, "whole memory budget") {
		t.Errorf("recorded with %q, want the memory budget named", e)
	}
}

// counterSum returns the sum of the counter name's series in reg.
func counterSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
