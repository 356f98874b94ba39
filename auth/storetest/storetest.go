// Package storetest is the conformance suite of auth.Store: every token
// store (auth/sqlite, auth/postgres) runs Run against its backend, so that
// they keep one contract. The suite opens several handles on one backend,
// as replicas of the daemon do, and races them where a shared database
// must decide: two replicas storing one token id, or revoking one token.
package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/auth"
)

// Store is a token store under test.
type Store interface {
	auth.Store
	// Close releases the handle; the data stays for the next one.
	Close() error
}

// Opener opens a new handle on the backend's data: a restart of the
// process, or another replica of the daemon on the same database. Each
// call may return a store on its own connections.
type Opener func(t testing.TB) Store

// Run runs the suite. newBackend makes an empty backend for one test and
// returns its opener.
func Run(t *testing.T, newBackend func(t *testing.T) Opener) {
	tests := []struct {
		name string
		run  func(t *testing.T, open Opener)
	}{
		{"Persists", testPersists},
		{"MissingToken", testMissingToken},
		{"Concurrent", testConcurrent},
		{"RacePutSameID", testRacePutSameID},
		{"RaceRevoke", testRaceRevoke},
		{"RaceRevokeAuditedOnce", testRaceRevokeAuditedOnce},
		{"Text", testText},
		{"Person", testPerson},
		{"TokenWithoutPerson", testTokenWithoutPerson},
		{"RevokeEndsSessions", testRevokeEndsSessions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newBackend(t)) })
	}
}

// Token returns a token record for the tests, created at a fixed time.
func Token(id string, role auth.Role, matters ...string) auth.Token {
	return auth.Token{
		ID: id, Hash: sha256.Sum256([]byte(id)), Role: role, Matters: matters, Name: "Person " + id,
		Email: "p" + id + "@example.com", Description: "test " + id,
		Created: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), CreatedBy: "admin:alice",
	}
}

func closeStore(t testing.TB, s Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Errorf("close store: %v", err)
	}
}

// testPersists stores, revokes and reads back tokens through a second
// handle: every field survives, and the first revocation stands.
func testPersists(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	a := Token("00000000000000aa", auth.RoleReviewer, "acme", "globex")
	a.Expires = a.Created.Add(24 * time.Hour)
	b := Token("00000000000000bb", auth.RoleAdmin)
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
	if revoked, err := s.RevokeToken(ctx, a.ID, at, "admin:bob", "left"); err != nil || !revoked {
		t.Fatalf("revoke: %v, %v", revoked, err)
	}
	if revoked, err := s.RevokeToken(ctx, a.ID, at.Add(time.Hour), "admin:carol", "again"); err != nil || revoked {
		t.Fatalf("revoke again: %v, %v", revoked, err)
	}
	closeStore(t, s)

	s = open(t)
	defer closeStore(t, s)
	got, err := s.Token(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := a
	want.Revoked, want.RevokedBy, want.RevokeReason = at, "admin:bob", "left"
	if err := sameToken(got, want); err != nil {
		t.Error(err)
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("tokens %+v, %v", list, err)
	}
	if list[1].Matters == nil || len(list[1].Matters) != 0 || !list[1].Expires.IsZero() || !list[1].Revoked.IsZero() {
		t.Errorf("token without matters, expiry or revocation read back as %+v", list[1])
	}
}

// sameToken compares every field of two tokens.
func sameToken(got, want auth.Token) error {
	if got.ID != want.ID || got.Hash != want.Hash || got.Role != want.Role || !slices.Equal(got.Matters, want.Matters) ||
		got.Name != want.Name || got.Email != want.Email || got.Description != want.Description || !got.Created.Equal(want.Created) || got.CreatedBy != want.CreatedBy ||
		!got.Expires.Equal(want.Expires) || !got.Revoked.Equal(want.Revoked) || got.RevokedBy != want.RevokedBy ||
		got.RevokeReason != want.RevokeReason {
		return fmt.Errorf("got %+v\nwant %+v", got, want)
	}
	return nil
}

func testMissingToken(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	defer closeStore(t, s)
	if _, err := s.RevokeToken(ctx, "missing", time.Now(), "x", "y"); !errors.Is(err, auth.ErrTokenNotFound) {
		t.Errorf("revoke missing: %v", err)
	}
	if _, err := s.Token(ctx, "missing"); !errors.Is(err, auth.ErrTokenNotFound) {
		t.Errorf("get missing: %v", err)
	}
	if _, err := s.RevokeToken(ctx, "missing", time.Time{}, "x", "y"); err == nil {
		t.Error("revocation without a time accepted")
	}
	if list, err := s.Tokens(ctx); err != nil || len(list) != 0 {
		t.Errorf("empty store lists %+v, %v", list, err)
	}
}

// testConcurrent stores and lists from many goroutines on one handle.
func testConcurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	defer closeStore(t, s)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		id := fmt.Sprintf("%016x", i+1)
		wg.Go(func() { errs <- s.PutToken(ctx, Token(id, auth.RoleViewer)) })
		wg.Go(func() {
			_, err := s.Tokens(ctx)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if list, err := s.Tokens(ctx); len(list) != 20 || err != nil {
		t.Errorf("%d tokens, %v", len(list), err)
	}
}

// testRacePutSameID: two replicas store a token with one id at once;
// exactly one succeeds, and the stored token is the winner's.
func testRacePutSameID(t *testing.T, open Opener) {
	ctx := context.Background()
	replicas := []Store{open(t), open(t)}
	defer func() {
		for _, s := range replicas {
			closeStore(t, s)
		}
	}()
	for round := range 10 {
		id := fmt.Sprintf("%016x", 0xa0+round)
		errs := make([]error, len(replicas))
		toks := make([]auth.Token, len(replicas))
		var wg sync.WaitGroup
		for i, s := range replicas {
			toks[i] = Token(id, auth.RoleViewer)
			toks[i].CreatedBy = fmt.Sprintf("replica-%d", i)
			wg.Go(func() { errs[i] = s.PutToken(ctx, toks[i]) })
		}
		wg.Wait()
		winner := slices.IndexFunc(errs, func(err error) bool { return err == nil })
		if winner < 0 || slices.ContainsFunc(errs[winner+1:], func(err error) bool { return err == nil }) {
			t.Fatalf("round %d: want exactly one success, got %v", round, errs)
		}
		got, err := replicas[1-winner].Token(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameToken(got, toks[winner]); err != nil {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

// testRaceRevoke: two replicas revoke one token at once, each saying why;
// both calls succeed, exactly one is told it revoked the token (so that
// one audit entry is written), and its revocation is kept, whole.
func testRaceRevoke(t *testing.T, open Opener) {
	ctx := context.Background()
	replicas := []Store{open(t), open(t)}
	defer func() {
		for _, s := range replicas {
			closeStore(t, s)
		}
	}()
	base := Token("0000000000000000", auth.RoleViewer).Created
	for round := range 10 {
		id := fmt.Sprintf("%016x", 0xb0+round)
		if err := replicas[0].PutToken(ctx, Token(id, auth.RoleViewer)); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, len(replicas))
		won := make([]bool, len(replicas))
		var wg sync.WaitGroup
		for i, s := range replicas {
			at := base.Add(time.Duration(i+1) * time.Minute)
			wg.Go(func() {
				won[i], errs[i] = s.RevokeToken(ctx, id, at, fmt.Sprintf("admin:%d", i), fmt.Sprintf("reason %d", i))
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got, err := replicas[0].Token(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(won, true)
		if i < 0 || won[1-i] {
			t.Fatalf("round %d: revocations reported %v, want exactly one", round, won)
		}
		if got.RevokedBy != fmt.Sprintf("admin:%d", i) || got.RevokeReason != fmt.Sprintf("reason %d", i) || !got.Revoked.Equal(base.Add(time.Duration(i+1)*time.Minute)) {
			t.Errorf("round %d: revocation mixes the two replicas' or is lost: %+v", round, got)
		}
	}
}

// auditCount counts the audit entries of each action.
type auditCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *auditCount) Record(_ context.Context, _, action, _, _ string, _ map[string]any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n[action]++
	return nil
}

func (a *auditCount) count(action string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[action]
}

// testRaceRevokeAuditedOnce: managers on two replicas revoke one token at
// once; the audit log records one revocation.
func testRaceRevokeAuditedOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	audit := &auditCount{n: map[string]int{}}
	var mgrs []*auth.Manager
	for range 2 {
		s := open(t)
		defer closeStore(t, s)
		m, err := auth.NewManager(s, audit, auth.ManagerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mgrs = append(mgrs, m)
	}
	for round := range 10 {
		_, tok, err := mgrs[0].Create(ctx, "admin:alice", auth.CreateRequest{Role: auth.RoleViewer, Matters: []string{"M-1"}, Name: "Vic Viewer"})
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, len(mgrs))
		var wg sync.WaitGroup
		for i, m := range mgrs {
			wg.Go(func() { errs[i] = m.Revoke(ctx, fmt.Sprintf("admin:%d", i), tok.ID, "race") })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if n := audit.count(auth.AuditTokenRevoke); n != round+1 {
			t.Fatalf("round %d: %d revocations audited, want %d", round, n, round+1)
		}
	}
}

// BenchmarkToken measures Token, which every API request calls, from
// parallel goroutines on one handle.
func BenchmarkToken(b *testing.B, open Opener) {
	ctx := context.Background()
	s := open(b)
	defer closeStore(b, s)
	tok := Token("00000000000000aa", auth.RoleReviewer, "acme")
	if err := s.PutToken(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Token(ctx, tok.ID); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// testText: descriptions and matters in any script are kept as they are;
// a NUL or invalid UTF-8, which not every store can keep, is refused
// before anything is stored.
func testText(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	defer closeStore(t, s)
	m, err := auth.NewManager(s, &auditCount{n: map[string]int{}}, auth.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := auth.CreateRequest{Role: auth.RoleReviewer, Matters: []string{"Müller ./. 株式会社", "M-17 'x'; --"}, Description: "Zoë, 外部弁護士 🙂",
		Name: "Zoë 山田", Email: "zoe@example.co.jp"}
	_, tok, err := m.Create(ctx, "admin:alice", req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Token(ctx, tok.ID)
	if err != nil || got.Description != req.Description || got.Name != req.Name || got.Email != req.Email || !slices.Equal(got.Matters, tok.Matters) || len(got.Matters) != 2 {
		t.Fatalf("read back %+v, %v", got, err)
	}
	for _, bad := range []auth.CreateRequest{
		{Role: auth.RoleViewer, Matters: []string{"a\x00b"}, Name: "Vic"},
		{Role: auth.RoleViewer, Matters: []string{"\xff"}, Name: "Vic"},
		{Role: auth.RoleViewer, Matters: []string{"M"}, Name: "Vic", Description: "nul\x00"},
		{Role: auth.RoleViewer, Matters: []string{"M"}, Name: "Vic", Description: "bad \xc3\x28"},
		{Role: auth.RoleViewer, Matters: []string{"M"}, Name: "Vi\x00c"},
	} {
		if _, _, err := m.Create(ctx, "admin:alice", bad); !errors.Is(err, auth.ErrInvalidText) {
			t.Errorf("create %+q: %v, want ErrInvalidText", bad, err)
		}
	}
	if list, err := s.Tokens(ctx); err != nil || len(list) != 1 {
		t.Errorf("%d tokens stored (%v), want 1", len(list), err)
	}
}

// newManager returns a Manager over s that audits to a counter.
func newManager(t *testing.T, s Store) *auth.Manager {
	t.Helper()
	m, err := auth.NewManager(s, &auditCount{n: map[string]int{}}, auth.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// testPerson: a token is a person's; their name and e-mail address are
// stored with it, and its principal acts under that name, with the token
// id beside it.
func testPerson(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	defer closeStore(t, s)
	m := newManager(t, s)
	secret, tok, err := m.Create(ctx, "admin:alice", auth.CreateRequest{Role: auth.RoleReviewer, Matters: []string{"M-17"},
		Name: " Jane Doe ", Email: "jane@example.com", Description: "paralegal"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Token(ctx, tok.ID)
	if err != nil || got.Name != "Jane Doe" || got.Email != "jane@example.com" {
		t.Fatalf("read back %+v, %v", got, err)
	}
	p, err := m.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Jane Doe (token:" + tok.ID + ")"; p.Name != "Jane Doe" || p.Actor() != want {
		t.Errorf("principal %+v acts as %q, want %q", p, p.Actor(), want)
	}
}

// testTokenWithoutPerson: a token stored before tokens named a person
// (no name, no e-mail) still authenticates, named by its description or,
// without one, by its id.
func testTokenWithoutPerson(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	defer closeStore(t, s)
	m := newManager(t, s)
	secret, described := oldToken(t, s, "0000000000000011", "initial admin token")
	bare, _ := oldToken(t, s, "0000000000000012", "")
	for secret, want := range map[string][2]string{
		secret: {"initial admin token", "initial admin token (token:0000000000000011)"},
		bare:   {"token 0000000000000012", "token:0000000000000012"},
	} {
		p, err := m.Authenticate(ctx, secret)
		if err != nil {
			t.Fatalf("old token %s: %v", want[0], err)
		}
		if p.DisplayName() != want[0] || p.Actor() != want[1] || p.Role != auth.RoleAdmin {
			t.Errorf("old token authenticates as %+v (%q, %q), want %q", p, p.DisplayName(), p.Actor(), want)
		}
	}
	if got, err := s.Token(ctx, described.ID); err != nil || got.Name != "" || got.DisplayName() != "initial admin token" {
		t.Errorf("old token reads back as %+v, %v", got, err)
	}
}

// oldToken stores an admin token as a release before people were
// recorded did: no name, no e-mail. It returns the token's secret.
func oldToken(t *testing.T, s Store, id, description string) (string, auth.Token) {
	t.Helper()
	secret := make([]byte, 32)
	copy(secret, id)
	tok := Token(id, auth.RoleAdmin)
	tok.Name, tok.Email, tok.Description = "", "", description
	tok.Hash = auth.HashSecret(id, secret)
	if err := s.PutToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	return auth.TokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(secret), tok
}

// testRevokeEndsSessions: a token revoked through one replica is refused
// by another on its very next request: nothing caches a token.
func testRevokeEndsSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	a, b := open(t), open(t)
	defer closeStore(t, a)
	defer closeStore(t, b)
	ma, mb := newManager(t, a), newManager(t, b)
	secret, tok, err := ma.Create(ctx, "admin:alice", auth.CreateRequest{Role: auth.RoleViewer, Matters: []string{"M-1"}, Name: "Vic Viewer"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*auth.Manager{ma, mb} {
		if _, err := m.Authenticate(ctx, secret); err != nil {
			t.Fatalf("before revocation: %v", err)
		}
	}
	if err := mb.Revoke(ctx, "admin:bob", tok.ID, "left the matter"); err != nil {
		t.Fatal(err)
	}
	for i, m := range []*auth.Manager{ma, mb} {
		if _, err := m.Authenticate(ctx, secret); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("replica %d, request after revocation: %v, want ErrInvalidToken", i, err)
		}
	}
}
