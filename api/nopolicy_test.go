package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAPIWithoutPolicyEngine checks that every route of the policy engine
// answers 503 with the same error while it is not running.
func TestAPIWithoutPolicyEngine(t *testing.T) {
	srv, _ := newTestAPI(t, 1024)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/holds"},
		{"POST", "/api/v1/holds"},
		{"GET", "/api/v1/holds/acme"},
		{"GET", "/api/v1/holds/acme/documents"},
		{"POST", "/api/v1/holds/acme/release"},
		{"GET", "/api/v1/flags"},
		{"POST", "/api/v1/flags/bulk"},
		{"GET", "/api/v1/flags/1"},
		{"POST", "/api/v1/flags/1/approve"},
		{"POST", "/api/v1/policy/evaluate"},
		{"GET", "/api/v1/policy/runs"},
		{"POST", "/api/v1/audit/verify"},
		{"GET", "/api/v1/export?format=csv&matter=acme"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, bytes.NewBufferString("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "the policy engine is not running") {
			t.Errorf("%s %s: %d %s, want 503 naming the policy engine", c.method, c.path, resp.StatusCode, b)
		}
	}
}
