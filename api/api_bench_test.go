package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/benchcorpus"
	"github.com/simdex/simdex/internal/daemontest"
	"github.com/simdex/simdex/policy"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
)

// apiBenchDocs is the size of the index the API benchmarks query: 10,000
// by default, 1,000,000 (the figure) with SIMDEX_BENCH_LARGE=1, or
// SIMDEX_BENCH_API_DOCS.
func apiBenchDocs(b *testing.B) int {
	if v := os.Getenv("SIMDEX_BENCH_API_DOCS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("SIMDEX_BENCH_API_DOCS=%q: want a count >= 100", v)
		}
		return n
	}
	if os.Getenv("SIMDEX_BENCH_LARGE") != "" {
		return 1_000_000
	}
	return 10_000
}

// apiBenchDaemon runs a daemon over the cached benchmark fixture of n
// documents (built once by benchcorpus, then only read) and returns its
// address, its admin token and the fixture.
func apiBenchDaemon(b *testing.B, n int, flags int) (string, string, *benchcorpus.Fixture) {
	b.Helper()
	fx, err := benchcorpus.Ensure(context.Background(), benchcorpus.Spec{Docs: n, KeepText: false},
		&benchcorpus.BuildOptions{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		b.Fatal(err)
	}
	cfg := daemon.DefaultConfig()
	cfg.DataDir = b.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.Index.Path = fx.Path
	cfg.Connectors.NATS = nil
	cfg.Log.Level = "warn"
	if os.Getenv("SIMDEX_BENCH_ANCHORS") == "disk" { // to compare with memory in one build
		cfg.Index.AnchorsInMemory = false
	}
	if flags > 0 {
		addOpenFlags(b, cfg, flags)
	}
	d := daemontest.Start(b, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	tok, err := daemon.ReadTokenFile(cfg.InitialAdminTokenPath())
	if err != nil {
		b.Fatal(err)
	}
	if cfg.Index.AnchorsInMemory {
		// Steady state: the lists load in the background after start.
		waitFor(b, 10*time.Minute, "anchor lists in memory", func() bool {
			resp, err := http.Get("http://" + d.Addr().String() + "/metrics")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return strings.Contains(string(body), "\nsimdex_index_anchor_lists_in_memory 1\n")
		})
	}
	return d.Addr().String(), tok, fx
}

// addOpenFlags stores n open disposition flags in the policy store, as a
// retention run over n documents would, marked published so that no alert
// goes out.
func addOpenFlags(b *testing.B, cfg daemon.Config, n int) {
	ctx := context.Background()
	st, err := policysqlite.Open(ctx, cfg.PolicyPath())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	flags := make([]policy.Flag, n)
	for i := range flags {
		key := fmt.Sprintf("records/%06d.txt", i)
		flags[i] = policy.Flag{Kind: policy.KindDispositionDue,
			Document: policy.DocRef{ID: index.DocID(i + 1), Name: key, Source: "bench", Key: key},
			Object:   policy.Object{Source: "bench", Key: key, IndexKey: key}, Rule: "records-7y",
			Evidence: policy.Evidence{Role: "selected", Due: now.Add(-24 * time.Hour), Action: "review"}, Status: policy.StatusOpen}
	}
	added, err := st.AddFlags(ctx, flags, "bench", now)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int64, len(added))
	for i, f := range added {
		ids[i] = f.ID
	}
	if err := st.MarkPublished(ctx, ids); err != nil {
		b.Fatal(err)
	}
}

// loadRuns numbers loadTest's runs: each draws its own requests, so that
// the runs of -count N do not repeat the first one's queries on caches it
// warmed.
var loadRuns atomic.Uint64

// loadWarmup is how many unmeasured requests each run sends first: caches
// (SQLite's pages, the boilerplate keys) start cold in a new process, and
// the figure wanted is the daemon's steady state.
const loadWarmup = 1000

// loadTest sends loadWarmup unmeasured requests, then b.N measured ones,
// from clients concurrent clients, the path of each chosen by next, and
// reports latency percentiles in milliseconds.
func loadTest(b *testing.B, addr, token string, clients int, next func(r *rand.Rand) string) {
	b.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	run := loadRuns.Add(1)
	var failed sync.Once
	drive := func(n int, stream uint64) [][]float64 {
		lat := make([][]float64, clients)
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(c), run<<8|stream))
				for i := c; i < n; i += clients {
					path := next(r)
					req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
					req.Header.Set("Authorization", "Bearer "+token)
					t := time.Now()
					resp, err := hc.Do(req)
					if err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if err == nil && resp.StatusCode != http.StatusOK {
							err = fmt.Errorf("%s", resp.Status)
						}
					}
					if err != nil {
						failed.Do(func() { b.Errorf("GET %s: %v", path, err) })
						return
					}
					lat[c] = append(lat[c], float64(time.Since(t))/float64(time.Millisecond))
				}
			}()
		}
		wg.Wait()
		return lat
	}
	drive(loadWarmup, 1)
	b.ResetTimer()
	lat := drive(b.N, 2)
	b.StopTimer()
	var all []float64
	for _, l := range lat {
		all = append(all, l...)
	}
	b.ReportMetric(percentile(all, 50), "p50-ms")
	b.ReportMetric(percentile(all, 99), "p99-ms")
	b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkAPISimilar: "all versions of this file" by id, from 50
// concurrent clients, over the benchmark fixture (10,000 documents, or
// 1,000,000 with SIMDEX_BENCH_LARGE=1). Half the queries ask for a planted
// seed (which has near-copies), half for any document.
func BenchmarkAPISimilar(b *testing.B) {
	n := apiBenchDocs(b)
	addr, tok, fx := apiBenchDaemon(b, n, 0)
	groups := fx.Corpus.Groups()
	b.Run(fmt.Sprintf("docs=%d/clients=50", n), func(b *testing.B) {
		loadTest(b, addr, tok, 50, func(r *rand.Rand) string {
			var id index.DocID
			if r.IntN(2) == 0 && len(groups) > 0 {
				id = fx.ID(groups[r.IntN(len(groups))].Seed)
			} else {
				id = fx.ID(r.IntN(n))
			}
			return fmt.Sprintf("/api/v1/documents/%d/similar", id)
		})
	})
}

// BenchmarkAPIReviewQueue: one page of 100 open flags of 10,000, at a
// random position (keyset paging), from 10 concurrent reviewers.
func BenchmarkAPIReviewQueue(b *testing.B) {
	const flags = 10_000
	addr, tok, _ := apiBenchDaemon(b, 1000, flags)
	b.Run(fmt.Sprintf("flags=%d/page=100/clients=10", flags), func(b *testing.B) {
		loadTest(b, addr, tok, 10, func(r *rand.Rand) string {
			return fmt.Sprintf("/api/v1/flags?status=open&limit=100&after=%d", r.IntN(flags-100))
		})
	})
}

// percentile returns the p-th percentile (nearest rank) of xs.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
