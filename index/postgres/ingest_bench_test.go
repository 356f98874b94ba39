package postgres_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/index"
	indexpg "github.com/simdex/simdex/index/postgres"
	"github.com/simdex/simdex/internal/benchcorpus"
	"github.com/simdex/simdex/internal/corpustest"
	"github.com/simdex/simdex/internal/pgtest"
)

// ingestDocSize is the size of the daemon benchmark's documents.
const ingestDocSize = 10 << 10

// BenchmarkIngestSearch measures PostgreSQL's CPU per ingested document
// on the daemon's path without the daemon: each document is added (one
// Put) and then searched for near-copies as the policy's duplicate-upload
// check does (Similar by id), into an index of SIMDEX_BENCH_DOCS
// documents (default 5,000) made like the daemon benchmark's: random runs
// of words of the Debian policy. It reports the server's CPU per document
// (pg-cpu-ms/doc), split into the Put (pg-add-ms/doc) and the search
// (pg-search-ms/doc). With SIMDEX_BENCH_PGSS=1 the server loads
// pg_stat_statements and the benchmark logs each statement's calls, time,
// rows and buffers per document; with SIMDEX_BENCH_EXPLAIN=1 it prints
// EXPLAIN (ANALYZE, BUFFERS) of each reading statement's last call.
func BenchmarkIngestSearch(b *testing.B) {
	ctx := context.Background()
	pgss := os.Getenv("SIMDEX_BENCH_PGSS") != ""
	srv := ingestServer(b, pgss)
	cfg, err := pgxpool.ParseConfig(srv.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	calls := &lastCalls{args: map[string][]any{}}
	cfg.ConnConfig.Tracer = calls
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	opts := index.DefaultOptions()
	opts.KeepText = true // as the daemon
	st, err := indexpg.New(ctx, pool, indexpg.Options{Scheme: opts.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	words := ingestWords(b)
	preload := benchcorpus.EnvInt(b, "SIMDEX_BENCH_DOCS", 5000)
	for i := 0; i < preload; i += 100 {
		var in []index.Input
		for j := i; j < min(i+100, preload); j++ {
			in = append(in, ingestInput(words, "pre", j))
		}
		if _, err := ix.Add(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil { // as autovacuum would
		b.Fatal(err)
	}
	if pgss {
		if _, err := pool.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			b.Fatal(err)
		}
	}
	th := index.Thresholds{Scope: index.Scope{Resemblance: 0.9, Containment: 0.95}, Hamming: -1}
	var addCPU, searchCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := serverCPU(b, srv)
		res, err := ix.Add(ctx, []index.Input{ingestInput(words, "new", preload+i)})
		if err != nil {
			b.Fatal(err)
		}
		c1 := serverCPU(b, srv)
		if _, err := ix.Similar(ctx, res[0].ID, th); err != nil {
			b.Fatal(err)
		}
		c2 := serverCPU(b, srv)
		addCPU += c1 - c0
		searchCPU += c2 - c1
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(addCPU+searchCPU), "pg-cpu-ms/doc")
	b.ReportMetric(ms(addCPU), "pg-add-ms/doc")
	b.ReportMetric(ms(searchCPU), "pg-search-ms/doc")
	if pgss {
		logStatements(b, pool)
	}
	if os.Getenv("SIMDEX_BENCH_EXPLAIN") != "" {
		explainLast(b, pool, calls)
	}
}

// ingestServer starts a server of the benchmark's own, with
// pg_stat_statements loaded when pgss is set.
func ingestServer(b *testing.B, pgss bool) *pgtest.Server {
	srv := pgtest.Start(b)
	if !pgss {
		return srv
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.DatabaseDSN("postgres"))
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		"ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'",
		"ALTER SYSTEM SET track_io_timing = on",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	conn.Close(ctx)
	srv.Restart(b)
	conn, err = pgx.Connect(ctx, srv.DatabaseDSN("template1"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION pg_stat_statements"); err != nil { // in every new database
		b.Fatal(err)
	}
	return srv
}

// serverCPU returns the CPU time srv's processes have used.
func serverCPU(b *testing.B, srv *pgtest.Server) time.Duration {
	b.Helper()
	cpu, err := benchcorpus.ChildCPU(fmt.Sprintf("-p %d ", srv.Port()))
	if err != nil {
		b.Fatalf("PostgreSQL's CPU: %v", err)
	}
	return cpu
}

// logStatements logs pg_stat_statements' statements of the database,
// costliest first, per benchmark iteration.
func logStatements(b *testing.B, pool *pgxpool.Pool) {
	rows, err := pool.Query(context.Background(), `SELECT calls, total_exec_time, total_plan_time, rows, shared_blks_hit, shared_blks_read, query
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time + total_plan_time DESC LIMIT 15`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	b.Logf("%8s %9s %9s %8s %8s %8s  %s", "calls", "exec-ms", "plan-ms", "rows", "hit", "read", "statement (per document)")
	for rows.Next() {
		var calls, nrows, hit, read int64
		var exec, plan float64
		var q string
		if err := rows.Scan(&calls, &exec, &plan, &nrows, &hit, &read, &q); err != nil {
			b.Fatal(err)
		}
		n := float64(b.N)
		b.Logf("%8.2f %9.3f %9.3f %8.1f %8.1f %8.1f  %s", float64(calls)/n, exec/n, plan/n, float64(nrows)/n,
			float64(hit)/n, float64(read)/n, short(q))
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
}

// ingestWords returns the words the daemon benchmark builds its
// documents from.
func ingestWords(b *testing.B) []string {
	path := filepath.Join(corpustest.Dir(b), "debian-docs", "raw", "debian-policy",
		"usr", "share", "doc", "debian-policy", "policy.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatalf("the benchmark builds its documents from the debian-docs corpus: %v", err)
	}
	return strings.Fields(string(data))
}

// ingestInput is document i of prefix, built as the daemon benchmark's
// are: random runs of words, each document its own random sequence.
func ingestInput(words []string, prefix string, i int) index.Input {
	rng := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	key := fmt.Sprintf("%s/doc-%06d.txt", prefix, i)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Document %s.\n", key)
	for sb.Len() < ingestDocSize {
		start := rng.IntN(len(words) - 40)
		for _, w := range words[start : start+5+rng.IntN(30)] {
			sb.WriteString(w)
			sb.WriteByte(' ')
		}
		sb.WriteString("\n")
	}
	text := []byte(sb.String()[:ingestDocSize])
	return index.Input{Doc: index.Doc{Key: "s3:records/bench/" + key, Source: "s3:records", Name: key},
		RawSHA256: sha256.Sum256(text), RawSize: int64(len(text)), Text: text, Parent: -1}
}

// lastCalls records the arguments of each statement's last query.
type lastCalls struct {
	mu   sync.Mutex
	args map[string][]any
}

func (c *lastCalls) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.args[d.SQL] = d.Args
	return ctx
}
func (c *lastCalls) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *lastCalls) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range d.Batch.QueuedQueries {
		c.args[q.SQL] = q.Arguments
	}
	return ctx
}
func (c *lastCalls) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *lastCalls) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// explainLast logs EXPLAIN (ANALYZE, BUFFERS) of the last call of each
// reading statement.
func explainLast(b *testing.B, pool *pgxpool.Pool, c *lastCalls) {
	ctx := context.Background()
	c.mu.Lock()
	last := maps.Clone(c.args)
	c.mu.Unlock()
	var out strings.Builder
	for sql, args := range last {
		if !strings.HasPrefix(strings.TrimSpace(sql), "SELECT") && !strings.HasPrefix(strings.TrimSpace(sql), "WITH") {
			continue
		}
		rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&out, "\n==== %s\n", short(sql))
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			out.WriteString(line + "\n")
		}
		rows.Close()
	}
	fmt.Fprint(os.Stderr, out.String())
}
