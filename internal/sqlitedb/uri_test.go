package sqlitedb_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/internal/sqlitedb"
)

// TestURIOpensTheFileNamed: a relative path, one starting with "./", and
// paths holding the characters a URI gives a meaning open the file they
// name, written by Open and read back read-only (mode=ro): "file://data/x.db"
// was refused ("invalid uri authority: data"), and a '?' or '#' cut the
// path short.
func TestURIOpensTheFileNamed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, path := range []string{"plain.db", "./dot.db", "data/sub.db", "what?.db", "hash#1.db", "100%25 done.db",
		"with space.db", "a:b.db", "x?mode=rw&y.db", filepath.Join(dir, "abs #?%.db")} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		db, err := sqlitedb.Open(ctx, path, testKind, migrations)
		if err != nil {
			t.Fatalf("open %q: %v", path, err)
		}
		_, err = db.ExecContext(ctx, `INSERT INTO t(id) VALUES (7)`)
		db.Close()
		if err != nil {
			t.Fatalf("write %q: %v", path, err)
		}
		if _, err := os.Stat(filepath.Join(dir, path)); err != nil && !filepath.IsAbs(path) {
			t.Errorf("%q: the file is not where the path names it: %v", path, err)
		}
		ro, err := sql.Open("sqlite", sqlitedb.URI(path, "mode=ro"))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = ro.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE id = 7`).Scan(&n)
		if err == nil {
			_, err = ro.ExecContext(ctx, `INSERT INTO t(id) VALUES (8)`)
			if err == nil {
				t.Errorf("%q: mode=ro was not applied: a write succeeded", path)
			}
			err = nil
		}
		ro.Close()
		if err != nil || n != 1 {
			t.Errorf("read %q back through %s: %d rows, %v", path, sqlitedb.URI(path, "mode=ro"), n, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == "x" || e.Name() == "what" || e.Name() == "hash" || e.Name() == "100" {
			t.Errorf("a truncated file name %q was created", e.Name())
		}
	}
}
