package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/simdex/simdex/index"
	indexpg "github.com/simdex/simdex/index/postgres"
	"github.com/simdex/simdex/index/sketch"
	"github.com/simdex/simdex/internal/benchcorpus"
	"github.com/simdex/simdex/internal/pgtest"
)

// BenchmarkSimilar measures "all versions of this file" by stored id on
// the benchcorpus fixtures of 10,000 and (with SIMDEX_BENCH_LARGE set)
// 1,000,000 documents, on SQLite (the fixture) and on PostgreSQL (the
// fixture copied with COPY), each query on both in turn, one client,
// reporting each one's latency percentiles and how many queries' matches
// differ between them.
func BenchmarkSimilar(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			if n > 10_000 && os.Getenv("SIMDEX_BENCH_LARGE") == "" {
				b.Skip("set SIMDEX_BENCH_LARGE=1 to copy and query the 1,000,000-document index")
			}
			f, err := benchcorpus.Ensure(ctx, benchcorpus.Spec{Docs: n}, nil)
			if err != nil {
				b.Fatal(err)
			}
			lite, st, err := f.Open(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			defer lite.Close()
			start := time.Now()
			pg, trace := copyFixture(b, st)
			b.Logf("%d documents copied to PostgreSQL in %v", n, time.Since(start).Round(time.Second))
			for _, mode := range []string{"random", "seeds"} {
				b.Run(mode, func(b *testing.B) { benchBoth(b, f, lite, pg, trace, mode == "seeds") })
			}
		})
	}
}

func benchBoth(b *testing.B, f *benchcorpus.Fixture, lite, pg *index.Index, trace *statTracer, seeds bool) {
	ctx := context.Background()
	groups := f.Corpus.Groups()
	r := rand.New(rand.NewPCG(1, 2))
	query := func(i int) index.DocID {
		if seeds {
			return f.ID(groups[i%len(groups)].Seed)
		}
		return f.ID(r.IntN(f.Corpus.Len()))
	}
	similar := func(ix *index.Index, id index.DocID) ([]index.DocID, time.Duration) {
		t := time.Now()
		ms, err := ix.Similar(ctx, id, index.DefaultThresholds())
		d := time.Since(t)
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]index.DocID, len(ms))
		for i, m := range ms {
			ids[i] = m.Record.ID
		}
		slices.Sort(ids)
		return ids, d
	}
	for i := range 100 { // warm the caches, unmeasured
		id := query(len(groups) - 1 - i)
		similar(lite, id)
		similar(pg, id)
	}
	var lat [2][]time.Duration
	differ := 0
	trace.reset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := query(i)
		a, da := similar(lite, id)
		p, dp := similar(pg, id)
		lat[0], lat[1] = append(lat[0], da), append(lat[1], dp)
		if !slices.Equal(a, p) {
			differ++
			if differ <= 3 {
				b.Logf("document %d: SQLite finds %v, PostgreSQL %v", id, a, p)
			}
		}
	}
	b.StopTimer()
	for i, name := range []string{"sqlite", "pg"} {
		slices.Sort(lat[i])
		b.ReportMetric(float64(lat[i][len(lat[i])/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(lat[i][len(lat[i])*99/100].Microseconds())/1000, name+"-p99-ms")
	}
	b.ReportMetric(float64(differ)/float64(b.N), "differ/op")
	b.ReportMetric(float64(trace.roundTrips())/float64(b.N), "pg-roundtrips/op")
	trace.log(b)
}

// copyFixture copies the SQLite store st into a fresh PostgreSQL database
// on a server of the benchmark's own (benchServer) with COPY, and returns
// an Index over it and the tracer of its pool's statements.
func copyFixture(b *testing.B, st index.Store) (*index.Index, *statTracer) {
	b.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(benchServer(b).NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	trace := newStatTracer()
	cfg.ConnConfig.Tracer = trace
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	opts := benchcorpus.IndexOptions()
	pgst, err := indexpg.New(ctx, pool, indexpg.Options{Scheme: opts.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	refs := map[index.ContentID]int64{}
	if err := st.Documents(ctx, func(r *index.Record) error {
		if r.Content != 0 {
			refs[r.Content]++
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	// The postings' keys come in no order: their primary keys are built
	// once, after the copy, rather than row by row.
	for _, t := range []string{"index_band_postings", "index_chunk_postings", "index_anchor_postings"} {
		if _, err := pool.Exec(ctx, "ALTER TABLE "+t+" DROP CONSTRAINT "+t+"_pkey"); err != nil {
			b.Fatal(err)
		}
	}
	if err := copyContents(ctx, pool, st, refs, opts.Sketch); err != nil {
		b.Fatal(err)
	}
	b.Logf("contents and postings copied")
	for _, t := range []string{"index_band_postings", "index_chunk_postings", "index_anchor_postings"} {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '256MB'"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "ALTER TABLE "+t+" ADD PRIMARY KEY (key, blk)")
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := copyDocuments(ctx, pool, st); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		"SELECT setval(pg_get_serial_sequence('index_documents', 'id'), (SELECT max(id) FROM index_documents))",
		"SELECT setval(pg_get_serial_sequence('index_contents', 'id'), (SELECT max(id) FROM index_contents))",
		"VACUUM ANALYZE", // as autovacuum would: statistics, and the visibility map that index-only scans read
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	logSizes(b, pool, len(refs))
	ix, err := index.New(ctx, pgst, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	return ix, trace
}

// benchSettings size the benchmark's server for an index of 1,000,000
// documents (7.8 GiB) on this machine as an operator would: the tests'
// shared server has 64 MB of shared buffers, with which every page a query
// reads is a system call.
var benchSettings = []string{
	"shared_buffers = '2GB'",
	"effective_cache_size = '8GB'",
	"random_page_cost = 1.1", // the database is in memory
}

// benchServer starts a PostgreSQL server of the benchmark's own with
// benchSettings (ALTER SYSTEM, then a restart for shared_buffers).
func benchServer(b *testing.B) *pgtest.Server {
	ctx := context.Background()
	srv := pgtest.Start(b)
	conn, err := pgx.Connect(ctx, srv.DatabaseDSN("postgres"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, set := range benchSettings {
		if _, err := conn.Exec(ctx, "ALTER SYSTEM SET "+set); err != nil {
			b.Fatal(err)
		}
	}
	conn.Close(ctx)
	srv.Restart(b)
	return srv
}

// logSizes logs each table's rows and size, indexes included, per content.
func logSizes(b *testing.B, pool *pgxpool.Pool, contents int) {
	rows, err := pool.Query(context.Background(), `SELECT c.relname, sum(c2.reltuples)::int8, sum(pg_total_relation_size(c2.oid))::int8
		FROM pg_class c JOIN pg_inherits i ON i.inhparent = c.oid JOIN pg_class c2 ON c2.oid = i.inhrelid
		WHERE c.relname LIKE 'index\_%' AND c.relkind = 'p' GROUP BY c.relname
		UNION ALL SELECT relname, reltuples::int8, pg_total_relation_size(oid) FROM pg_class
		WHERE relname LIKE 'index\_%' AND relkind = 'r' AND NOT relispartition ORDER BY 1`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n, size int64
		if err := rows.Scan(&name, &n, &size); err != nil {
			b.Fatal(err)
		}
		b.Logf("%-24s %11d rows %8.1f MiB %6.0f B/content", name, n, float64(size)/(1<<20), float64(size)/float64(contents))
	}
}

// copyRows copies what rows delivers into table's columns.
func copyRows(ctx context.Context, pool *pgxpool.Pool, table string, columns []string, rows <-chan []any) error {
	_, err := pool.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromFunc(func() ([]any, error) {
		select {
		case r := <-rows:
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	if err != nil {
		return fmt.Errorf("copy %s: %w", table, err)
	}
	return nil
}

// copyContents copies the contents of refs, and their postings in the
// store's blocks: the contents of one block are read together, so each
// (key, block) row is made once.
func copyContents(ctx context.Context, pool *pgxpool.Pool, st index.Store, refs map[index.ContentID]int64, sk sketch.Params) error {
	ids := make([]index.ContentID, 0, len(refs))
	for c := range refs {
		ids = append(ids, c)
	}
	slices.Sort(ids)
	g, ctx := errgroup.WithContext(ctx)
	chans := [4]chan []any{make(chan []any, 1024), make(chan []any, 1024), make(chan []any, 1024), make(chan []any, 1024)}
	g.Go(func() error {
		return copyRows(ctx, pool, "index_contents", []string{"id", "text_sha256", "text_size", "simhash", "body", "bands", "anchors", "refs"}, chans[0])
	})
	for t, table := range []string{"index_band_postings", "index_chunk_postings", "index_anchor_postings"} {
		g.Go(func() error { return copyRows(ctx, pool, table, []string{"key", "blk", "n", "ids"}, chans[t+1]) })
	}
	g.Go(func() error {
		defer func() {
			for _, c := range chans {
				select {
				case c <- nil: // ends its copy
				case <-ctx.Done():
				}
			}
		}()
		for len(ids) > 0 {
			n := 1
			for n < len(ids) && ids[n]>>indexpg.BlockShift == ids[0]>>indexpg.BlockShift {
				n++
			}
			if err := sendBlock(ctx, st, ids[:n], refs, sk, chans); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
	return g.Wait()
}

// sendBlock sends the rows of the contents ids, of one block.
func sendBlock(ctx context.Context, st index.Store, ids []index.ContentID, refs map[index.ContentID]int64, sk sketch.Params, chans [4]chan []any) error {
	posts := [3]map[uint64][]int64{{}, {}, {}}
	send := func(c chan []any, row []any) error {
		select {
		case c <- row:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := st.Fingerprints(ctx, ids, func(id index.ContentID, fp *index.Fingerprint) error {
		bands := sketch.Bands(sk, fp.MinHash, nil)
		chunks := make([]uint64, len(fp.Chunks))
		for i, c := range fp.Chunks {
			chunks[i] = c.Hash
		}
		anchors := fp.Anchors()
		for t, keys := range [3][]uint64{bands, chunks, anchors} {
			val := int64(id)
			if t == 2 {
				val = indexpg.AnchorPosting(id, len(anchors))
			}
			for _, k := range keys {
				if l := posts[t][k]; len(l) == 0 || l[len(l)-1] != val {
					posts[t][k] = append(l, val)
				}
			}
		}
		band := make([]byte, 0, 8*len(bands))
		for _, k := range bands {
			band = append(band, byte(k), byte(k>>8), byte(k>>16), byte(k>>24), byte(k>>32), byte(k>>40), byte(k>>48), byte(k>>56))
		}
		return send(chans[0], []any{int64(id), fp.TextSHA256[:], fp.TextSize, int64(fp.SimHash), fp.AppendBody(nil), band, int32(len(anchors)), refs[id]})
	})
	if err != nil {
		return err
	}
	blk := int32(ids[0] >> indexpg.BlockShift)
	for t := range posts {
		for k, l := range posts[t] {
			if err := send(chans[t+1], []any{int64(k), blk, int32(len(l)), indexpg.PackIDs(l)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyDocuments copies every document of st.
func copyDocuments(ctx context.Context, pool *pgxpool.Pool, st index.Store) error {
	g, ctx := errgroup.WithContext(ctx)
	rows := make(chan []any, 1024)
	g.Go(func() error {
		return copyRows(ctx, pool, "index_documents", []string{"id", "key", "version_id", "idem", "name", "source", "parent_id", "path",
			"media_type", "meta", "mod_time", "indexed_at", "error", "keep_versions", "raw_sha256", "raw_size", "content_id"}, rows)
	})
	g.Go(func() error {
		defer func() {
			select {
			case rows <- nil: // ends the copy
			case <-ctx.Done():
			}
		}()
		return st.Documents(ctx, func(r *index.Record) error {
			path, _ := json.Marshal(r.Path)
			if r.Path == nil {
				path = []byte("[]")
			}
			meta, _ := json.Marshal(r.Meta)
			if r.Meta == nil {
				meta = []byte("{}")
			}
			var parent, content, modTime any
			if r.Parent != 0 {
				parent = int64(r.Parent)
			}
			if r.Content != 0 {
				content = int64(r.Content)
			}
			modTime = int64(0)
			if !r.ModTime.IsZero() {
				modTime = r.ModTime.UnixNano()
			}
			var raw []byte
			if r.RawSHA256 != ([32]byte{}) {
				raw = r.RawSHA256[:]
			}
			row := []any{int64(r.ID), r.Key, r.VersionID, []byte(r.Idempotency), r.Name, r.Source, parent, json.RawMessage(path),
				r.MediaType, json.RawMessage(meta), modTime, r.IndexedAt.UnixNano(), r.Error, r.KeepVersions, raw, r.RawSize, content}
			select {
			case rows <- row:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	return g.Wait()
}
