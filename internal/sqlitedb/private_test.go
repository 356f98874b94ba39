//go:build unix

package sqlitedb_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	authsqlite "github.com/simdex/simdex/auth/sqlite"
	"github.com/simdex/simdex/index"
	indexsqlite "github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/sqlitedb"
	"github.com/simdex/simdex/internal/sqlitedb/sqlitetest"
	notifiersqlite "github.com/simdex/simdex/notifier/sqlite"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
)

// stores opens each of simdex's databases at a path.
var stores = []struct {
	name string
	open func(ctx context.Context, path string) (io.Closer, error)
}{
	{"index", func(ctx context.Context, path string) (io.Closer, error) {
		return indexsqlite.Open(ctx, path, indexsqlite.Options{Scheme: index.DefaultOptions().Scheme()})
	}},
	{"policy", func(ctx context.Context, path string) (io.Closer, error) { return policysqlite.Open(ctx, path) }},
	{"outbox", func(ctx context.Context, path string) (io.Closer, error) { return notifiersqlite.Open(ctx, path) }},
	{"tokens", func(ctx context.Context, path string) (io.Closer, error) { return authsqlite.Open(ctx, path) }},
	{"sqlitedb", func(ctx context.Context, path string) (io.Closer, error) {
		return sqlitedb.Open(ctx, path, testKind, migrations)
	}},
}

// Every store creates its folders 0700 and its database, write-ahead log
// and shared-memory index 0600, whatever the umask.
func TestStoresCreatePrivateFiles(t *testing.T) {
	for _, mask := range []int{0o022, 0o000} {
		for _, s := range stores {
			t.Run(fmt.Sprintf("umask %#o/%s", mask, s.name), func(t *testing.T) {
				sqlitetest.Umask(t, mask)
				data := filepath.Join(t.TempDir(), "data")
				st, err := s.open(context.Background(), filepath.Join(data, "nested", "store.db"))
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				// The migrations have written: the log and its index exist.
				sqlitetest.Private(t, data, "nested/store.db", "nested/store.db-wal", "nested/store.db-shm")
			})
		}
	}
}

// A database an older simdex created 0644 is made private when opened
// again, and so are the log and index SQLite then creates from its mode.
func TestOpenTightensOlderFiles(t *testing.T) {
	sqlitetest.Umask(t, 0o022)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data") // created 0700 by Open
	path := filepath.Join(dir, "t.db")
	db, err := sqlitedb.Open(ctx, path, testKind, migrations)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = sqlitedb.Open(ctx, path, testKind, migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `INSERT INTO t(id) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	sqlitetest.Private(t, dir, "t.db", "t.db-wal", "t.db-shm")
}
