package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/auth/sqlite"
)

func token(id string, role auth.Role, matters ...string) auth.Token {
	return auth.Token{
		ID: id, Hash: sha256.Sum256([]byte(id)), Role: role, Matters: matters, Description: "test " + id,
		Created: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), CreatedBy: "admin:alice",
	}
}

func TestStorePersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "auth.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a := token("00000000000000aa", auth.RoleReviewer, "acme", "globex")
	a.Expires = a.Created.Add(24 * time.Hour)
	b := token("00000000000000bb", auth.RoleAdmin)
	b.Created = b.Created.Add(time.Second)
	for _, tk := range []auth.Token{a, b} {
		if err := s.PutToken(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutToken(ctx, a); err == nil {
		t.Error("duplicate id stored")
	}
	at := a.Created.Add(time.Hour)
	if err := s.RevokeToken(ctx, a.ID, at, "admin:bob", "left"); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, a.ID, at.Add(time.Hour), "admin:carol", "again"); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, "missing", at, "x", "y"); !errors.Is(err, auth.ErrTokenNotFound) {
		t.Errorf("revoke missing: %v", err)
	}
	if _, err := s.Token(ctx, "missing"); !errors.Is(err, auth.ErrTokenNotFound) {
		t.Errorf("get missing: %v", err)
	}
	s.Close()

	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Token(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := a
	want.Revoked, want.RevokedBy, want.RevokeReason = at, "admin:bob", "left"
	if got.ID != want.ID || got.Hash != want.Hash || got.Role != want.Role || len(got.Matters) != 2 || got.Matters[1] != "globex" ||
		got.Description != want.Description || !got.Created.Equal(want.Created) || got.CreatedBy != want.CreatedBy ||
		!got.Expires.Equal(want.Expires) || !got.Revoked.Equal(want.Revoked) || got.RevokedBy != want.RevokedBy || got.RevokeReason != want.RevokeReason {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[1].Matters == nil || !list[1].Expires.IsZero() {
		t.Errorf("tokens %+v, %v", list, err)
	}
}

func TestStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		id := string(rune('a'+i)) + "000000000000000"
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs <- s.PutToken(ctx, token(id, auth.RoleViewer))
		}()
		go func() {
			defer wg.Done()
			_, err := s.Tokens(ctx)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if list, _ := s.Tokens(ctx); len(list) != 20 {
		t.Errorf("%d tokens", len(list))
	}
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
