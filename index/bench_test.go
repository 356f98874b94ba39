package index_test

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/benchcorpus"
	"github.com/simdex/simdex/internal/corpustest"
)

const buildEnv = "SIMDEX_TEST_BUILD_INDEX"

// benchText returns the English text the benchmarks draw from.
func benchText(tb testing.TB) string {
	var b strings.Builder
	for _, f := range []string{"GPL-3.0-only", "Apache-2.0", "MPL-2.0", "LGPL-2.1-only", "AGPL-3.0-only", "CC-BY-SA-4.0", "EUPL-1.2", "OSL-3.0", "GFDL-1.3-only", "Artistic-2.0"} {
		b.Write(corpustest.ReadFrom(tb, corpustest.Dir(tb), "spdx/text/"+f+".txt"))
		b.WriteString("\n\n")
	}
	return b.String()
}

// buildBenchIndex builds (or finds cached) the benchmark fixture of n
// documents; the test binary runs it as a child process (see TestMain),
// so that the benchmark process's peak RSS is that of serving queries.
// The fixture lives in the benchcorpus cache; path is not used.
func buildBenchIndex(_ string, n int) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	_, err := benchcorpus.Ensure(context.Background(), benchcorpus.Spec{Docs: n}, &benchcorpus.BuildOptions{Logger: logger})
	return err
}

// benchFixture returns the fixture of n documents, building it first in a
// child process when it is missing or stale.
func benchFixture(b *testing.B, n int) *benchcorpus.Fixture {
	b.Helper()
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), buildEnv+"=fixture", "SIMDEX_TEST_BUILD_N="+strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("build benchmark fixture: %v", err)
	}
	f, err := benchcorpus.Ensure(context.Background(), benchcorpus.Spec{Docs: n}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if d := time.Since(start); d > time.Minute {
		b.Logf("fixture of %d documents ready in %v (%.0f documents/s when built)", n, d.Round(time.Second), f.Marker.DocsPerSecond)
	}
	return f
}

// BenchmarkSimilar measures "all versions of this file" by stored id on
// the benchcorpus fixtures of 10,000 and (with SIMDEX_BENCH_LARGE set)
// 1,000,000 documents, one query at a time, reporting latency percentiles,
// the serving process's peak RSS (setup excluded, index load included)
// and matches per query:
//
//   - random: documents drawn uniformly, as a reviewer opens any
//     document; most have no near-copy;
//   - seeds: the seeds of the planted groups in turn, each with 1 to 8
//     planted near-copies that must all be found (the op fails
//     otherwise): recall is reported, and must be 1.
func BenchmarkSimilar(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			if n > 10_000 && os.Getenv("SIMDEX_BENCH_LARGE") == "" {
				b.Skip("set SIMDEX_BENCH_LARGE=1 (make bench does) to build and query the 1,000,000-document index")
			}
			f := benchFixture(b, n)
			for _, mode := range []string{"random", "seeds"} {
				b.Run(mode, func(b *testing.B) { benchSimilar(b, f, mode == "seeds") })
			}
		})
	}
}

func benchSimilar(b *testing.B, f *benchcorpus.Fixture, seeds bool) {
	ctx := context.Background()
	if err := benchcorpus.ResetPeakRSS(); err != nil {
		b.Log(err)
	}
	ix, st, err := f.Open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	defer ix.Close()
	groups := f.Corpus.Groups()
	r := rand.New(rand.NewPCG(1, 2))
	query := func(i int) (index.DocID, *benchcorpus.Group) {
		if seeds {
			g := &groups[i%len(groups)]
			return f.ID(g.Seed), g
		}
		return f.ID(r.IntN(f.Corpus.Len())), nil
	}
	// Warm the caches (the OS's and SQLite's) with queries not measured.
	for i := range 100 {
		id, _ := query(len(groups) - 1 - i)
		if _, err := ix.Similar(ctx, id, index.DefaultThresholds()); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	matches, planted, found := 0, 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id, g := query(i)
		t := time.Now()
		ms, err := ix.Similar(ctx, id, index.DefaultThresholds())
		lat = append(lat, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		matches += len(ms)
		if g == nil {
			continue
		}
		got := make(map[index.DocID]bool, len(ms))
		for _, m := range ms {
			got[m.Record.ID] = true
		}
		for _, m := range g.Members {
			planted++
			if got[f.ID(m.Doc)] {
				found++
			} else {
				b.Errorf("seed %d: planted %v copy %d not found", g.Seed, m.Kind, m.Doc)
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(benchcorpus.PeakRSS(), "peak-RSS-MiB")
	b.ReportMetric(float64(matches)/float64(b.N), "matches/op")
	if planted > 0 {
		b.ReportMetric(float64(found)/float64(planted), "recall")
	}
}

// BenchmarkFingerprint measures the full fingerprint (normalisation, both
// SHA-256 hashes, chunks, samples, MinHash, SimHash) on English text.
func BenchmarkFingerprint(b *testing.B) {
	ix, _ := openIndex(b, filepath.Join(b.TempDir(), "index.db"))
	text := []byte(benchText(b))
	sum := sha256.Sum256(text)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Fingerprint(sum, int64(len(text)), text); err != nil {
			b.Fatal(err)
		}
	}
	if s := (cpuTime() - cpu).Seconds(); s > 0 {
		b.ReportMetric(float64(len(text))*float64(b.N)/s/1e6, "cpu-MB/s")
	}
}
