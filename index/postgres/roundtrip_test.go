package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
	"github.com/simdex/simdex/internal/pgtest"
)

// roundTrips counts the round trips of a pool's connections: a query, a
// batch (one round trip whatever its statements), a prepare.
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (c *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// Round trips of one Put of one new document, and of one that replaces
// an older version of its key, whatever the index's size (docs/store.md).
const (
	putRoundTrips     = 5
	replaceRoundTrips = 8
)

// TestPutRoundTrips checks that a Put costs a fixed number of round trips
// per document, whatever the index's size.
func TestPutRoundTrips(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	var rt roundTrips
	cfg.ConnConfig.Tracer = &rt
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := openOn(t, pool)
	n := 0
	put := func(key, text string) int64 {
		n++
		e := index.Entry{Doc: index.Doc{Key: key, VersionID: fmt.Sprint(n)},
			Fingerprint: storetest.Fingerprint(text, []uint64{uint64(n) << 40, 7 << 40}, []uint32{8, 16, 24 + 8*uint32(n)}),
			Bands:       []uint64{uint64(n) << 30, 5 << 30}, Parent: -1}
		before := rt.n.Load()
		if _, err := s.Put(ctx, []index.Entry{e}); err != nil {
			t.Fatal(err)
		}
		return rt.n.Load() - before
	}
	for i := range 3 { // prepares each statement on the connection
		put(fmt.Sprint("warm", i), fmt.Sprint("warm ", i))
		put(fmt.Sprint("warm", i), fmt.Sprint("warm again ", i))
	}
	for _, size := range []int{10, 100} {
		for n < size {
			put(fmt.Sprint("fill", n), fmt.Sprint("fill ", n))
		}
		if got := put(fmt.Sprint("new", size), fmt.Sprint("new ", size)); got != putRoundTrips {
			t.Errorf("at %d documents, a new document took %d round trips, want %d", size, got, putRoundTrips)
		}
		if got := put(fmt.Sprint("new", size), fmt.Sprint("replaced ", size)); got != replaceRoundTrips {
			t.Errorf("at %d documents, a new version took %d round trips, want %d", size, got, replaceRoundTrips)
		}
	}
}
