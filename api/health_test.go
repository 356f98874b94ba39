package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReadyz: /readyz answers 200 only when every check passes, and 503
// naming the failing ones otherwise, including a check that hangs past
// its timeout and one that ignores its context; /healthz stays 200.
func TestReadyz(t *testing.T) {
	ok := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("dial tcp 10.0.0.7:5432: connection refused") }
	waits := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	ignores := func(context.Context) error { <-stuck; return nil }
	tests := []struct {
		name        string
		checks      []Check
		wantCode    int
		wantFailing []string
	}{
		{name: "no checks", wantCode: http.StatusOK},
		{name: "all pass", checks: []Check{{"started", ok}, {"nats", ok}, {"index", ok}}, wantCode: http.StatusOK},
		{name: "store down", checks: []Check{{"started", ok}, {"nats", ok}, {"index", down}}, wantCode: http.StatusServiceUnavailable, wantFailing: []string{"index"}},
		{name: "two down, in order", checks: []Check{{"nats", down}, {"index", ok}, {"policy", down}},
			wantCode: http.StatusServiceUnavailable, wantFailing: []string{"nats", "policy"}},
		{name: "timeout", checks: []Check{{"nats", waits}, {"index", ok}}, wantCode: http.StatusServiceUnavailable, wantFailing: []string{"nats"}},
		{name: "ignores its context", checks: []Check{{"index", ignores}}, wantCode: http.StatusServiceUnavailable, wantFailing: []string{"index"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(readyzServer(t, tc.checks).Handler())
			defer srv.Close()
			code, body := getJSON(t, srv.URL+"/readyz")
			if code != tc.wantCode {
				t.Fatalf("GET /readyz: %d %v, want %d", code, body, tc.wantCode)
			}
			var failing []string
			for _, f := range body["failing"].([]any) {
				failing = append(failing, f.(string))
			}
			if !slices.Equal(failing, tc.wantFailing) {
				t.Errorf("failing %q, want %q", failing, tc.wantFailing)
			}
			if b, _ := json.Marshal(body); strings.Contains(string(b), "refused") {
				t.Errorf("answer %s shows a check's error", b)
			}
			if code, _ := getJSON(t, srv.URL+"/healthz"); code != http.StatusOK {
				t.Errorf("GET /healthz: %d, want 200", code)
			}
		})
	}
}

func readyzServer(t *testing.T, checks []Check) *Server {
	t.Helper()
	a, err := New(Deps{Registry: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Health: checks, HealthTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := map[string]any{"failing": []any{}}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, body
}
