package api

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/simdex/simdex/auth"
)

// Every API route needs a token; the tests' plain http.Get and http.Post
// calls are signed by signingTransport with the token registered for the
// server they call.

// testAdminToken is what staticAuth accepts, for api values built in tests.
const testAdminToken = "test-admin"

// staticAuth authenticates testAdminToken as an admin of every matter.
type staticAuth struct{}

func (staticAuth) Authenticate(_ context.Context, token string) (auth.Principal, error) {
	if token != testAdminToken {
		return auth.Principal{}, auth.ErrInvalidToken
	}
	return auth.Principal{TokenID: "test", Role: auth.RoleAdmin}, nil
}

// testTokens maps a server's host:port to a function returning its token.
var testTokens sync.Map

// signAs makes requests to the server at hostport carry token().
func signAs(hostport string, token func() string) {
	testTokens.Store(strings.TrimPrefix(strings.TrimPrefix(hostport, "http://"), "https://"), token)
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
