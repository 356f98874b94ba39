package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/simdex/simdex/daemon"
)

// daemonClient calls a running daemon's HTTP API at http.addr.
type daemonClient struct {
	base string
	hc   *http.Client
}

// daemonClient returns a client of the daemon --config configures, at
// addr (default http.addr, over https when http.tls is set), signing
// every request with the API token.
func (g *globals) daemonClient(addr string) (*daemonClient, error) {
	cfg, err := g.load()
	if err != nil {
		return nil, err
	}
	addr = cmp.Or(addr, cfg.HTTP.Addr)
	if !strings.Contains(addr, "://") {
		scheme := "http://"
		if cfg.HTTP.TLS.CertFile != "" {
			scheme = "https://"
		}
		addr = scheme + addr
	}
	return &daemonClient{base: strings.TrimRight(addr, "/"), hc: &http.Client{
		Timeout:   10 * time.Minute,
		Transport: bearer{token: g.apiToken(cfg), base: http.DefaultTransport},
	}}, nil
}

// bearer signs requests with an API token.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// apiToken is the token the CLI calls the daemon with: --token, else
// $SIMDEX_TOKEN, else the daemon's initial admin token when this user can
// read it (the operator on the daemon's machine).
func (g *globals) apiToken(cfg daemon.Config) string {
	if g.token != "" {
		return g.token
	}
	if t := strings.TrimSpace(os.Getenv("SIMDEX_TOKEN")); t != "" {
		return t
	}
	t, _ := daemon.ReadTokenFile(cfg.InitialAdminTokenPath())
	return t
}

// doWith sends a request with extra headers and decodes a JSON answer
// into out (when not nil). Non-2xx answers become errors carrying the
// daemon's message, and are decoded into out as well, when they are JSON,
// for answers that explain a refusal.
func (c *daemonClient) doWith(ctx context.Context, method, path string, body any, out any, headers map[string]string) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("call the daemon at %s (is `simdex serve` running?): %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read answer of %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		if out != nil {
			_ = json.Unmarshal(data, out)
		}
		return answerError(method, path, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
		}
	}
	return nil
}

// answerError turns a non-2xx answer into an error carrying the daemon's
// {"error": ...} message when there is one.
func answerError(method, path, status string, data []byte) error {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s %s: %s: %s", method, path, status, e.Error)
	}
	return fmt.Errorf("%s %s: %s", method, path, status)
}
