package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
)

func open(t *testing.T, path string, scheme uint32) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) index.Store { return open(t, filepath.Join(t.TempDir(), "index.db"), 1) },
		Reopen: func(t *testing.T, s index.Store) index.Store {
			path := s.(*Store).Path()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return open(t, path, 1)
		},
	})
}

func TestSchemeMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	s.Close()
	if _, err := Open(context.Background(), path, Options{Scheme: 2}); !errors.Is(err, index.ErrSchemeMismatch) {
		t.Fatalf("got %v, want ErrSchemeMismatch", err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	s := open(t, path, 1)
	if _, err := s.w.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(context.Background(), path, Options{Scheme: 1}); !errors.Is(err, index.ErrSchemaVersion) {
		t.Fatalf("got %v, want ErrSchemaVersion", err)
	}
}

func TestBadDurability(t *testing.T) {
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), Options{Durability: "sometimes"}); err == nil {
		t.Fatal("bad durability accepted")
	}
}

func TestCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "index.db"), 1)
	e := index.Entry{Doc: index.Doc{Key: "a"}, Fingerprint: storetest.Fingerprint("alpha", []uint64{1 << 40}, nil), Bands: []uint64{1 << 50}, Parent: -1}
	if _, err := s.Put(ctx, []index.Entry{e}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	if _, err := s.w.Exec("DELETE FROM band_postings"); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("damaged store: %v", err)
	}
}
