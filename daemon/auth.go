package daemon

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/policy"
)

// validate checks the TLS section; each error names its key.
func (t *TLSConfig) validate() []error {
	var errs problems
	errs.badIf((t.CertFile == "") != (t.KeyFile == ""), "http.tls", "cert_file and key_file go together")
	errs.badIf(t.ClientCAFile != "" && t.CertFile == "", "http.tls.client_ca_file", "mutual TLS needs cert_file and key_file")
	errs.badIf(len(t.ClientCerts) > 0 && t.ClientCAFile == "", "http.tls.client_certs", "needs client_ca_file to verify the certificates")
	_, err := t.certMap()
	errs.badIf(err != nil, "http.tls.client_certs", "%w", err)
	return errs
}

func (t *TLSConfig) certMap() (*auth.CertMap, error) {
	names := make(map[string]auth.CertIdentity, len(t.ClientCerts))
	for _, c := range t.ClientCerts {
		if _, dup := names[c.Name]; dup {
			return nil, fmt.Errorf("%q is mapped twice", c.Name)
		}
		names[c.Name] = auth.CertIdentity{Role: auth.Role(c.Role), Matters: c.Matters}
	}
	return auth.NewCertMap(names)
}

// serverTLS returns the server's TLS configuration, or nil for plain HTTP.
func (t *TLSConfig) serverTLS() (*tls.Config, error) {
	if t.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.ClientCAFile != "" {
		var err error
		if cfg, err = auth.MTLSConfig(t.ClientCAFile); err != nil {
			return nil, fmt.Errorf("http.tls.client_ca_file: %w", err)
		}
		// Token clients need no certificate; a certificate that is given
		// must verify.
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("http.tls: load certificate: %w", err)
	}
	cfg.Certificates = []tls.Certificate{cert}
	return cfg, nil
}

// auditLog records token changes in the policy audit log, so that the one
// tamper-evident log answers who could do what, and when.
type auditLog struct {
	log policy.AuditLog
	now func() time.Time
}

// Record implements auth.Auditor.
func (a auditLog) Record(ctx context.Context, actor, action, object, reason string, details map[string]any) error {
	var raw json.RawMessage
	if len(details) > 0 {
		var err error
		if raw, err = json.Marshal(details); err != nil {
			return fmt.Errorf("audit %s: %w", action, err)
		}
	}
	return a.log.Append(ctx, policy.AuditEntry{Time: a.now().UTC(), Actor: actor, Action: action, Object: object, Reason: reason, Details: raw})
}

// openTokens opens the token store and the audit log that records token
// changes: log, or the policy store when log is nil (a command run
// without the daemon). With the postgres driver and no pool, it connects
// one of its own, closed by closeStores.
func openTokens(ctx context.Context, cfg *Config, pool *pgxpool.Pool, log policy.AuditLog) (m *auth.Manager, closeStores func() error, err error) {
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			closeAll() // not closeStores: a failing return has set it to nil
		}
	}()
	if cfg.postgres() && pool == nil {
		if pool, err = connectPostgres(ctx, cfg, 2); err != nil {
			return nil, nil, err
		}
		closers = append(closers, func() error { pool.Close(); return nil })
	}
	tokens, err := openTokenStore(ctx, cfg, pool)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, tokens.Close)
	if log == nil {
		pst, err := openPolicyStore(ctx, cfg, pool)
		if err != nil {
			return nil, nil, fmt.Errorf("open audit log: %w", err)
		}
		log = pst
		closers = append(closers, pst.Close)
	}
	if m, err = auth.NewManager(tokens, auditLog{log: log, now: time.Now}, auth.ManagerOptions{}); err != nil {
		return nil, nil, err
	}
	return m, closeAll, nil
}

// CreateToken creates an API token in the token store of cfg, auditing
// the creation, and returns the token (shown once) with its record. It
// works whether or not the daemon is running.
func CreateToken(ctx context.Context, cfg Config, actor string, req auth.CreateRequest) (string, auth.Token, error) {
	m, closeStores, err := openTokens(ctx, &cfg, nil, nil)
	if err != nil {
		return "", auth.Token{}, err
	}
	defer closeStores()
	return m.Create(ctx, actor, req)
}

// RevokeToken revokes the token with id, auditing why.
func RevokeToken(ctx context.Context, cfg Config, actor, id, reason string) error {
	m, closeStores, err := openTokens(ctx, &cfg, nil, nil)
	if err != nil {
		return err
	}
	defer closeStores()
	return m.Revoke(ctx, actor, id, reason)
}

// ListTokens returns every token, oldest first (hashes, never secrets).
func ListTokens(ctx context.Context, cfg Config) ([]auth.Token, error) {
	m, closeStores, err := openTokens(ctx, &cfg, nil, nil)
	if err != nil {
		return nil, err
	}
	defer closeStores()
	return m.Tokens(ctx)
}

// InitialAdminName is the person of the initial admin token: the operator
// who started the daemon, whose actions are recorded under this name.
const InitialAdminName = "initial admin"

// bootstrapToken creates the first admin token when no token exists yet,
// writing it to a file only its owner can read.
func bootstrapToken(ctx context.Context, cfg *Config, m *auth.Manager, log *slog.Logger) error {
	ts, err := m.Tokens(ctx)
	if err != nil {
		return fmt.Errorf("list tokens: %w", err)
	}
	if len(ts) > 0 {
		return nil
	}
	path := cfg.InitialAdminTokenPath()
	// O_EXCL: never overwrite a token file an operator may still rely on.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create initial admin token: %s exists but the token store %s is empty; remove the file to make a new token", path, cfg.TokensPath())
	}
	if err != nil {
		return fmt.Errorf("create initial admin token: %w", err)
	}
	secret, tok, err := m.Create(ctx, "simdex", auth.CreateRequest{Role: auth.RoleAdmin, Name: InitialAdminName, Description: "initial admin token"})
	if err == nil {
		_, err = f.WriteString(secret + "\n")
		err = errors.Join(err, f.Sync())
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("create initial admin token: %w", err)
	}
	log.Info("created the initial admin token; use it to create the others with `simdex token create`, then revoke it",
		"file", path, "token_id", tok.ID)
	return nil
}

// ReadTokenFile returns the token in a file such as the initial admin
// token's.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
