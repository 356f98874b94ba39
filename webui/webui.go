package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// contentType names the media type of every kind of file under static/,
// so that answers do not depend on the host's /etc/mime.types.
func contentType(ext string) (string, bool) {
	switch ext {
	case ".html":
		return "text/html; charset=utf-8", true
	case ".css":
		return "text/css; charset=utf-8", true
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8", true
	case ".svg":
		return "image/svg+xml", true
	case ".png":
		return "image/png", true
	case ".json":
		return "application/json", true
	case ".md":
		return "text/markdown; charset=utf-8", true
	case "": // LICENSE
		return "text/plain; charset=utf-8", true
	}
	return "", false
}

// csp allows only same-origin scripts, styles, images and API calls.
// Inline styles are allowed because the vendored graph and chart
// libraries size their canvases with style attributes; inline scripts are
// not.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// file is one embedded file, ready to serve.
type file struct {
	data        []byte
	contentType string
	etag        string
}

type handler struct {
	files map[string]file // by path under static/, "index.html", "js/app.js"...
}

// Handler serves the UI's files: GET / answers index.html, GET /ui/... the
// assets (GET /ui/js/app.js is static/js/app.js). HEAD is answered too;
// other methods get 405 and unknown paths 404. The handler is safe for
// concurrent use and holds no state but the embedded files.
func Handler() http.Handler {
	h := &handler{files: map[string]file{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ct, ok := contentType(path.Ext(p))
		if !ok {
			ct = http.DetectContentType(data)
		}
		sum := sha256.Sum256(data)
		h.files[strings.TrimPrefix(p, "static/")] = file{data: data, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		// The files are compiled in: a walk cannot fail at run time
		// unless the binary itself is corrupt.
		panic("webui: read embedded files: " + err.Error())
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var name string
	switch {
	case r.URL.Path == "/" || r.URL.Path == "/index.html":
		name = "index.html"
	case strings.HasPrefix(r.URL.Path, "/ui/"):
		name = strings.TrimPrefix(r.URL.Path, "/ui/")
	default:
		http.NotFound(w, r)
		return
	}
	f, ok := h.files[name]
	if !ok || strings.Contains(name, "..") {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", f.contentType)
	hd.Set("ETag", f.etag)
	// Revalidate every time: the ETag makes that a 304, and a new
	// binary's files are never mixed with an old one's.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	if name == "index.html" {
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Frame-Options", "DENY")
	}
	// ServeContent answers If-None-Match and Range; the zero time leaves
	// Last-Modified out (embedded files have none).
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.data))
}
