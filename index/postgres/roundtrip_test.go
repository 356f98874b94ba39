package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
	"github.com/simdex/simdex/internal/pgtest"
)

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
	var rt pgtest.RoundTrips
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
		before := rt.N()
		if _, err := s.Put(ctx, []index.Entry{e}); err != nil {
			t.Fatal(err)
		}
		return rt.N() - before
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
