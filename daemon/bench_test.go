package daemon

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the index watcher
	"github.com/minio/minio-go/v7"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/benchcorpus"
	"github.com/simdex/simdex/internal/corpustest"
	"github.com/simdex/simdex/internal/miniotest"
	"github.com/simdex/simdex/internal/natstest"
	"github.com/simdex/simdex/internal/pgtest"
)

// Benchmarks for issue 5 (scripts/bench.d/40-daemon.sh writes them into
// docs/BENCHMARKS.md): a real MinIO whose NATS target publishes bucket
// events to a real JetStream stream, and the daemon in this process
// consuming them, all on the same machine.
//
// The daemon runs with the production defaults of config.yaml
// (DefaultConfig: pipeline.workers 24, memory.budget a quarter of the machine's memory, index.durability full — one fsync
// per commit batch — and the default extraction limits), one S3 connector
// in jetstream mode, with backfill and reconciliation off so that only the
// event path is measured. MinIO runs with MINIO_API_SYNC_EVENTS=on, as in
// the integration tests: an upload returns once its event is stored in
// JetStream, so no event is dropped from MinIO's in-memory queue.
//
// "Committed" is observed from outside the daemon: a read-only SQLite
// connection to the daemon's index polls the documents table every
// millisecond, so a document counts when its transaction is visible to
// readers (upper bound, within the polling interval, of the commit time).
//
// With SIMDEX_BENCH_DRIVER=postgres the stores are in a database of a
// PostgreSQL server of the benchmark's own (pgtest.Start), which the
// watcher polls instead, every 10 ms rather than every millisecond so that
// its queries add little to the server's CPU.
//
// Without MinIO (`make minio`) these benchmarks fail; they never skip.

// benchDocSize is the size of every uploaded document.
const benchDocSize = 10 << 10

// newBenchRig is newRig for benchmarks.
func newBenchRig(b *testing.B, syncEvents bool) *rig {
	b.Helper()
	ns := natstest.Start(b)
	js, err := natsjs.New(ns.Conn(b))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := js.CreateStream(context.Background(), natsjs.StreamConfig{
		Name: eventStream, Subjects: []string{eventSubject}, Storage: natsjs.FileStorage,
	}); err != nil {
		b.Fatalf("create event stream: %v", err)
	}
	ms := miniotest.Start(b, miniotest.Options{NATSAddress: strings.TrimPrefix(ns.URL(), "nats://"), NATSSubject: eventSubject, JetStream: true, SyncEvents: syncEvents})
	r := &rig{ns: ns, minio: ms, mc: ms.Client(b), bucket: "records"}
	makeVersionedBucket(b, r.mc, r.bucket)
	ms.EnableNotifications(b, r.bucket)
	r.env = []string{"TEST_S3_ACCESS=" + ms.AccessKey(), "TEST_S3_SECRET=" + ms.SecretKey()}
	return r
}

// makeVersionedBucket is miniotest's MakeBucket, retried while MinIO, live
// but still starting (on a loaded machine), answers "Server not
// initialized yet".
func makeVersionedBucket(b *testing.B, mc *minio.Client, name string) {
	b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := mc.MakeBucket(ctx, name, minio.MakeBucketOptions{})
		if minio.ToErrorResponse(err).Code == "BucketAlreadyOwnedByYou" {
			err = nil // made by an earlier attempt whose versioning failed
		}
		if err == nil {
			err = mc.EnableVersioning(ctx, name)
		}
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "not initialized") || time.Now().After(deadline) {
			b.Fatalf("make bucket %s: %v", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// benchConfig is the production default configuration with the rig's
// bucket as its only connector.
func (r *rig) benchConfig(dataDir string) Config {
	cfg := DefaultConfig()
	cfg.DataDir = dataDir
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.URL = r.ns.URL()
	cfg.Connectors.FS.Dirs = nil
	cfg.Connectors.NATS = nil
	cfg.Connectors.S3 = []S3SourceConfig{{
		Name: "records", Endpoint: r.minio.Endpoint(), Bucket: r.bucket, Mode: "jetstream",
		Stream: eventStream, Subject: eventSubject, AccessKeyEnv: "TEST_S3_ACCESS", SecretKeyEnv: "TEST_S3_SECRET",
	}}
	// Diagnosis only: the published figures use the defaults.
	if v := os.Getenv("SIMDEX_BENCH_DURABILITY"); v != "" {
		cfg.Index.Durability = sqlite.Durability(v)
	}
	if v, err := strconv.Atoi(os.Getenv("SIMDEX_BENCH_WORKERS")); err == nil && v > 0 {
		cfg.Pipeline.Workers = v
	}
	if os.Getenv("SIMDEX_BENCH_DUPLICATES") == "off" {
		cfg.Policy.Duplicates.Enabled = false
	}
	benchAnchors(&cfg)
	return cfg
}

// benchAnchors reads anchor lists from disk when SIMDEX_BENCH_ANCHORS is
// "disk", to compare with the default (in memory) in the same build.
func benchAnchors(cfg *Config) {
	if os.Getenv("SIMDEX_BENCH_ANCHORS") == "disk" {
		cfg.Index.AnchorsInMemory = false
	}
}

// benchStore moves the stores of cfg to a PostgreSQL server of the
// benchmark's own when SIMDEX_BENCH_DRIVER is "postgres" and returns the
// server (nil on SQLite, the default), adding its DSN's variable to r.env.
func (r *rig) benchStore(b *testing.B, cfg *Config) *pgtest.Server {
	b.Helper()
	switch v := os.Getenv("SIMDEX_BENCH_DRIVER"); v {
	case "", DriverSQLite:
		return nil
	case DriverPostgres:
	default:
		b.Fatalf("SIMDEX_BENCH_DRIVER=%q: want sqlite or postgres", v)
	}
	pg := pgtest.Start(b)
	cfg.Store.Driver = DriverPostgres
	cfg.Store.Postgres.DSNEnv = "TEST_PG_DSN"
	r.env = append(r.env, "TEST_PG_DSN="+pg.NewDatabase(b))
	return pg
}

// serverCPU returns the CPU time PostgreSQL's processes have used, 0
// without a server.
func serverCPU(b *testing.B, pg *pgtest.Server) time.Duration {
	b.Helper()
	if pg == nil {
		return 0
	}
	cpu, err := benchcorpus.ChildCPU(fmt.Sprintf("-p %d ", pg.Port()))
	if err != nil {
		b.Fatalf("PostgreSQL's CPU: %v", err)
	}
	return cpu
}

// startBenchDaemon runs a daemon in-process until the benchmark ends,
// logging its warnings and errors to the benchmark log.
func startBenchDaemon(b *testing.B, cfg Config, env []string) *Daemon {
	b.Helper()
	return startDaemonLogging(b, cfg, env, slog.LevelWarn)
}

// indexWatcher polls the daemon's index for newly committed documents and
// records when it first saw each object key.
type indexWatcher struct {
	db     *sql.DB
	query  string                // the top-level documents with an id above $1
	ids    *benchcorpus.Frontier // postgres: ids commit out of order
	every  time.Duration         // pause between polls that find nothing
	prefix string                // document key prefix of the bucket's objects

	mu    sync.Mutex
	seen  map[string]time.Time
	count atomic.Int64
	err   error

	stop chan struct{}
	done chan struct{}
}

func watchIndex(b *testing.B, cfg Config) *indexWatcher {
	b.Helper()
	w := &indexWatcher{
		query:  `SELECT id, key FROM document_view WHERE id > ? AND parent_id IS NULL ORDER BY id`,
		every:  time.Millisecond,
		prefix: "s3:" + cfg.Connectors.S3[0].Name + "/" + cfg.Connectors.S3[0].Bucket + "/",
		seen:   make(map[string]time.Time),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	var err error
	if cfg.Store.Driver == DriverPostgres {
		w.db, err = sql.Open("pgx", os.Getenv(cfg.Store.Postgres.DSNEnv))
		w.query = `SELECT id, key FROM index_documents WHERE id > $1 AND parent_id IS NULL ORDER BY id`
		w.ids, w.every = &benchcorpus.Frontier{HoleWait: 30 * time.Second}, 10*time.Millisecond
	} else {
		w.db, err = sql.Open("sqlite", "file:"+cfg.IndexPath()+"?mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	}
	if err != nil {
		b.Fatal(err)
	}
	w.db.SetMaxOpenConns(1)
	go w.run()
	b.Cleanup(func() {
		w.Stop()
		w.db.Close()
	})
	return w
}

func (w *indexWatcher) run() {
	defer close(w.done)
	var last int64
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		n, err := w.poll(&last)
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			return
		}
		if n == 0 || w.ids != nil {
			time.Sleep(w.every)
		}
	}
}

// poll reads the top-level documents committed after id *last (on
// PostgreSQL, above every id below which none is missing) and returns
// how many were new.
func (w *indexWatcher) poll(last *int64) (int, error) {
	from := *last
	if w.ids != nil {
		from = w.ids.Low()
	}
	rows, err := w.db.Query(w.query, from)
	if err != nil {
		return 0, fmt.Errorf("poll index: %w", err)
	}
	defer rows.Close()
	now := time.Now()
	n := 0
	w.mu.Lock()
	defer w.mu.Unlock()
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			return n, fmt.Errorf("poll index: %w", err)
		}
		*last = max(*last, id)
		if w.ids != nil && !w.ids.Add(id) {
			continue
		}
		key = strings.TrimPrefix(key, w.prefix)
		if _, dup := w.seen[key]; !dup {
			w.seen[key] = now
			w.count.Add(1)
			n++
		}
	}
	if w.ids != nil {
		w.ids.Advance(now)
	}
	return n, rows.Err()
}

func (w *indexWatcher) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// waitCount waits until n distinct keys are committed and returns when
// the last one was seen.
func (w *indexWatcher) waitCount(b *testing.B, n int64, limit time.Duration) time.Time {
	b.Helper()
	deadline := time.Now().Add(limit)
	for w.count.Load() < n {
		w.mu.Lock()
		err := w.err
		w.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d documents committed after %v", w.count.Load(), n, limit)
		}
		time.Sleep(time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var latest time.Time
	for _, t := range w.seen {
		if t.After(latest) {
			latest = t
		}
	}
	return latest
}

func (w *indexWatcher) seenAt(key string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.seen[key]
	return t, ok
}

// benchWords is the vocabulary of the generated documents: the words of
// the Debian Policy manual, so that documents look like English prose. It
// reads the committed fixture (testdata/corpora), the same bytes as the
// full corpus's, because the unit tests generate documents with it too.
func benchWords(b testing.TB) []string {
	b.Helper()
	path := corpustest.Path("debian-docs/raw/debian-policy/usr/share/doc/debian-policy/policy.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("the benchmark builds its documents from the debian-docs corpus: %v", err)
	}
	words := strings.Fields(string(data))
	if len(words) < 1000 {
		b.Fatalf("%s: only %d words", path, len(words))
	}
	return words
}

// benchDocs returns n distinct documents of benchDocSize bytes: random
// runs of corpus words, each document its own random sequence.
func benchDocs(b testing.TB, prefix string, n int) (keys []string, bodies [][]byte) {
	words := benchWords(b)
	keys = make([]string, n)
	bodies = make([][]byte, n)
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 0x5eed))
		keys[i] = fmt.Sprintf("%s/doc-%06d.txt", prefix, i)
		var sb strings.Builder
		sb.Grow(benchDocSize + 64)
		fmt.Fprintf(&sb, "Document %s.\n", keys[i])
		for sb.Len() < benchDocSize {
			start := rng.IntN(len(words) - 40)
			for _, w := range words[start : start+5+rng.IntN(30)] {
				sb.WriteString(w)
				sb.WriteByte(' ')
			}
			sb.WriteString("\n")
		}
		bodies[i] = []byte(sb.String()[:benchDocSize])
	}
	return keys, bodies
}

func (r *rig) putBytes(ctx context.Context, key string, body []byte) error {
	_, err := r.mc.PutObject(ctx, r.bucket, key, strings.NewReader(string(body)), int64(len(body)), minio.PutObjectOptions{ContentType: "text/plain"})
	return err
}

// warmUp uploads a few documents and waits for them: connections are
// open, the consumer is bound, the index file exists.
func warmUp(b *testing.B, r *rig, w *indexWatcher) {
	b.Helper()
	keys, bodies := benchDocs(b, "warmup", 50)
	for i := range keys {
		if err := r.putBytes(context.Background(), keys[i], bodies[i]); err != nil {
			b.Fatalf("put %s: %v", keys[i], err)
		}
	}
	w.waitCount(b, int64(len(keys)), 60*time.Second)
}

// uploadAll uploads the documents from clients concurrent clients and
// returns when the last upload has returned.
func uploadAll(b *testing.B, r *rig, keys []string, bodies [][]byte, clients int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var errOnce sync.Once
	var putErr error
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(keys) {
					return
				}
				if err := r.putBytes(context.Background(), keys[i], bodies[i]); err != nil {
					errOnce.Do(func() { putErr = fmt.Errorf("put %s: %w", keys[i], err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if putErr != nil {
		b.Fatal(putErr)
	}
}

// uploadClients is how many concurrent clients upload in the throughput
// benchmarks.
const uploadClients = 32

// BenchmarkMinIOUpload measures the ceiling BenchmarkUploadToIndex cannot
// pass on this machine: MinIO alone (no daemon) taking 10 KB uploads from
// 32 clients into the versioned bucket whose events go to JetStream, with
// MINIO_API_SYNC_EVENTS on (as the daemon benchmarks run it) and off
// (MinIO's default: events are queued in memory and may be dropped).
func BenchmarkMinIOUpload(b *testing.B) {
	for _, sync := range []bool{true, false} {
		name := "sync-events"
		if !sync {
			name = "async-events"
		}
		b.Run(name, func(b *testing.B) {
			n := benchcorpus.EnvInt(b, "SIMDEX_BENCH_DOCS", 5000)
			r := newBenchRig(b, sync)
			keys, bodies := benchDocs(b, "warmup", 50)
			uploadAll(b, r, keys, bodies, uploadClients)
			var rates []float64
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				keys, bodies := benchDocs(b, fmt.Sprintf("run%d", it), n)
				b.StartTimer()
				start := time.Now()
				uploadAll(b, r, keys, bodies, uploadClients)
				rates = append(rates, float64(n)/time.Since(start).Seconds())
			}
			b.StopTimer()
			b.SetBytes(int64(n) * benchDocSize)
			b.ReportMetric(median(rates), "uploads/s")
		})
	}
}

// BenchmarkUploadToIndex uploads SIMDEX_BENCH_DOCS (default 5000) distinct
// 10 KB text documents to MinIO from uploadClients (32) concurrent clients
// as fast as they go, and measures documents per second from the first upload to the last
// document committed in the index. Run it with -benchtime 1x: each
// iteration is a whole batch.
func BenchmarkUploadToIndex(b *testing.B) {
	n := benchcorpus.EnvInt(b, "SIMDEX_BENCH_DOCS", 5000)
	r := newBenchRig(b, true)
	cfg := r.benchConfig(b.TempDir())
	pg := r.benchStore(b, &cfg)
	d := startBenchDaemon(b, cfg, r.env)
	w := watchIndex(b, cfg)
	warmUp(b, r, w)
	committed := w.count.Load()
	defer logStages(b, d)
	b.ResetTimer()
	var docsPerSec, uploadsPerSec, cpuPerDoc, pgPerDoc []float64
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		keys, bodies := benchDocs(b, fmt.Sprintf("run%d", it), n)
		b.StartTimer()
		start, cpu, pgCPU := time.Now(), benchcorpus.CPUTime(), serverCPU(b, pg)
		uploadAll(b, r, keys, bodies, uploadClients)
		uploaded := time.Now()
		committed += int64(n)
		last := w.waitCount(b, committed, 10*time.Minute)
		cpuPerDoc = append(cpuPerDoc, msPerDoc(benchcorpus.CPUTime()-cpu, n))
		pgPerDoc = append(pgPerDoc, msPerDoc(serverCPU(b, pg)-pgCPU, n))
		b.StopTimer()
		for _, k := range keys {
			if _, ok := w.seenAt(k); !ok {
				b.Fatalf("%s not indexed", k)
			}
		}
		docsPerSec = append(docsPerSec, float64(n)/last.Sub(start).Seconds())
		uploadsPerSec = append(uploadsPerSec, float64(n)/uploaded.Sub(start).Seconds())
		b.StartTimer()
	}
	b.StopTimer()
	b.SetBytes(int64(n) * benchDocSize)
	b.ReportMetric(median(docsPerSec), "docs/s")
	b.ReportMetric(median(uploadsPerSec), "uploads/s")
	b.ReportMetric(float64(n), "docs/op")
	// The process's CPU per document: the daemon's, plus the test's own
	// S3 client uploading (MinIO runs in its own process).
	b.ReportMetric(median(cpuPerDoc), "cpu-ms/doc")
	if pg != nil {
		// PostgreSQL's processes, the watcher's polling included.
		b.ReportMetric(median(pgPerDoc), "pg-cpu-ms/doc")
	}
}

// msPerDoc is cpu in milliseconds per one of n documents.
func msPerDoc(cpu time.Duration, n int) float64 {
	return float64(cpu) / float64(time.Millisecond) / float64(n)
}

// BenchmarkLatency200 uploads 10 KB documents at a steady 200 per second
// for SIMDEX_BENCH_SECONDS (default 15) — an open loop: each upload starts
// on its schedule, whatever the previous ones are doing — and measures, for
// each document, the time from the end of its upload (PutObject returned)
// to its commit in the index. Run it with -benchtime 1x.
func BenchmarkLatency200(b *testing.B) {
	const rate = 200
	secs := benchcorpus.EnvInt(b, "SIMDEX_BENCH_SECONDS", 15)
	n := rate * secs
	r := newBenchRig(b, true)
	cfg := r.benchConfig(b.TempDir())
	r.benchStore(b, &cfg)
	d := startBenchDaemon(b, cfg, r.env)
	w := watchIndex(b, cfg)
	warmUp(b, r, w)
	committed := w.count.Load()
	defer logStages(b, d)
	b.ResetTimer()
	var all, fromStart, puts []float64
	var achieved []float64
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		keys, bodies := benchDocs(b, fmt.Sprintf("paced%d", it), n)
		putStart := make([]time.Time, n)
		putDone := make([]time.Time, n)
		b.StartTimer()
		var wg sync.WaitGroup
		var errOnce sync.Once
		var putErr error
		begin := time.Now()
		for i := range n {
			at := begin.Add(time.Duration(i) * time.Second / rate)
			time.Sleep(time.Until(at))
			wg.Add(1)
			go func() {
				defer wg.Done()
				putStart[i] = time.Now()
				if err := r.putBytes(context.Background(), keys[i], bodies[i]); err != nil {
					errOnce.Do(func() { putErr = fmt.Errorf("put %s: %w", keys[i], err) })
				}
				putDone[i] = time.Now()
			}()
		}
		wg.Wait()
		if putErr != nil {
			b.Fatal(putErr)
		}
		achieved = append(achieved, float64(n)/slices.MaxFunc(putStart, time.Time.Compare).Sub(begin).Seconds())
		committed += int64(n)
		w.waitCount(b, committed, 5*time.Minute)
		b.StopTimer()
		for i, k := range keys {
			seen, ok := w.seenAt(k)
			if !ok {
				b.Fatalf("%s not indexed", k)
			}
			// A document can be committed before PutObject has returned
			// to the client: that is zero latency, not negative.
			all = append(all, max(0, seen.Sub(putDone[i]).Seconds()*1000))
			fromStart = append(fromStart, seen.Sub(putStart[i]).Seconds()*1000)
			puts = append(puts, putDone[i].Sub(putStart[i]).Seconds()*1000)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(percentile(all, 50), "p50-ms")
	b.ReportMetric(percentile(all, 99), "p99-ms")
	b.ReportMetric(percentile(all, 100), "max-ms")
	b.ReportMetric(percentile(fromStart, 99), "p99-from-put-start-ms")
	b.ReportMetric(percentile(puts, 99), "put-p99-ms")
	b.ReportMetric(median(achieved), "uploads/s")
}

// logStages logs the mean time per pipeline stage from the daemon's
// metrics (warm-up included), to tell where the time goes.
func logStages(b *testing.B, d *Daemon) {
	mfs, err := d.Registry().Gather()
	if err != nil {
		b.Logf("gather metrics: %v", err)
		return
	}
	for _, mf := range mfs {
		if mf.GetName() != "simdex_stage_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			stage := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" {
					stage = l.GetValue()
				}
			}
			if h.GetSampleCount() > 0 {
				b.Logf("stage %s: %d events, mean %.1f ms", stage, h.GetSampleCount(), 1000*h.GetSampleSum()/float64(h.GetSampleCount()))
			}
		}
	}
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

func median(xs []float64) float64 { return percentile(xs, 50) }
