package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// Authenticator checks a bearer token; *Manager is one.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// Option configures Middleware.
type Option func(*middleware)

// ClientCerts authenticates requests that carry no bearer token by their
// verified client certificate, mapped to a principal by certs. The server's
// tls.Config must verify client certificates (see MTLSConfig).
func ClientCerts(certs *CertMap) Option {
	return func(m *middleware) { m.certs = certs }
}

type middleware struct {
	auth  Authenticator
	next  http.Handler
	certs *CertMap
}

// Middleware authenticates every request and passes it to next with its
// Principal in the context (FromContext). A request with a bearer token is
// judged by the token alone; one without is judged by its client
// certificate when ClientCerts is given. Anything else is answered 401
// with a JSON error body.
func Middleware(auth Authenticator, next http.Handler, opts ...Option) http.Handler {
	m := &middleware{auth: auth, next: next}
	for _, o := range opts {
		o(m)
	}
	return m
}

func (m *middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, err := m.principal(r)
	if err != nil {
		status, msg := http.StatusUnauthorized, "invalid or missing credentials"
		if !errors.Is(err, ErrUnauthenticated) {
			// The store failed: not the caller's fault.
			status, msg = http.StatusServiceUnavailable, "authentication unavailable"
		}
		writeError(w, status, msg)
		return
	}
	m.next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), p)))
}

func (m *middleware) principal(r *http.Request) (Principal, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return Principal{}, ErrInvalidToken
		}
		return m.auth.Authenticate(r.Context(), strings.TrimSpace(token))
	}
	if m.certs != nil && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		return m.certs.Principal(r.TLS.VerifiedChains[0][0])
	}
	return Principal{}, ErrUnauthenticated
}

// Require passes requests whose principal holds perm to h; it answers 401
// without a principal (h is not behind Middleware) and 403 without perm.
func Require(perm Permission, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := FromContext(r.Context())
		if !ok {
			writeError(w, http.StatusUnauthorized, "invalid or missing credentials")
			return
		}
		if !p.Can(perm) {
			writeError(w, http.StatusForbidden, "role "+string(p.Role)+" lacks permission "+string(perm))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// writeError answers {"error": msg} with status, and a 401 with the
// bearer challenge.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="simdex"`)
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
