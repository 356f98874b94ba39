package sqlitedb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/sqlitedb"
	"github.com/simdex/simdex/internal/sqlitedb/sqlitetest"
)

func TestOpenRefusesOtherFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.db")
	db, err := sqlitedb.Open(ctx, policy, sqlitedb.Policy, []string{`CREATE TABLE rule (id INTEGER); CREATE TABLE hold (id INTEGER); CREATE TABLE flag (id INTEGER)`})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, tc := range []struct {
		name  string
		file  func(path string) []byte
		words string
	}{
		{"another application's database", func(path string) []byte {
			return sqlitetest.Create(t, path, `CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)`, `INSERT INTO customers(name) VALUES ('acme')`)
		}, "another application's database (tables customers)"},
		// Another application's numbered schema must not pass for an
		// older simdex schema.
		{"a versioned database", func(path string) []byte {
			return sqlitetest.Create(t, path, `CREATE TABLE orders (id INTEGER)`, `PRAGMA user_version = 1`)
		}, "(tables orders)"},
		{"a marked database", func(path string) []byte {
			return sqlitetest.Create(t, path, `PRAGMA application_id = 1234`)
		}, "another application (application_id 0x4d2)"},
		{"another of simdex's databases", func(string) []byte {
			b, err := os.ReadFile(policy)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, "simdex's policy store, not its test store"},
		{"a text file", func(path string) []byte {
			b := []byte("not a database, but long enough to have a header of a hundred bytes or so: " + strings.Repeat("x", 200))
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return b
		}, "not an SQLite database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			if tc.name == "another of simdex's databases" {
				path = policy
			}
			want := tc.file(path)
			_, err := sqlitedb.Open(ctx, path, testKind, migrations)
			if !errors.Is(err, sqlitedb.ErrForeign) {
				t.Fatalf("Open = %v, want ErrForeign", err)
			}
			if !strings.Contains(err.Error(), tc.words) {
				t.Errorf("error %q does not say %q", err, tc.words)
			}
			sqlitetest.Untouched(t, path, want)
		})
	}
}

func TestOpenRefusesADirectory(t *testing.T) {
	_, err := sqlitedb.Open(context.Background(), t.TempDir(), testKind, migrations)
	if !errors.Is(err, sqlitedb.ErrForeign) {
		t.Fatalf("Open = %v, want ErrForeign", err)
	}
}

// errKind is the sentinel of a kind that refuses with its own error.
var errKind = errors.New("not a test store")

func TestClaimWrapsTheKindsSentinel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	sqlitetest.Create(t, path, `CREATE TABLE customers (id INTEGER)`)
	k := testKind
	k.Err = errKind
	if err := sqlitedb.Claim(context.Background(), path, k); !errors.Is(err, errKind) {
		t.Fatalf("Claim = %v, want the kind's sentinel", err)
	}
}

func TestOpenAcceptsNewFiles(t *testing.T) {
	ctx := context.Background()
	for name, create := range map[string]func(path string){
		"missing": func(string) {},
		"empty": func(path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"without tables": func(path string) { sqlitetest.Create(t, path, `PRAGMA user_version = 0`) },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			create(path)
			db, err := sqlitedb.Open(ctx, path, testKind, migrations)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var id int32
			if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
				t.Fatal(err)
			}
			if id != testKind.ID {
				t.Errorf("application_id = %#x, want %#x", id, testKind.ID)
			}
		})
	}
}

// TestOpenAdoptsAnUnmarkedDatabase opens a database written before simdex
// marked its files: it is recognised by its tables and marked.
func TestOpenAdoptsAnUnmarkedDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	sqlitetest.Create(t, path, migrations[0], `INSERT INTO t(id) VALUES (7)`, `PRAGMA user_version = 1`)
	db, err := sqlitedb.Open(ctx, path, testKind, migrations)
	if err != nil {
		t.Fatal(err)
	}
	var id int32
	var n int
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if id != testKind.ID || n != 1 {
		t.Fatalf("application_id %#x and %d rows, want %#x and 1", id, n, testKind.ID)
	}
	// Marked, it opens as before.
	db, err = sqlitedb.Open(ctx, path, testKind, migrations)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}
