package pgdb_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestMigrateConcurrentlyOnce(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := pgdb.Open(ctx, dsn, 4)
			if err != nil {
				errs[i] = err
				return
			}
			defer pool.Close()
			errs[i] = pgdb.Migrate(ctx, pool, os.DirFS("testdata"), "migrations", "widgets_schema")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pool, err := pgdb.Open(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "INSERT INTO widgets (id, name, colour) VALUES (1, 'a', 'red')"); err != nil {
		t.Fatalf("schema not at version 2: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM widgets_schema WHERE version_id > 0").Scan(&n); err != nil || n != 2 {
		t.Fatalf("version rows: %d, %v; want 2", n, err)
	}
}

func TestOpenWrongPasswordIsClear(t *testing.T) {
	s := pgtest.Start(t)
	dsn := strings.Replace(s.DatabaseDSN("postgres"), ":"+s.Password()+"@", ":secret-pw@", 1)
	_, err := pgdb.Open(context.Background(), dsn, 1)
	if !errors.Is(err, pgdb.ErrAuthentication) {
		t.Fatalf("got %v, want ErrAuthentication", err)
	}
	if strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("error shows the password: %v", err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	s := pgtest.Start(t)
	dsn := s.DatabaseDSN("postgres")
	s.Stop()
	_, err := pgdb.Open(context.Background(), dsn, 1)
	if !errors.Is(err, pgdb.ErrUnreachable) {
		t.Fatalf("got %v, want ErrUnreachable", err)
	}
}

func TestOpenBadDSNHidesPassword(t *testing.T) {
	_, err := pgdb.Open(context.Background(), "postgres://u:hunter2@[::1/x", 1)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("got %v", err)
	}
}

// TestMigrateRefusesNewerSchema: a binary older than the schema (a
// rollback, or an old pod restarting during a rolling upgrade) uses it
// when the newer migrations only added to it, and refuses it once one
// declared older code unable to use it.
func TestMigrateRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	pool, err := pgdb.Open(ctx, pgtest.DSN(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	dirs := os.DirFS("testdata")
	if err := pgdb.Migrate(ctx, pool, dirs, "migrations", "widgets_schema"); err != nil {
		t.Fatal(err)
	}
	if err := pgdb.Migrate(ctx, pool, dirs, "older", "widgets_schema"); err != nil {
		t.Fatalf("version 1 on a schema that version 2 only added to: %v", err)
	}
	if err := pgdb.Migrate(ctx, pool, dirs, "breaking", "widgets_schema"); err != nil {
		t.Fatal(err)
	}
	err = pgdb.Migrate(ctx, pool, dirs, "migrations", "widgets_schema")
	if !errors.Is(err, pgdb.ErrSchemaNewer) {
		t.Fatalf("version 2 on a schema version 3 declared too new for it: %v, want ErrSchemaNewer", err)
	}
	if !strings.Contains(err.Error(), "version 3") || !strings.Contains(err.Error(), "binary's is 2") {
		t.Errorf("error does not name the versions: %v", err)
	}
	if err := pgdb.Migrate(ctx, pool, dirs, "breaking", "widgets_schema"); err != nil {
		t.Fatal(err)
	}
}
