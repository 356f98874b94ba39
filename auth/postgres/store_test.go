package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
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

// TestStoreSurvivesServerCrash kills PostgreSQL while tokens are being
// stored: every token whose PutToken succeeded is there after the
// restart, and the same pool serves again without a caller seeing the
// lost connections.
func TestStoreSurvivesServerCrash(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	s := opener(srv.DatabaseDSN("postgres"))(t)
	acked := make(chan string, 1000)
	var stop atomic.Bool
	var failed atomic.Int32
	go func() {
		defer close(acked)
		for i := 0; !stop.Load() && i < cap(acked); i++ {
			id := fmt.Sprintf("%016x", i)
			if err := s.PutToken(ctx, storetest.Token(id, auth.RoleViewer)); err != nil {
				failed.Add(1)
				continue
			}
			acked <- id
		}
	}()
	var ids []string
	ids = append(ids, <-acked) // stored before the crash
	srv.Kill()
	srv.Restart(t)
	for len(ids) < 20 { // stored after the restart
		id, ok := <-acked
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	stop.Store(true)
	for id := range acked {
		ids = append(ids, id)
	}
	for _, id := range ids {
		if _, err := s.Token(ctx, id); err != nil {
			t.Fatalf("token %s acknowledged: %v", id, err)
		}
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) < len(ids) {
		t.Fatalf("%d tokens listed (%v), %d acknowledged", len(list), err, len(ids))
	}
	t.Logf("%d puts acknowledged, %d failed, %d tokens stored", len(ids), failed.Load(), len(list))
}

func BenchmarkToken(b *testing.B) { storetest.BenchmarkToken(b, opener(pgtest.DSN(b))) }

// TestPreviousReleaseInsertsWithoutPerson: during a rolling upgrade the
// previous release, beside this one on the migrated schema, stores tokens
// without the person's columns (its INSERT, verbatim); they read back
// without name or e-mail, named by their description.
func TestPreviousReleaseInsertsWithoutPerson(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := opener(dsn)(t)
	pool, err := pgdb.Open(ctx, dsn, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	old := storetest.Token("00000000000000aa", auth.RoleAdmin)
	if _, err := pool.Exec(ctx, `INSERT INTO auth_token
		(id, hash, role, matters, description, created, created_by, expires, revoked, revoked_by, revoke_reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		old.ID, old.Hash[:], string(old.Role), []string{}, "ops laptop", old.Created, old.CreatedBy, nil, nil, "", ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.Token(ctx, old.ID)
	if err != nil || got.Name != "" || got.Email != "" || got.DisplayName() != "ops laptop" {
		t.Errorf("token of the previous release: %+v, %v", got, err)
	}
}
