package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/auth/sqlite"
	"github.com/simdex/simdex/auth/storetest"
)

func token(id string, role auth.Role, matters ...string) auth.Token {
	return storetest.Token(id, role, matters...)
}

// TestStore runs the token store suite on SQLite: each opener call opens
// the same file again, as a restarted process does.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		path := filepath.Join(t.TempDir(), "auth.db")
		return func(t testing.TB) storetest.Store {
			s, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	})
}

// TestStoreKeepsConnections looks tokens up from many goroutines at once,
// as concurrent API requests do, and checks that the pool kept its
// connections rather than closing and reopening them (each reopening
// parsed the schema again: half of a lookup's CPU).
func TestStoreKeepsConnections(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tok := token("a000000000000000", auth.RoleViewer)
	if err := s.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := s.Token(ctx, tok.ID); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st := s.DBStats(); st.MaxIdleClosed != 0 {
		t.Errorf("%d connections closed for want of idle room (%d opened in all)", st.MaxIdleClosed, st.OpenConnections)
	}
}

func TestStoreRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "auth.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := sqlite.Open(ctx, path); !errors.Is(err, sqlite.ErrSchemaVersion) {
		t.Errorf("newer schema: %v", err)
	}
}

func BenchmarkToken(b *testing.B) {
	path := filepath.Join(b.TempDir(), "auth.db")
	storetest.BenchmarkToken(b, func(t testing.TB) storetest.Store {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestUpgradeKeepsTokensWithoutPerson: a store of schema 1, written before
// tokens named a person, is migrated in place; its token reads back
// without name or e-mail and is named by its description.
func TestUpgradeKeepsTokensWithoutPerson(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "auth.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// Back to schema 1, with a token as the previous release wrote it.
	for _, q := range []string{
		`ALTER TABLE token DROP COLUMN name`, `ALTER TABLE token DROP COLUMN email`, `PRAGMA user_version = 1`,
		`INSERT INTO token(id, hash, role, matters, description, created, created_by)
			VALUES ('00000000000000aa', zeroblob(32), 'admin', '[]', 'initial admin token', 1, 'simdex')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if s, err = sqlite.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Token(ctx, "00000000000000aa")
	if err != nil || got.Name != "" || got.Email != "" || got.DisplayName() != "initial admin token" || got.Role != auth.RoleAdmin {
		t.Fatalf("old token after the upgrade: %+v, %v", got, err)
	}
	tok := token("00000000000000bb", auth.RoleViewer, "M-1")
	if err := s.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Token(ctx, tok.ID); err != nil || got.Name != tok.Name || got.Email != tok.Email {
		t.Errorf("new token after the upgrade: %+v, %v", got, err)
	}
}
