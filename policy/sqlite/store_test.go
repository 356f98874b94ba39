package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/policy"
	"github.com/simdex/simdex/policy/sqlite"
	"github.com/simdex/simdex/policy/storetest"
)

func open(t *testing.T, path string) policy.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (policy.Store, func(t *testing.T) policy.Store) {
		path := filepath.Join(t.TempDir(), "policy.db")
		return open(t, path), func(t *testing.T) policy.Store { return open(t, path) }
	})
}

func BenchmarkIngestCommit(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "policy.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	storetest.BenchIngest(b, st)
}
