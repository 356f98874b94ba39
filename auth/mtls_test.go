package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdex/simdex/auth"
)

// ca is a test certificate authority.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial int64

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &ca{cert: cert, key: key}
}

// issue signs a leaf certificate.
func (c *ca) issue(t *testing.T, tmpl *x509.Certificate) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// client trusts ca and presents cert, if given, whatever CAs the server
// asks for (Go's client would otherwise keep a foreign certificate back).
func client(ca *ca, cert ...tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	cfg := &tls.Config{RootCAs: pool}
	if len(cert) > 0 {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert[0], nil }
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
}

func TestMTLS(t *testing.T) {
	root := newCA(t, "simdex test CA")
	other := newCA(t, "someone else's CA")
	caFile := filepath.Join(t.TempDir(), "clients.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	serverCert := root.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "simdex"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	clientUsage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	reviewerCert := root.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "review-bot"}, ExtKeyUsage: clientUsage})
	sanURI, _ := url.Parse("spiffe://simdex/ingest")
	sanCert := root.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "unmapped-cn"}, URIs: []*url.URL{sanURI}, ExtKeyUsage: clientUsage})
	unmappedCert := root.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "stranger"}, ExtKeyUsage: clientUsage})
	foreignCert := other.issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "review-bot"}, ExtKeyUsage: clientUsage})

	certs, err := auth.NewCertMap(map[string]auth.CertIdentity{
		"review-bot":             {Role: auth.RoleReviewer, Matters: []string{"acme"}},
		"spiffe://simdex/ingest": {Role: auth.RoleAdmin},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.NewCertMap(map[string]auth.CertIdentity{"x": {Role: "root"}}); !errors.Is(err, auth.ErrUnknownRole) {
		t.Errorf("cert map with unknown role: %v", err)
	}
	if _, err := auth.MTLSConfig(filepath.Join(t.TempDir(), "missing.pem")); err == nil {
		t.Error("missing CA bundle accepted")
	}

	e := newEnv(t)
	token, _ := e.create(t, auth.CreateRequest{Role: auth.RoleViewer, Matters: []string{"acme"}})
	mux := http.NewServeMux()
	mux.Handle("/api/v1/flags", auth.Require(auth.PermFlagsRead, echo))
	mux.Handle("/api/v1/tokens", auth.Require(auth.PermTokensManage, echo))
	h := auth.Middleware(e.mgr, mux, auth.ClientCerts(certs))

	for _, mode := range []tls.ClientAuthType{tls.RequireAndVerifyClientCert, tls.VerifyClientCertIfGiven} {
		cfg, err := auth.MTLSConfig(caFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientAuth = mode
		cfg.Certificates = []tls.Certificate{serverCert}
		srv := httptest.NewUnstartedServer(h)
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected
		srv.TLS = cfg
		srv.StartTLS()

		get := func(c *http.Client, path, bearer string) (int, auth.Principal, error) {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path, nil)
			if bearer != "" {
				req.Header.Set("Authorization", "Bearer "+bearer)
			}
			resp, err := c.Do(req)
			if err != nil {
				return 0, auth.Principal{}, err
			}
			defer resp.Body.Close()
			var p auth.Principal
			json.NewDecoder(resp.Body).Decode(&p)
			return resp.StatusCode, p, nil
		}
		status, p, err := get(client(root, reviewerCert), "/api/v1/flags", "")
		if err != nil || status != 200 || p.Role != auth.RoleReviewer || p.Subject != "review-bot" || !p.CanSeeMatter("acme") || p.CanSeeMatter("globex") || p.Actor() != "cert:review-bot" {
			t.Errorf("%v: mapped CN: %d %+v %v", mode, status, p, err)
		}
		if status, _, err := get(client(root, reviewerCert), "/api/v1/tokens", ""); err != nil || status != 403 {
			t.Errorf("%v: reviewer cert on tokens: %d %v", mode, status, err)
		}
		if status, p, err := get(client(root, sanCert), "/api/v1/tokens", ""); err != nil || status != 200 || p.Subject != "spiffe://simdex/ingest" {
			t.Errorf("%v: mapped SAN: %d %+v %v", mode, status, p, err)
		}
		if status, _, err := get(client(root, unmappedCert), "/api/v1/flags", ""); err != nil || status != 401 {
			t.Errorf("%v: unmapped cert: %d %v", mode, status, err)
		}
		// A bearer token is judged alone, whatever the certificate.
		if status, p, err := get(client(root, reviewerCert), "/api/v1/flags", token); err != nil || status != 403 || p.Role != "" {
			t.Errorf("%v: viewer token with reviewer cert: %d %v", mode, status, err)
		}
		// A certificate from another CA never completes the handshake.
		if _, _, err := get(client(root, foreignCert), "/api/v1/flags", ""); err == nil {
			t.Errorf("%v: foreign certificate accepted", mode)
		}
		status, _, err = get(client(root), "/api/v1/flags", "")
		switch mode {
		case tls.RequireAndVerifyClientCert:
			if err == nil {
				t.Errorf("no client certificate: handshake completed (%d)", status)
			}
		default:
			if err != nil || status != 401 {
				t.Errorf("no certificate, no token: %d %v", status, err)
			}
			if status, p, err := get(client(root), "/api/v1/documents", token); err != nil || status != 404 || p.Role != "" {
				// authenticated (not 401), then the mux has no such route
				t.Errorf("token without certificate: %d %v", status, err)
			}
		}
		srv.Close()
	}
}
