package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/index"
	indexpg "github.com/simdex/simdex/index/postgres"
	"github.com/simdex/simdex/index/storetest"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openPool opens a pool on dsn, closed when the test ends.
func openPool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgdb.Open(context.Background(), dsn, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// openOn opens a store on pool, closed when the test ends.
func openOn(t testing.TB, pool *pgxpool.Pool) *indexpg.Store {
	t.Helper()
	s, err := indexpg.New(context.Background(), pool, indexpg.Options{Scheme: index.DefaultOptions().Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	dsns := map[index.Store]string{}
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) index.Store {
			dsn := pgtest.DSN(t)
			s := openOn(t, openPool(t, dsn))
			dsns[s] = dsn
			return s
		},
		Reopen: func(t *testing.T, s index.Store) index.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return openOn(t, openPool(t, dsns[s]))
		},
		// Another replica: another pool on the same database.
		Replica: func(t *testing.T, s index.Store) index.Store { return openOn(t, openPool(t, dsns[s])) },
	})
}

func TestMarkDeletedAtSource(t *testing.T) {
	storetest.DeletedAtSource(t, openOn(t, openPool(t, pgtest.DSN(t))))
}
