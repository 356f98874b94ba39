package postgres_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/simdex/simdex/auth"
	authpg "github.com/simdex/simdex/auth/postgres"
	"github.com/simdex/simdex/auth/storetest"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// opener opens stores on dsn, each on a pool of its own, as replicas do.
func opener(dsn string) storetest.Opener {
	return func(t testing.TB) storetest.Store {
		ctx := context.Background()
		pool, err := pgdb.Open(ctx, dsn, 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		s, err := authpg.New(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// TestStore runs the token store suite on PostgreSQL; each opener call is
// another replica, with its own pool, on one database.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener { return opener(pgtest.DSN(t)) })
}

func TestDuplicateIsSentinel(t *testing.T) {
	s := opener(pgtest.DSN(t))(t)
	ctx := context.Background()
	tok := storetest.Token("00000000000000aa", auth.RoleAdmin)
	if err := s.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := s.PutToken(ctx, tok); !errors.Is(err, authpg.ErrDuplicate) {
		t.Fatalf("second put: %v, want ErrDuplicate", err)
	}
}
