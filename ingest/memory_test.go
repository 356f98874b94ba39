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
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/extract"
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

// memberSize is the size of each member of the test's zips: 4 MiB, or
// SIMDEX_MEMTEST_MEMBER_MB MiB.
func memberSize(tb testing.TB) int {
	if s := os.Getenv("SIMDEX_MEMTEST_MEMBER_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			tb.Fatalf("SIMDEX_MEMTEST_MEMBER_MB: %v", err)
		}
		return n << 20
	}
	return 4 << 20
}

func TestPipelineMemoryBoundedByBudget(t *testing.T) {
	ctx := context.Background()
	eng := openTestEngine(t)
	zips := 24
	if s := os.Getenv("SIMDEX_MEMTEST_ZIPS"); s != "" {
		zips, _ = strconv.Atoi(s)
	}
	size := memberSize(t)
	var objs [][]byte
	for i := range zips {
		z, ratio := bombZip(t, 12, size, uint64(i))
		if i == 0 {
			t.Logf("zip of 12 members of %d MiB: %d bytes, ratio %.0f:1", size>>20, len(z), ratio)
		}
		objs = append(objs, z)
	}
	p := ingest.NewPipeline(ingest.PipelineOptions{Ingester: eng.Ingester, Ledger: eng.Store, Remover: eng.Index, Workers: 24,
		Logger: slog.New(slog.DiscardHandler), Memory: extract.NewBudget(256 << 20), ShutdownTimeout: time.Minute, Registerer: prometheus.NewRegistry()})
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
	t.Logf("peak RSS %.0f MiB (base %.0f MiB), %v", benchcorpus.PeakRSS(), base, time.Since(start))
}
