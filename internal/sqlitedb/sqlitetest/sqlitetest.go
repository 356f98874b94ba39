// Package sqlitetest writes SQLite files for tests of what simdex's stores
// do with files that are not theirs, and checks that such files were left
// as they were.
package sqlitetest

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Create writes a database at path with stmts, in SQLite's default
// rollback journal (as another application would), and returns its bytes.
func Create(t testing.TB, path string, stmts ...string) []byte {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Untouched fails t unless the file at path still holds want, with no
// write-ahead log, shared-memory index or journal left beside it.
func Untouched(t testing.TB, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s was changed", filepath.Base(path))
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("%s%s was left behind", filepath.Base(path), suffix)
		}
	}
}
