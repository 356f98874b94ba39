package fleettest

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/internal/benchcorpus"
)

// benchDocSize is the size of every document BenchmarkFleetThroughput
// uploads, as in daemon's BenchmarkUploadToIndex.
const benchDocSize = 10 << 10

// benchClients is how many clients upload at once.
const benchClients = 32

// BenchmarkFleetThroughput runs 1 and then 2 replicas (or the counts in
// SIMDEX_FLEET_BENCH_REPLICAS, "1,2") on one PostgreSQL (or, with
// SIMDEX_FLEET_BENCH_DRIVER=sqlite, one replica on its own SQLite files:
// the daemon's CPU alone, in a process of its own) and the
// three-node NATS cluster, uploads SIMDEX_FLEET_BENCH_UPLOADS (default
// 3,000) distinct 10 KB texts from 32 clients, and reports documents per
// second from the first upload to the last document committed in the
// shared index, uploads per second, and the CPU milliseconds per document
// of each replica process, of PostgreSQL, of the NATS nodes, of MinIO and
// of the benchmark process itself (the uploaders and the watcher), all
// read from /proc. The replicas run the fleet test's configuration with
// the duplicate-upload search on, as by default. Run it with -benchtime 1x.
func BenchmarkFleetThroughput(b *testing.B) {
	n := benchcorpus.EnvInt(b, "SIMDEX_FLEET_BENCH_UPLOADS", 3000)
	driver := Driver(cmp.Or(os.Getenv("SIMDEX_FLEET_BENCH_DRIVER"), string(Postgres)))
	if driver != Postgres && driver != SQLite {
		b.Fatalf("SIMDEX_FLEET_BENCH_DRIVER=%q: want postgres or sqlite", driver)
	}
	for _, replicas := range benchReplicaCounts(b) {
		if driver == SQLite && replicas != 1 {
			b.Fatalf("SIMDEX_FLEET_BENCH_DRIVER=sqlite runs one replica, not %d (set SIMDEX_FLEET_BENCH_REPLICAS=1)", replicas)
		}
		b.Run(string(driver)+"-replicas-"+strconv.Itoa(replicas), func(b *testing.B) {
			f := Start(b, Options{Replicas: replicas, Driver: driver, Configure: benchConfigure})
			mc := f.MinIO.Client(b)
			w := watchDocuments(b, f)
			benchUpload(b, mc, benchDocs("warmup", 50))
			w.wait(b, 50)
			var docsPerSec, uploadsPerSec []float64
			cpu := make(map[string][]float64)
			b.ResetTimer()
			for it := range b.N {
				b.StopTimer()
				docs := benchDocs("run"+strconv.Itoa(it), n)
				before := fleetCPU(b, f)
				b.StartTimer()
				start := time.Now()
				benchUpload(b, mc, docs)
				uploaded := time.Now()
				last := w.wait(b, int64(50+(it+1)*n))
				b.StopTimer()
				for k, v := range fleetCPU(b, f) {
					cpu[k] = append(cpu[k], float64(v-before[k])/float64(time.Millisecond)/float64(n))
				}
				docsPerSec = append(docsPerSec, float64(n)/last.Sub(start).Seconds())
				uploadsPerSec = append(uploadsPerSec, float64(n)/uploaded.Sub(start).Seconds())
			}
			b.SetBytes(int64(n) * benchDocSize)
			b.ReportMetric(median(docsPerSec), "docs/s")
			b.ReportMetric(median(uploadsPerSec), "uploads/s")
			for k, v := range cpu {
				b.ReportMetric(median(v), k+"-cpu-ms/doc")
			}
		})
	}
}

// benchConfigure turns the duplicate-upload search back on: the fleet
// test turns it off (its flags depend on upload order), but it is the
// default and most of an upload's work.
func benchConfigure(_ int, cfg map[string]any) {
	cfg["policy"].(map[string]any)["duplicates"] = map[string]any{"enabled": true}
}

// fleetCPU reads the CPU time used so far by each replica ("replica0",
// …, and their sum "replicas"), by PostgreSQL ("pg"), the NATS nodes
// ("nats"), MinIO ("minio") and this process ("bench").
func fleetCPU(b *testing.B, f *Fleet) map[string]time.Duration {
	b.Helper()
	out := map[string]time.Duration{"bench": benchcorpus.CPUTime()}
	tree := func(name string, pid int) time.Duration {
		cpu, err := benchcorpus.TreeCPU(pid)
		if err != nil {
			b.Fatalf("fleettest: CPU of %s: %v", name, err)
		}
		return cpu
	}
	for _, r := range f.Replicas {
		cpu := tree(r.name, r.pid())
		out["replica"+strconv.Itoa(r.Index)] = cpu
		out["replicas"] += cpu
	}
	for _, node := range f.NATS.Nodes {
		out["nats"] += tree(node.name, node.pid())
	}
	child := func(name, cmdline string) time.Duration {
		cpu, err := benchcorpus.ChildCPU(cmdline)
		if err != nil {
			b.Fatalf("fleettest: CPU of %s: %v", name, err)
		}
		return cpu
	}
	out["minio"] = child("MinIO", "--address "+f.MinIO.Endpoint()+" ")
	if f.PG != nil {
		out["pg"] = child("PostgreSQL", fmt.Sprintf("-p %d ", f.PG.Port()))
	}
	return out
}

// benchReplicaCounts reads SIMDEX_FLEET_BENCH_REPLICAS (default "1,2").
func benchReplicaCounts(b *testing.B) []int {
	b.Helper()
	v := os.Getenv("SIMDEX_FLEET_BENCH_REPLICAS")
	if v == "" {
		return []int{1, 2}
	}
	var out []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			b.Fatalf("SIMDEX_FLEET_BENCH_REPLICAS=%q: want positive integers separated by commas", v)
		}
		out = append(out, n)
	}
	return out
}

// benchDocs returns n distinct texts of benchDocSize bytes under prefix/:
// random words of a 4,000-word vocabulary, no two alike.
func benchDocs(prefix string, n int) []Object {
	vrng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, vocabulary)
	for i := range vocab {
		vocab[i] = word(vrng)
	}
	docs := make([]Object, n)
	for i := range docs {
		rng := rand.New(rand.NewPCG(uint64(i), uint64(len(prefix))))
		key := fmt.Sprintf("%s/doc-%06d.txt", prefix, i)
		var sb strings.Builder
		sb.Grow(benchDocSize + 16)
		fmt.Fprintf(&sb, "Document %s.\n", key)
		for sb.Len() < benchDocSize {
			sb.WriteString(vocab[rng.IntN(len(vocab))])
			sb.WriteByte(' ')
		}
		docs[i] = Object{Key: key, Body: sb.String()[:benchDocSize]}
	}
	return docs
}

// benchUpload uploads docs from benchClients clients and returns when the
// last upload has returned.
func benchUpload(b *testing.B, mc *minio.Client, docs []Object) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, benchClients)
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(docs); i = int(next.Add(1)) - 1 {
				o := docs[i]
				_, err := mc.PutObject(context.Background(), Bucket, o.Key, strings.NewReader(o.Body),
					int64(len(o.Body)), minio.PutObjectOptions{ContentType: "text/plain"})
				if err != nil {
					errs <- fmt.Errorf("put %s: %w", o.Key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// docWatcher counts the top-level documents in the fleet's shared index,
// polling PostgreSQL every 20 ms, or, with the SQLite driver, the one
// replica's count of indexed events every 200 ms (each scrape costs the
// replica CPU that the benchmark measures).
type docWatcher struct {
	pool    *pgxpool.Pool
	r       *Replica             // the SQLite driver's replica, when pool is nil
	indexed int64                // its count of indexed events
	ids     benchcorpus.Frontier // ids commit out of order
	seen    map[string]struct{}  // keys seen
	at      time.Time            // when the last new key was seen
}

// watchDocuments connects to the fleet's database.
func watchDocuments(b *testing.B, f *Fleet) *docWatcher {
	b.Helper()
	if f.PG == nil {
		return &docWatcher{r: f.Replicas[0]}
	}
	dsn, err := os.ReadFile(f.secrets["dsn"])
	if err != nil {
		b.Fatalf("fleettest: read DSN: %v", err)
	}
	pool, err := pgxpool.New(context.Background(), strings.TrimSpace(string(dsn)))
	if err != nil {
		b.Fatalf("fleettest: connect to PostgreSQL: %v", err)
	}
	b.Cleanup(pool.Close)
	return &docWatcher{pool: pool, ids: benchcorpus.Frontier{HoleWait: 30 * time.Second}, seen: make(map[string]struct{})}
}

// wait polls until n distinct keys are indexed and returns when the last
// of them was first seen.
func (w *docWatcher) wait(b *testing.B, n int64) time.Time {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		seen, err := w.count()
		if err != nil {
			b.Fatalf("fleettest: %v", err)
		}
		if seen >= n {
			return w.at
		}
		if time.Now().After(deadline) {
			b.Fatalf("fleettest: only %d of %d documents indexed after 10 minutes", seen, n)
		}
		if w.r != nil {
			time.Sleep(200 * time.Millisecond)
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// count returns how many documents are indexed so far, and notes when
// the count last grew.
func (w *docWatcher) count() (int64, error) {
	if w.r == nil {
		err := w.poll()
		return int64(len(w.seen)), err
	}
	v, err := w.r.Metric("simdex_events_indexed_total")
	if err != nil {
		return 0, err
	}
	if n := int64(v); n > w.indexed {
		w.indexed, w.at = n, time.Now()
	}
	return w.indexed, nil
}

// poll reads the documents above the id below which none is missing.
func (w *docWatcher) poll() error {
	rows, err := w.pool.Query(context.Background(),
		`SELECT id, key FROM index_documents WHERE id > $1 AND parent_id IS NULL`, w.ids.Low())
	if err != nil {
		return fmt.Errorf("poll index: %w", err)
	}
	defer rows.Close()
	now := time.Now()
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			return fmt.Errorf("poll index: %w", err)
		}
		if !w.ids.Add(id) {
			continue
		}
		if _, dup := w.seen[key]; !dup {
			w.seen[key], w.at = struct{}{}, now
		}
	}
	w.ids.Advance(now)
	return rows.Err()
}

// median returns the middle of xs (the upper one of an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
