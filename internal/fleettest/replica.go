package fleettest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readyTimeout bounds how long a replica may take to answer /readyz.
const readyTimeout = 2 * time.Minute

// ErrStatus reports an API answer other than 200; callers that poll treat
// it as "not yet".
type ErrStatus struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *ErrStatus) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.Method, e.Path, e.Code, e.Body)
}

// Replica is one `simdex serve` process of a Fleet, with its own data
// directory and configuration file.
type Replica struct {
	proc
	Index      int
	DataDir    string
	ConfigPath string
	Addr       string // its HTTP API, 127.0.0.1:port
	fleet      *Fleet
	client     *http.Client
}

// URL returns the base URL of the replica's HTTP API.
func (r *Replica) URL() string { return "http://" + r.Addr }

// Kill kills the replica with SIGKILL: nothing of it runs after Kill
// returns, and its unacknowledged events are redelivered.
func (r *Replica) Kill() { r.kill() }

// Stop stops the replica with SIGTERM, as an orchestrator would.
func (r *Replica) Stop() { r.stop() }

// Restart starts a killed or stopped replica again with the same data
// directory and configuration, and waits until it is ready.
func (r *Replica) Restart(t testing.TB) {
	t.Helper()
	if err := r.start(); err != nil {
		t.Fatalf("fleettest: %v", err)
	}
	r.WaitReady(t)
}

// WaitReady waits until the replica's /readyz answers 200.
func (r *Replica) WaitReady(t testing.TB) {
	t.Helper()
	err := poll(readyTimeout, r.exited(), func() error {
		resp, err := r.client.Get(r.URL() + "/readyz")
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return &ErrStatus{Method: "GET", Path: "/readyz", Code: resp.StatusCode, Body: string(b)}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fleettest: replica %d not ready: %v", r.Index, err)
	}
}

// token returns the admin token the replica's API accepts: the one it
// wrote at its first start or, when the token store is shared and
// another replica created it, the fleet's first.
func (r *Replica) token() string {
	if b, err := os.ReadFile(filepath.Join(r.DataDir, "initial-admin-token")); err == nil {
		return strings.TrimSpace(string(b))
	}
	for _, o := range r.fleet.Replicas {
		if b, err := os.ReadFile(filepath.Join(o.DataDir, "initial-admin-token")); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

// Get calls GET path as the admin and decodes the JSON answer into out
// (unless out is nil). An answer other than 2xx is an *ErrStatus.
func (r *Replica) Get(path string, out any) error { return r.do("GET", path, nil, out) }

// Post calls POST path with in as its JSON body (none when in is nil).
func (r *Replica) Post(path string, in, out any) error { return r.do("POST", path, in, out) }

func (r *Replica) do(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.URL()+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token())
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("replica %d: %w", r.Index, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &ErrStatus{Method: method, Path: path, Code: resp.StatusCode, Body: string(b)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

// Metric returns the sum of every series of the named metric on
// /metrics.
func (r *Replica) Metric(name string) (float64, error) {
	resp, err := r.client.Get(r.URL() + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("replica %d: %w", r.Index, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("read metrics: %w", err)
	}
	var sum float64
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum, nil
}
