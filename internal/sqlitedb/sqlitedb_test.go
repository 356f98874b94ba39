package sqlitedb_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/internal/sqlitedb"
)

var migrations = []string{`CREATE TABLE t (id INTEGER PRIMARY KEY, done INTEGER NOT NULL DEFAULT 0)`}

// testKind is the databases these tests open.
var testKind = sqlitedb.Kind{Name: "test store", ID: 0x53445854, Tables: []string{"t"}}

func TestExecUnsyncedLeavesTheConnectionSynced(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "t.db"), testKind, migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `INSERT INTO t(id) VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	if err := sqlitedb.ExecUnsynced(ctx, db, `UPDATE t SET done = 1 WHERE id = ?`, 1); err != nil {
		t.Fatal(err)
	}
	// A failing statement must restore full sync as well.
	if err := sqlitedb.ExecUnsynced(ctx, db, `UPDATE nosuchtable SET done = 1`); err == nil {
		t.Fatal("a statement on a missing table succeeded")
	}
	var sync, done int
	if err := db.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if sync != 2 { // FULL
		t.Fatalf("synchronous = %d after ExecUnsynced, want 2 (FULL)", sync)
	}
	if err := db.QueryRowContext(ctx, `SELECT sum(done) FROM t`).Scan(&done); err != nil {
		t.Fatal(err)
	}
	if done != 1 {
		t.Fatalf("%d rows updated, want 1", done)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := sqlitedb.Open(ctx, path, testKind, append(migrations, `CREATE TABLE u (id INTEGER)`))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := sqlitedb.Open(ctx, path, testKind, migrations); !errors.Is(err, sqlitedb.ErrSchemaVersion) {
		t.Fatalf("opening a newer database: %v, want ErrSchemaVersion", err)
	}
}
