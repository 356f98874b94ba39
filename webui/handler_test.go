package webui_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/simdex/simdex/webui"
)

func TestHandlerServesFiles(t *testing.T) {
	srv := httptest.NewServer(webui.Handler())
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, method, path string
		status             int
		contentType        string
		contains           string
	}{
		{name: "index at root", method: "GET", path: "/", status: 200, contentType: "text/html; charset=utf-8", contains: `<script type="module" src="/ui/js/app.js">`},
		{name: "head of index", method: "HEAD", path: "/", status: 200, contentType: "text/html; charset=utf-8"},
		{name: "stylesheet", method: "GET", path: "/ui/app.css", status: 200, contentType: "text/css; charset=utf-8", contains: "del.del"},
		{name: "app module", method: "GET", path: "/ui/js/app.js", status: 200, contentType: "text/javascript; charset=utf-8", contains: "import"},
		{name: "graph library", method: "GET", path: "/ui/vendor/cytoscape/cytoscape.esm.min.mjs", status: 200, contentType: "text/javascript; charset=utf-8", contains: "export"},
		{name: "chart library", method: "GET", path: "/ui/vendor/uplot/uPlot.esm.js", status: 200, contentType: "text/javascript; charset=utf-8", contains: "export"},
		{name: "chart styles", method: "GET", path: "/ui/vendor/uplot/uPlot.min.css", status: 200, contentType: "text/css; charset=utf-8"},
		{name: "licence", method: "GET", path: "/ui/vendor/cytoscape/LICENSE", status: 200, contentType: "text/plain; charset=utf-8", contains: "Permission is hereby granted"},
		{name: "icon", method: "GET", path: "/ui/favicon.svg", status: 200, contentType: "image/svg+xml"},
		{name: "unknown asset", method: "GET", path: "/ui/nope.js", status: 404},
		{name: "directory", method: "GET", path: "/ui/js/", status: 404},
		{name: "escape attempt", method: "GET", path: "/ui/../webui.go", status: 404},
		{name: "other path", method: "GET", path: "/elsewhere", status: 404},
		{name: "post", method: "POST", path: "/ui/app.css", status: 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			if tc.method == "HEAD" && len(body) != 0 {
				t.Errorf("HEAD answered a body of %d bytes", len(body))
			}
			if tc.contains != "" && !strings.Contains(string(body), tc.contains) {
				t.Errorf("body does not contain %q", tc.contains)
			}
		})
	}
}

func TestIndexHasStrictCSPAndRevalidates(t *testing.T) {
	srv := httptest.NewServer(webui.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Header.Set("If-None-Match", etag)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation status = %d, want 304", resp.StatusCode)
	}
}

// TestNothingExternal checks that no file refers to another origin: the
// UI must work with no network but the daemon's.
func TestNothingExternal(t *testing.T) {
	srv := httptest.NewServer(webui.Handler())
	t.Cleanup(srv.Close)
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import\s+url\(\s*["']?https?:|from\s+["']https?:`)
	for _, p := range []string{"/", "/ui/app.css", "/ui/js/app.js", "/ui/js/api.js", "/ui/js/dom.js", "/ui/js/search.js",
		"/ui/js/document.js", "/ui/js/diff.js", "/ui/js/flags.js", "/ui/js/holds.js", "/ui/js/charts.js", "/ui/js/tables.js", "/ui/js/signin.js"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: status %d", p, resp.StatusCode)
			continue
		}
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to another origin: %s", p, m)
		}
		if strings.Contains(string(b), "innerHTML") || strings.Contains(string(b), "insertAdjacentHTML") {
			t.Errorf("%s builds markup from strings", p)
		}
	}
}
