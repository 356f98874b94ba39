package index_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
)

const buildEnv = "SIMDEX_TEST_BUILD_INDEX"

// benchText returns the English text the benchmarks draw from.
func benchText(tb testing.TB) string {
	var b strings.Builder
	for _, f := range []string{"GPL-3.0-only", "Apache-2.0", "MPL-2.0", "LGPL-2.1-only", "AGPL-3.0-only", "CC-BY-SA-4.0", "EUPL-1.2", "OSL-3.0", "GFDL-1.3-only", "Artistic-2.0"} {
		b.WriteString(corpus(tb, "spdx/text/"+f+".txt"))
		b.WriteString("\n\n")
	}
	return b.String()
}

// synthDoc makes document i: an excerpt of text with a few edits, so the
// collection has families of near-copies like a real repository.
func synthDoc(text string, i int) string {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	size := 1000 + r.IntN(6000)
	start := r.IntN(len(text) - size)
	doc := text[start : start+size]
	return fmt.Sprintf("Document %d, reference %x.\n%s\nEnd of document %d.", i, r.Uint64(), doc, i)
}

func benchIndexPath(tb testing.TB, n int) string {
	dir := os.Getenv("SIMDEX_CACHE")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "simdex")
	}
	return filepath.Join(dir, "bench", fmt.Sprintf("similar-%d-%08x.db", n, index.DefaultOptions().Scheme()))
}

// buildBenchIndex fills path with n synthetic documents (run in a child
// process so that the benchmark's peak RSS is the serving process's).
func buildBenchIndex(path string, n int) error {
	ctx := context.Background()
	opts := index.DefaultOptions()
	st, err := sqlite.Open(ctx, path+".tmp", sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		return err
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		return err
	}
	text := benchText(&testing.T{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	const batch = 64
	next := 0
	for w := 0; w < runtime.GOMAXPROCS(0)*2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				lo := next
				next += batch
				mu.Unlock()
				if lo >= n || firstErr != nil {
					return
				}
				var ins []index.Input
				for i := lo; i < min(lo+batch, n); i++ {
					ins = append(ins, input("bench/"+strconv.Itoa(i), synthDoc(text, i)))
				}
				for k := range ins {
					if _, err := ix.Add(ctx, ins[k:k+1]); err != nil {
						mu.Lock()
						firstErr = err
						mu.Unlock()
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	ix.Close()
	if err := st.Close(); err != nil {
		return err
	}
	if firstErr != nil {
		return firstErr
	}
	return os.Rename(path+".tmp", path)
}

func ensureBenchIndex(b *testing.B, n int) string {
	path := benchIndexPath(b, n)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	os.Remove(path + ".tmp")
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), buildEnv+"="+path, "SIMDEX_TEST_BUILD_N="+strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("build benchmark index: %v", err)
	}
	b.Logf("built %d-document index in %v", n, time.Since(start))
	return path
}

func peakRSS() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkSimilar measures "all versions of this file" by stored id on
// indexes of 10,000 and 1,000,000 documents, reporting latency percentiles
// and the process's peak RSS.
func BenchmarkSimilar(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			if n > 10_000 && os.Getenv("SIMDEX_BENCH_LARGE") == "" {
				b.Skip("set SIMDEX_BENCH_LARGE=1 (make bench does) to build and query the 1,000,000-document index")
			}
			path := ensureBenchIndex(b, n)
			ctx := context.Background()
			opts := index.DefaultOptions()
			st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme()})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ix, err := index.New(ctx, st, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			stats, _ := st.Stats(ctx)
			r := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			matches := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := index.DocID(1 + r.Int64N(stats.Documents))
				t := time.Now()
				ms, err := ix.Similar(ctx, id, index.DefaultThresholds())
				lat = append(lat, time.Since(t))
				if err != nil {
					b.Fatal(err)
				}
				matches += len(ms)
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(peakRSS(), "peak-RSS-MiB")
			b.ReportMetric(float64(matches)/float64(b.N), "matches/op")
		})
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
	for i := 0; i < b.N; i++ {
		if _, err := ix.Fingerprint(sum, int64(len(text)), text); err != nil {
			b.Fatal(err)
		}
	}
}
