package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/policy"
	"github.com/simdex/simdex/policy/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openDSN opens a store on dsn with a pool of its own, closed when the
// test ends.
func openDSN(t *testing.T, dsn string) *Store {
	t.Helper()
	ctx := context.Background()
	pool, err := pgdb.Open(ctx, dsn, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (policy.Store, func(t *testing.T) policy.Store) {
		dsn := pgtest.DSN(t)
		return openDSN(t, dsn), func(t *testing.T) policy.Store { return openDSN(t, dsn) }
	})
}

func BenchmarkIngestCommit(b *testing.B) {
	st, _ := countedStore(b, pgtest.DSN(b))
	storetest.BenchIngest(b, st)
}
