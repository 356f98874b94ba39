package auth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/auth/sqlite"
)

// clock is an injectable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// auditLog records what the manager audits.
type auditLog struct {
	mu      sync.Mutex
	entries []entry
	fail    error
}

type entry struct {
	actor, action, object, reason string
	details                       map[string]any
}

func (a *auditLog) Record(_ context.Context, actor, action, object, reason string, details map[string]any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail != nil {
		return a.fail
	}
	a.entries = append(a.entries, entry{actor, action, object, reason, details})
	return nil
}

type env struct {
	path  string
	store *sqlite.Store
	mgr   *auth.Manager
	clock *clock
	audit *auditLog
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{path: filepath.Join(t.TempDir(), "auth.db"), clock: &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}, audit: &auditLog{}}
	var err error
	e.store, err = sqlite.Open(context.Background(), e.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.store.Close() })
	e.mgr, err = auth.NewManager(e.store, e.audit, auth.ManagerOptions{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// create makes a token; one without a person is for "Test Person".
func (e *env) create(t *testing.T, req auth.CreateRequest) (string, auth.Token) {
	t.Helper()
	if req.Name == "" {
		req.Name = "Test Person"
	}
	secret, tok, err := e.mgr.Create(context.Background(), "admin:alice", req)
	if err != nil {
		t.Fatal(err)
	}
	return secret, tok
}

func TestCreateAuthenticateRevoke(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s, tok := e.create(t, auth.CreateRequest{Role: auth.RoleReviewer, Matters: []string{" globex ", "acme", "acme"},
		Name: "Bob Reviewer", Email: "bob@example.com", Description: "Bob, review team"})
	if !strings.HasPrefix(s, auth.TokenPrefix+tok.ID+"_") {
		t.Fatalf("token %q does not carry its id %s", s, tok.ID)
	}
	id, secret, err := auth.ParseToken(s)
	if err != nil || id != tok.ID || len(secret) != 32 {
		t.Fatalf("ParseToken: %s %d %v", id, len(secret), err)
	}
	p, err := e.mgr.Authenticate(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if p.TokenID != tok.ID || p.Role != auth.RoleReviewer || strings.Join(p.Matters, ",") != "acme,globex" ||
		p.Actor() != "Bob Reviewer (token:"+tok.ID+")" || p.DisplayName() != "Bob Reviewer" {
		t.Errorf("principal %+v", p)
	}
	if len(e.audit.entries) != 1 {
		t.Fatalf("audit entries %+v", e.audit.entries)
	}
	a := e.audit.entries[0]
	if a.actor != "admin:alice" || a.action != auth.AuditTokenCreate || a.object != "token:"+tok.ID || a.details["role"] != "reviewer" ||
		a.details["name"] != "Bob Reviewer" || a.details["email"] != "bob@example.com" {
		t.Errorf("create audit %+v", a)
	}
	for k, v := range a.details {
		if strings.Contains(strings.ToLower(k), "secret") || strings.Contains(fmtAny(v), s[len(auth.TokenPrefix)+17:]) {
			t.Errorf("audit details leak the secret: %s=%v", k, v)
		}
	}

	stored, err := e.store.Token(ctx, tok.ID)
	if err != nil || stored.CreatedBy != "admin:alice" || stored.Description != "Bob, review team" || !stored.Created.Equal(e.clock.Now()) {
		t.Errorf("stored %+v, %v", stored, err)
	}

	if err := e.mgr.Revoke(ctx, "admin:alice", tok.ID, "left the team"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.mgr.Authenticate(ctx, s); !errors.Is(err, auth.ErrInvalidToken) || !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("revoked token: %v", err)
	}
	if len(e.audit.entries) != 2 || e.audit.entries[1].action != auth.AuditTokenRevoke || e.audit.entries[1].reason != "left the team" ||
		e.audit.entries[1].details["name"] != "Bob Reviewer" {
		t.Errorf("revoke audit %+v", e.audit.entries)
	}
	// Revoking again changes and audits nothing.
	if err := e.mgr.Revoke(ctx, "admin:bob", tok.ID, "again"); err != nil || len(e.audit.entries) != 2 {
		t.Errorf("second revoke: %v, %d entries", err, len(e.audit.entries))
	}
	if got, _ := e.store.Token(ctx, tok.ID); got.RevokedBy != "admin:alice" || got.RevokeReason != "left the team" {
		t.Errorf("first revocation not kept: %+v", got)
	}
	if err := e.mgr.Revoke(ctx, "admin:alice", "0123456789abcdef", "x"); !errors.Is(err, auth.ErrTokenNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	list, err := e.mgr.Tokens(ctx)
	if err != nil || len(list) != 1 || list[0].ID != tok.ID {
		t.Errorf("tokens %+v, %v", list, err)
	}
}

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCreateRefuses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, _, err := e.mgr.Create(ctx, "a", auth.CreateRequest{Role: "root"}); !errors.Is(err, auth.ErrUnknownRole) {
		t.Errorf("unknown role: %v", err)
	}
	if _, _, err := e.mgr.Create(ctx, "a", auth.CreateRequest{Role: auth.RoleViewer, Matters: []string{" "}}); err == nil {
		t.Error("empty matter accepted")
	}
	for name, tc := range map[string]struct {
		req  auth.CreateRequest
		want error
	}{
		"no person":           {auth.CreateRequest{Role: auth.RoleAdmin}, auth.ErrInvalidPerson},
		"blank name":          {auth.CreateRequest{Role: auth.RoleAdmin, Name: "  "}, auth.ErrInvalidPerson},
		"name of two lines":   {auth.CreateRequest{Role: auth.RoleAdmin, Name: "Jane\nDoe"}, auth.ErrInvalidPerson},
		"name too long":       {auth.CreateRequest{Role: auth.RoleAdmin, Name: strings.Repeat("J", 201)}, auth.ErrInvalidPerson},
		"not an e-mail":       {auth.CreateRequest{Role: auth.RoleAdmin, Name: "Jane", Email: "jane"}, auth.ErrInvalidPerson},
		"e-mail with a name":  {auth.CreateRequest{Role: auth.RoleAdmin, Name: "Jane", Email: "Jane <jane@example.com>"}, auth.ErrInvalidPerson},
		"e-mail without TLD":  {auth.CreateRequest{Role: auth.RoleAdmin, Name: "Jane", Email: "jane@localhost"}, auth.ErrInvalidPerson},
		"role in capitals":    {auth.CreateRequest{Role: "Reviewer", Matters: []string{"M"}, Name: "Jane"}, auth.ErrUnknownRole},
		"viewer, no matter":   {auth.CreateRequest{Role: auth.RoleViewer, Name: "Jane"}, auth.ErrMatterRequired},
		"reviewer, no matter": {auth.CreateRequest{Role: auth.RoleReviewer, Name: "Jane"}, auth.ErrMatterRequired},
		"blank matter":        {auth.CreateRequest{Role: auth.RoleAdmin, Matters: []string{"\t"}, Name: "Jane"}, auth.ErrInvalidMatter},
		"matter with NUL":     {auth.CreateRequest{Role: auth.RoleAdmin, Matters: []string{"M\x00"}, Name: "Jane"}, auth.ErrInvalidMatter},
	} {
		if _, _, err := e.mgr.Create(ctx, "a", tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if list, _ := e.mgr.Tokens(ctx); len(list) != 0 {
		t.Fatalf("refused requests stored %+v", list)
	}
	if _, err := auth.NewManager(e.store, nil, auth.ManagerOptions{}); err == nil {
		t.Error("manager without auditor")
	}
	// A creation that cannot be audited leaves no usable token.
	e.audit.fail = errors.New("audit log down")
	s, _, err := e.mgr.Create(ctx, "a", auth.CreateRequest{Role: auth.RoleAdmin, Name: "Ada Admin"})
	if err == nil || s != "" {
		t.Fatalf("unaudited creation: %q, %v", s, err)
	}
	list, _ := e.mgr.Tokens(ctx)
	if len(list) != 1 || list[0].Revoked.IsZero() {
		t.Errorf("unaudited token not revoked: %+v", list)
	}
}

func TestExpiry(t *testing.T) {
	e := newEnv(t)
	s, tok := e.create(t, auth.CreateRequest{Role: auth.RoleViewer, Matters: []string{"acme"}, TTL: time.Hour})
	if !tok.Expires.Equal(e.clock.Now().Add(time.Hour)) {
		t.Errorf("expires %s", tok.Expires)
	}
	e.clock.Advance(59 * time.Minute)
	if _, err := e.mgr.Authenticate(context.Background(), s); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	e.clock.Advance(time.Minute)
	if _, err := e.mgr.Authenticate(context.Background(), s); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("at expiry: %v", err)
	}
}

// TestSecretNotStored reads the database files byte for byte.
func TestSecretNotStored(t *testing.T) {
	e := newEnv(t)
	var tokens []string
	for range 5 {
		s, _ := e.create(t, auth.CreateRequest{Role: auth.RoleAdmin})
		tokens = append(tokens, s)
	}
	var raw []byte
	read := func() {
		raw = nil
		for _, suffix := range []string{"", "-wal", "-shm"} {
			b, err := os.ReadFile(e.path + suffix)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			raw = append(raw, b...)
		}
	}
	check := func(when string) {
		read()
		for _, s := range tokens {
			id, secret, _ := auth.ParseToken(s)
			if !bytes.Contains(raw, []byte(id)) {
				t.Fatalf("%s: token id %s not found: the check reads the wrong files", when, id)
			}
			for _, leak := range [][]byte{[]byte(s), secret, []byte(base64.RawURLEncoding.EncodeToString(secret)), []byte(hex.EncodeToString(secret)), []byte(base64.StdEncoding.EncodeToString(secret))} {
				if bytes.Contains(raw, leak) {
					t.Fatalf("%s: the database holds the secret of token %s", when, id)
				}
			}
			h := auth.HashSecret(id, secret)
			if !bytes.Contains(raw, h[:]) {
				t.Errorf("%s: hash of %s not stored", when, id)
			}
		}
	}
	check("in the WAL")
	e.store.Close()
	check("after checkpoint")
}

func TestParseTokenMalformed(t *testing.T) {
	good := auth.TokenPrefix + "0123456789abcdef_" + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32))
	if _, _, err := auth.ParseToken(good); err != nil {
		t.Fatalf("good token: %v", err)
	}
	for _, s := range []string{
		"", "sdx_", "sdx_0123456789abcdef", "sdx_0123456789abcdef_",
		strings.Replace(good, "sdx_", "sdy_", 1),
		strings.Replace(good, "0123456789abcdef", "0123456789ABCDEF", 1),
		strings.Replace(good, "0123456789abcdef", "0123456789abcdeg", 1),
		strings.Replace(good, "_", "-", 2),
		good + "A", good[:len(good)-1], good + "=",
		auth.TokenPrefix + "0123456789abcdef_" + base64.RawURLEncoding.EncodeToString(make([]byte, 31)),
	} {
		if _, _, err := auth.ParseToken(s); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("ParseToken(%q): %v", s, err)
		}
	}
}

// echo answers the principal it finds.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, ok := auth.FromContext(r.Context())
	if !ok {
		p = auth.Principal{Subject: "anonymous"}
	}
	json.NewEncoder(w).Encode(p)
})

func call(t *testing.T, h http.Handler, path, authz string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body map[string]any
	b, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("%s: body %q is not JSON", path, b)
	}
	if rec.Code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("401 without WWW-Authenticate")
	}
	return rec.Code, body
}

func TestMiddleware(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	viewer, _ := e.create(t, auth.CreateRequest{Role: auth.RoleViewer, Matters: []string{"acme"}})
	reviewer, revTok := e.create(t, auth.CreateRequest{Role: auth.RoleReviewer, Matters: []string{"acme"}})
	revoked, revokedTok := e.create(t, auth.CreateRequest{Role: auth.RoleAdmin})
	if err := e.mgr.Revoke(ctx, "admin", revokedTok.ID, "test"); err != nil {
		t.Fatal(err)
	}
	expiring, _ := e.create(t, auth.CreateRequest{Role: auth.RoleAdmin, TTL: time.Minute})
	e.clock.Advance(2 * time.Minute)
	id, secret, _ := auth.ParseToken(viewer)
	wrongSecret := auth.TokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(append(secret[1:], secret[0]^1))
	unknown := auth.TokenPrefix + "00000000000000ff_" + base64.RawURLEncoding.EncodeToString(secret)

	mux := http.NewServeMux()
	mux.Handle("/api/v1/documents", auth.Require(auth.PermDocumentsRead, echo))
	mux.Handle("/api/v1/flags/approve", auth.Require(auth.PermFlagsReview, echo))
	mux.Handle("/api/v1/tokens", auth.Require(auth.PermTokensManage, echo))
	mux.Handle("/", echo)
	h := auth.Middleware(e.mgr, mux)

	cases := []struct {
		name, path, authz string
		status            int
	}{
		{"valid viewer", "/api/v1/documents", "Bearer " + viewer, 200},
		{"scheme case", "/api/v1/documents", "bearer " + viewer, 200},
		{"valid reviewer", "/api/v1/flags/approve", "Bearer " + reviewer, 200},
		{"viewer cannot review", "/api/v1/flags/approve", "Bearer " + viewer, 403},
		{"reviewer cannot manage tokens", "/api/v1/tokens", "Bearer " + reviewer, 403},
		{"missing", "/api/v1/documents", "", 401},
		{"malformed", "/api/v1/documents", "Bearer sdx_nonsense", 401},
		{"not bearer", "/api/v1/documents", "Basic " + base64.StdEncoding.EncodeToString([]byte("a:b")), 401},
		{"no token", "/api/v1/documents", "Bearer", 401},
		{"raw token", "/api/v1/documents", viewer, 401},
		{"wrong secret", "/api/v1/documents", "Bearer " + wrongSecret, 401},
		{"unknown id", "/api/v1/documents", "Bearer " + unknown, 401},
		{"revoked", "/api/v1/documents", "Bearer " + revoked, 401},
		{"expired", "/api/v1/documents", "Bearer " + expiring, 401},
		{"unmatched api path", "/api/v1/other", "", 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := call(t, h, c.path, c.authz)
			if status != c.status {
				t.Fatalf("status %d, want %d (%v)", status, c.status, body)
			}
			if status >= 400 {
				if msg, _ := body["error"].(string); msg == "" {
					t.Errorf("error body %v", body)
				}
			}
		})
	}
	// The principal reaches the handler.
	_, body := call(t, h, "/api/v1/flags/approve", "Bearer "+reviewer)
	if body["TokenID"] != revTok.ID || body["Role"] != "reviewer" {
		t.Errorf("principal in context: %v", body)
	}
	// Require without Middleware answers 401.
	if status, _ := call(t, auth.Require(auth.PermDocumentsRead, echo), "/x", "Bearer "+viewer); status != 401 {
		t.Errorf("Require alone: %d", status)
	}
}

// failingStore fails every lookup.
type failingStore struct{ auth.Store }

func (failingStore) Token(context.Context, string) (auth.Token, error) {
	return auth.Token{}, errors.New("disk on fire")
}

func TestMiddlewareStoreDown(t *testing.T) {
	e := newEnv(t)
	s, _ := e.create(t, auth.CreateRequest{Role: auth.RoleAdmin})
	mgr, _ := auth.NewManager(failingStore{e.store}, e.audit, auth.ManagerOptions{})
	if status, _ := call(t, auth.Middleware(mgr, echo), "/api/v1/documents", "Bearer "+s); status != http.StatusServiceUnavailable {
		t.Errorf("store down: %d", status)
	}
}
