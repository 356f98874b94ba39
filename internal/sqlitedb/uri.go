package sqlitedb

import (
	"net/url"
	"path/filepath"
)

// URI returns the SQLite URI ("file:…") that opens the database file at
// path with the URI parameters query (e.g. "mode=ro&_pragma=…").
//
// "file:"+path broke on every character a URI gives a meaning: a '?' or
// '#' in the path ended it, a '%' started an escape. A relative path
// built with net/url came out as "file://data/index.db", whose "data" is
// an authority SQLite refuses. The path is made absolute (relative to the
// working directory, as SQLite would take it) and escaped.
func URI(path, query string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	// OmitHost: "file:/abs/path", or "file:rel/path" should the working
	// directory be unknown; never an authority.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: query, OmitHost: true}
	return u.String()
}
