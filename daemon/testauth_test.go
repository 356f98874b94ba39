package daemon

import (
	"net/http"
	"strings"
	"sync"
)

// The integration tests' plain http.Get and http.Post calls are signed by
// signingTransport with the token registered for the daemon they call.

// testTokens maps a server's host:port to a function returning its token.
var testTokens sync.Map

// signWithTokenFile signs requests to hostport with the token in path (the
// daemon's initial admin token).
func signWithTokenFile(hostport, path string) {
	testTokens.Store(strings.TrimPrefix(hostport, "http://"), func() string {
		tok, _ := ReadTokenFile(path)
		return tok
	})
}

type signingTransport struct{ base http.RoundTripper }

func (s signingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f, ok := testTokens.Load(r.URL.Host); ok && r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+f.(func() string)())
	}
	return s.base.RoundTrip(r)
}

func init() {
	http.DefaultClient.Transport = signingTransport{base: http.DefaultTransport}
}
