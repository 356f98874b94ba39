package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Sentinel errors that callers branch on with errors.Is.
var (
	// ErrUnauthenticated reports a request without credentials.
	ErrUnauthenticated = errors.New("authentication required")
	// ErrForbidden reports a principal without the permission needed.
	ErrForbidden = errors.New("forbidden")
	// ErrInvalidToken reports a token that is malformed, unknown, wrong,
	// expired or revoked. It wraps ErrUnauthenticated.
	ErrInvalidToken = fmt.Errorf("%w: invalid token", ErrUnauthenticated)
	// ErrUnknownRole reports a role name that is not one of Roles.
	ErrUnknownRole = errors.New("unknown role")
	// ErrInvalidMatter reports a matter name a token cannot carry (blank,
	// or not text: see ErrInvalidText).
	ErrInvalidMatter = errors.New("invalid matter name")
	// ErrInvalidText reports a description or matter name that is not
	// text every store keeps: invalid UTF-8 or a NUL character.
	ErrInvalidText = errors.New("not valid UTF-8 text without NUL")
	// ErrTokenNotFound reports a token id the store does not hold.
	ErrTokenNotFound = errors.New("token not found")
)

// TokenPrefix starts every token, so that secret scanners recognise it.
const TokenPrefix = "sdx_"

const (
	idBytes     = 8
	secretBytes = 32
)

// Token is a stored token: everything but its secret.
type Token struct {
	// ID names the token; it is not secret.
	ID string
	// Hash is the SHA-256 of the secret (see HashSecret).
	Hash [32]byte
	Role Role
	// Matters limit the token to named legal matters (see
	// Principal.CanSeeMatter).
	Matters []string
	// Name and Email are the person the token is for; tokens created
	// before people were recorded have neither (see DisplayName).
	Name        string
	Email       string
	Description string
	Created     time.Time
	CreatedBy   string
	// Expires is when the token stops working; zero means never.
	Expires time.Time
	// Revoked is when the token was revoked; zero means it was not.
	Revoked      time.Time
	RevokedBy    string
	RevokeReason string
}

// DisplayName is who the token acts for: its person's name, or for a
// token created without one, its description or "token <id>".
func (t *Token) DisplayName() string {
	switch {
	case t.Name != "":
		return t.Name
	case t.Description != "":
		return t.Description
	}
	return "token " + t.ID
}

// Active reports whether the token authenticates at time now.
func (t *Token) Active(now time.Time) bool {
	return t.Revoked.IsZero() && (t.Expires.IsZero() || now.Before(t.Expires))
}

// Store keeps tokens. Implementations must be safe for concurrent use;
// auth/sqlite is the embedded one, auth/postgres the one a fleet of
// replicas shares; auth/storetest is the suite both pass.
type Store interface {
	// PutToken stores a new token; its id must be new.
	PutToken(ctx context.Context, t Token) error
	// Token returns the token with id, or ErrTokenNotFound.
	Token(ctx context.Context, id string) (Token, error)
	// Tokens returns every token, oldest first.
	Tokens(ctx context.Context) ([]Token, error)
	// RevokeToken marks the token revoked at at, by actor, for reason; it
	// keeps an earlier revocation. It reports whether this call revoked
	// it: of callers racing on one token (replicas sharing a store),
	// exactly one is told true. It returns ErrTokenNotFound for an unknown
	// id.
	RevokeToken(ctx context.Context, id string, at time.Time, actor, reason string) (bool, error)
}

// Auditor records changes in the audit log (the policy audit log, in the
// daemon).
type Auditor interface {
	Record(ctx context.Context, actor, action, object, reason string, details map[string]any) error
}

// Audit actions recorded by Manager.
const (
	AuditTokenCreate = "token.create"
	AuditTokenRevoke = "token.revoke"
)

// Manager creates, revokes and checks tokens. It is safe for concurrent
// use.
type Manager struct {
	store   Store
	auditor Auditor
	now     func() time.Time
	rand    io.Reader
}

// ManagerOptions configure a Manager; the zero value is the default.
type ManagerOptions struct {
	// Now returns the current time (default time.Now); tests set it.
	Now func() time.Time
	// Rand is the source of ids and secrets (default crypto/rand).
	Rand io.Reader
}

// NewManager returns a Manager over store that records every creation and
// revocation with auditor, which is required.
func NewManager(store Store, auditor Auditor, opts ManagerOptions) (*Manager, error) {
	if store == nil || auditor == nil {
		return nil, errors.New("token manager: a store and an auditor are required")
	}
	m := &Manager{store: store, auditor: auditor, now: opts.Now, rand: opts.Rand}
	if m.now == nil {
		m.now = time.Now
	}
	if m.rand == nil {
		m.rand = rand.Reader
	}
	return m, nil
}

// CreateRequest describes a token to create.
type CreateRequest struct {
	Role Role
	// Matters limit the token to named matters; a viewer or reviewer
	// token must name at least one.
	Matters []string
	// Name is the person the token is for (required), Email their
	// address (optional).
	Name        string
	Email       string
	Description string
	// TTL, when positive, makes the token expire TTL after creation.
	TTL time.Duration
}

// Create makes a token for actor's request and returns it once, with its
// stored record. The creation is audited; a token whose creation could not
// be audited is revoked at once and an error returned.
func (m *Manager) Create(ctx context.Context, actor string, req CreateRequest) (string, Token, error) {
	if !req.Role.Valid() {
		return "", Token{}, fmt.Errorf("create token: %w %q", ErrUnknownRole, req.Role)
	}
	matters, err := cleanMatters(req.Matters)
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	if len(matters) == 0 && !req.Role.AtLeast(RoleLegalAdmin) {
		return "", Token{}, fmt.Errorf("create token: role %s: %w", req.Role, ErrMatterRequired)
	}
	name, email := strings.TrimSpace(req.Name), strings.TrimSpace(req.Email)
	if err := checkPerson(name, email); err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	if !isText(req.Description) {
		return "", Token{}, fmt.Errorf("create token: description: %w", ErrInvalidText)
	}
	if req.TTL < 0 {
		return "", Token{}, fmt.Errorf("create token: negative lifetime %s", req.TTL)
	}
	var raw [idBytes + secretBytes]byte
	if _, err := io.ReadFull(m.rand, raw[:]); err != nil {
		return "", Token{}, fmt.Errorf("create token: read random bytes: %w", err)
	}
	id := hex.EncodeToString(raw[:idBytes])
	secret := raw[idBytes:]
	now := m.now().UTC().Truncate(time.Millisecond)
	t := Token{
		ID: id, Hash: HashSecret(id, secret), Role: req.Role, Matters: matters, Name: name, Email: email,
		Description: strings.TrimSpace(req.Description), Created: now, CreatedBy: actor,
	}
	if req.TTL > 0 {
		t.Expires = now.Add(req.TTL)
	}
	if err := m.store.PutToken(ctx, t); err != nil {
		return "", Token{}, fmt.Errorf("create token: store: %w", err)
	}
	details := map[string]any{"role": string(t.Role), "matters": t.Matters, "name": t.Name}
	if t.Email != "" {
		details["email"] = t.Email
	}
	if !t.Expires.IsZero() {
		details["expires"] = t.Expires.Format(time.RFC3339)
	}
	if t.Description != "" {
		details["description"] = t.Description
	}
	if err := m.auditor.Record(ctx, actor, AuditTokenCreate, "token:"+id, t.Description, details); err != nil {
		_, rerr := m.store.RevokeToken(context.WithoutCancel(ctx), id, m.now(), actor, "creation could not be audited")
		return "", Token{}, fmt.Errorf("create token: audit (token %s revoked): %w", id, errors.Join(err, rerr))
	}
	return TokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(secret), t, nil
}

// cleanMatters trims, checks and sorts matter names, dropping repeats.
func cleanMatters(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = strings.TrimSpace(s)
		if err := CheckMatter(s); err != nil {
			return nil, fmt.Errorf("matter %q: %w", s, err)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// isText reports whether s is valid UTF-8 without NUL, which PostgreSQL's
// text columns refuse.
func isText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// Revoke revokes token id for actor, giving reason, and audits it.
// Revoking a revoked token changes nothing and is not audited, even when
// another replica revoked it at the same moment. An unknown id is
// ErrTokenNotFound.
func (m *Manager) Revoke(ctx context.Context, actor, id, reason string) error {
	t, err := m.store.Token(ctx, id)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	if !t.Revoked.IsZero() {
		return nil
	}
	// Revoke first: a revocation that could not be audited still takes
	// effect (the safe way to fail), and the error says so.
	revoked, err := m.store.RevokeToken(ctx, id, m.now().UTC(), actor, reason)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	if !revoked {
		return nil // another caller revoked it first, and audits it
	}
	if err := m.auditor.Record(ctx, actor, AuditTokenRevoke, "token:"+id, reason, map[string]any{"role": string(t.Role), "name": t.DisplayName()}); err != nil {
		return fmt.Errorf("revoke token %s: revoked, but not audited: %w", id, err)
	}
	return nil
}

// Tokens lists every token, oldest first.
func (m *Manager) Tokens(ctx context.Context) ([]Token, error) {
	ts, err := m.store.Tokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return ts, nil
}

// dummyHash is compared against when the id is unknown, so that unknown
// and wrong tokens take the same time.
var dummyHash = sha256.Sum256([]byte("simdex unknown token"))

// Authenticate returns the principal of a token (without the "Bearer "
// scheme). Any token that is malformed, unknown, wrong, expired or revoked
// is ErrInvalidToken, without saying which.
func (m *Manager) Authenticate(ctx context.Context, token string) (Principal, error) {
	id, secret, err := ParseToken(token)
	if err != nil {
		return Principal{}, err
	}
	t, err := m.store.Token(ctx, id)
	want := t.Hash
	if errors.Is(err, ErrTokenNotFound) {
		want = dummyHash
	} else if err != nil {
		return Principal{}, fmt.Errorf("authenticate token %s: %w", id, err)
	}
	got := HashSecret(id, secret)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || err != nil || !t.Active(m.now()) {
		return Principal{}, ErrInvalidToken
	}
	name := t.Name
	if name == "" {
		name = t.Description // a token created before people were recorded
	}
	return Principal{TokenID: t.ID, Name: name, Role: t.Role, Matters: slices.Clone(t.Matters)}, nil
}

// ParseToken splits a token into its id and secret, or returns
// ErrInvalidToken.
func ParseToken(token string) (id string, secret []byte, err error) {
	rest, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok || len(rest) < 2*idBytes+1 || rest[2*idBytes] != '_' {
		return "", nil, ErrInvalidToken
	}
	id = rest[:2*idBytes]
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return "", nil, ErrInvalidToken
	}
	secret, err = base64.RawURLEncoding.Strict().DecodeString(rest[2*idBytes+1:])
	if err != nil || len(secret) != secretBytes {
		return "", nil, ErrInvalidToken
	}
	return id, secret, nil
}

// HashSecret is what the store keeps of a token's secret: the SHA-256 of
// the secret bound to the token's id.
func HashSecret(id string, secret []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("simdex token v1\x00"))
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write(secret)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Principal is who a request acts for.
type Principal struct {
	// TokenID is the token used, or "" for a client certificate.
	TokenID string
	// Name is the person a token acts for, or the description of a token
	// created before people were recorded; "" for a client certificate
	// or a token with neither.
	Name string
	// Subject is the client certificate's mapped name, or "" for a token.
	Subject string
	Role    Role
	// Matters the principal is limited to (see CanSeeMatter).
	Matters []string
}

// Actor names the principal wherever an action is recorded (the audit
// log, a hold's creator, a flag's history): the person with the token
// beside it for forensics, "Jane Doe (token:<id>)", or "cert:<name>".
func (p Principal) Actor() string {
	switch {
	case p.TokenID != "" && p.Name != "":
		return p.Name + " (token:" + p.TokenID + ")"
	case p.TokenID != "":
		return "token:" + p.TokenID
	}
	return "cert:" + p.Subject
}

// DisplayName is who the principal is, for people to read: the token's
// person or the certificate's mapped name.
func (p Principal) DisplayName() string {
	switch {
	case p.TokenID == "":
		return p.Subject
	case p.Name != "":
		return p.Name
	}
	return "token " + p.TokenID
}

// Can reports whether the principal holds permission perm.
func (p Principal) Can(perm Permission) bool { return Allowed(p.Role, perm) }

// CanSeeMatter reports whether the principal may see matter name: it is
// one of its matters, or it has none and is a legal-admin or admin.
func (p Principal) CanSeeMatter(name string) bool {
	if len(p.Matters) == 0 {
		return p.Role.AtLeast(RoleLegalAdmin)
	}
	return slices.Contains(p.Matters, name)
}

// AllMatters reports whether the principal sees every matter.
func (p Principal) AllMatters() bool { return len(p.Matters) == 0 && p.Role.AtLeast(RoleLegalAdmin) }

type ctxKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal Middleware put in ctx.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
