package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/simdex/simdex/internal/natstest"
)

// embeddedConfig is a daemon on its embedded default with no connector.
func embeddedConfig(t *testing.T) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.Connectors.FS.Dirs = nil
	cfg.Connectors.NATS = nil
	return cfg
}

// TestEmbeddedNATSRefusesStrangers: any process of the machine could
// subscribe to simdex.flags.> (hold matches of secret matters) or publish
// documents to index; the embedded server now accepts only the daemon's
// generated credentials, kept 0600 beside the admin token (issue 31, item 5).
func TestEmbeddedNATSRefusesStrangers(t *testing.T) {
	cfg := embeddedConfig(t)
	d := startDaemon(t, cfg, nil)
	url := d.NATSURL()

	for _, opts := range [][]nats.Option{nil, {nats.UserInfo(EmbeddedNATSUser, "guess")}, {nats.UserInfo("admin", "admin")}} {
		// A loaded machine may take seconds to answer: wait for the
		// server's verdict, not the client's default two seconds.
		nc, err := nats.Connect(url, append(opts, nats.Timeout(time.Minute))...)
		if err == nil {
			nc.Close()
			t.Fatalf("connected to the embedded NATS with %d options, want refused", len(opts))
		}
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("connect without the credentials: %v, want an authorization error", err)
		}
	}

	fi, err := os.Stat(cfg.NATSPasswordPath())
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("%s has mode %o, want 600", cfg.NATSPasswordPath(), mode)
	}
	pw, err := os.ReadFile(cfg.NATSPasswordPath())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, nats.UserInfo(EmbeddedNATSUser, strings.TrimSpace(string(pw))))
	if err != nil {
		t.Fatalf("connect with the daemon's credentials: %v", err)
	}
	nc.Close()
}

// TestEmbeddedNATSPasswordKeptAcrossRestarts: the password is made once.
func TestEmbeddedNATSPasswordKeptAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nats-password")
	a, err := embeddedNATSPassword(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := embeddedNATSPassword(path)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || len(a) < 32 {
		t.Fatalf("passwords %q then %q: want one of at least 32 characters, kept", a, b)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := embeddedNATSPassword(path); err == nil {
		t.Fatal("an empty password file was accepted")
	}
}

// TestExternalNATSAuthentication runs the daemon against external servers
// that require a password, an nkey, and TLS with a client certificate; and
// checks that refused credentials stop the start with an error naming the
// configuration.
func TestExternalNATSAuthentication(t *testing.T) {
	dir := t.TempDir()
	t.Run("password", func(t *testing.T) {
		ns := natstest.StartWith(t, func(o *server.Options) {
			o.Users = []*server.User{{Username: "indexer", Password: "s3cret-pw"}}
		})
		cfg := embeddedConfig(t)
		cfg.NATS = NATSConfig{URL: ns.URL(), User: "indexer", PasswordEnv: "TEST_NATS_PASSWORD"}
		t.Setenv("TEST_NATS_PASSWORD", "s3cret-pw")
		startDaemon(t, cfg, nil)
		waitFor(t, 10*time.Second, "the daemon's connection", func() bool { return ns.NumClients() > 0 })

		t.Setenv("TEST_NATS_PASSWORD", "wrong")
		cfg.DataDir = t.TempDir() // the first daemon holds its own
		d, err := New(cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		err = d.Run(t.Context())
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "nats.password_env") {
			t.Fatalf("run with a wrong password: %v, want a configuration error naming nats.password_env", err)
		}
	})
	t.Run("chart variables", func(t *testing.T) {
		// The Helm chart sets SIMDEX_NATS_USER, SIMDEX_NATS_PASSWORD and
		// SIMDEX_NATS_TOKEN from its Secret, and names no variable.
		ns := natstest.StartWith(t, func(o *server.Options) {
			o.Users = []*server.User{{Username: "chart", Password: "from-secret"}}
		})
		cfg := embeddedConfig(t)
		cfg.NATS = NATSConfig{URL: ns.URL(), User: "chart"}
		t.Setenv(DefaultNATSPasswordEnv, "from-secret")
		startDaemon(t, cfg, nil)
		waitFor(t, 10*time.Second, "the daemon's connection", func() bool { return ns.NumClients() > 0 })
	})
	t.Run("token", func(t *testing.T) {
		ns := natstest.StartWith(t, func(o *server.Options) { o.Authorization = "s3cret-token" })
		cfg := embeddedConfig(t)
		cfg.NATS = NATSConfig{URL: ns.URL()}
		t.Setenv(DefaultNATSTokenEnv, "s3cret-token")
		startDaemon(t, cfg, nil)
		waitFor(t, 10*time.Second, "the daemon's connection", func() bool { return ns.NumClients() > 0 })
	})
	t.Run("nkey", func(t *testing.T) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		seed, _ := kp.Seed()
		seedFile := filepath.Join(dir, "user.nk")
		if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		ns := natstest.StartWith(t, func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pub}} })
		cfg := embeddedConfig(t)
		cfg.NATS = NATSConfig{URL: ns.URL(), NKeySeedFile: seedFile}
		startDaemon(t, cfg, nil)
		waitFor(t, 10*time.Second, "the daemon's connection", func() bool { return ns.NumClients() > 0 })
	})
	t.Run("tls", func(t *testing.T) {
		ca, serverCert, clientCert, clientKey := testPKI(t, dir)
		ns := natstest.StartWith(t, func(o *server.Options) {
			pool := x509.NewCertPool()
			pool.AddCert(ca)
			o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
			o.TLS, o.TLSVerify = true, true
		})
		cfg := embeddedConfig(t)
		cfg.NATS = NATSConfig{URL: ns.URL(), TLS: NATSTLSConfig{CAFile: filepath.Join(dir, "ca.pem"), CertFile: clientCert, KeyFile: clientKey}}
		startDaemon(t, cfg, nil)
		waitFor(t, 10*time.Second, "the daemon's connection", func() bool { return ns.NumClients() > 0 })
	})
}

// TestConfigRefusesSubjectsTheDaemonPublishes: a connector that consumed
// simdex.flags.> or simdex.> would index the daemon's own alerts.
func TestConfigRefusesSubjectsTheDaemonPublishes(t *testing.T) {
	for _, tc := range []struct {
		subject string
		refused bool
	}{
		{"simdex.docs.>", false},
		{"uploads.*", false},
		{"simdex.>", true},
		{"simdex.flags.hold-match", true},
		{"simdex.*.x", true},
		{">", true},
		{"simdex.alerts.>", false}, // no NATS alert channel is configured by default
		{"simdex.deadletter.s3", true},
		{"simdex.flags", false},
	} {
		cfg := DefaultConfig()
		cfg.Connectors.NATS[0].Subjects = []string{tc.subject}
		err := cfg.Validate()
		if got := err != nil && strings.Contains(err.Error(), "which the daemon itself publishes to"); got != tc.refused {
			t.Errorf("subject %q: Validate() = %v, want refused %v", tc.subject, err, tc.refused)
		}
	}
}

func TestSubjectsOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"a.b", "a.b", true}, {"a.b", "a.c", false}, {"a.*", "a.b", true}, {"a.*", "a.b.c", false},
		{"a.>", "a.b.c", true}, {"a.>", "a", false}, {">", "x", true}, {"*.b", "a.*", true}, {"a", "a.b", false},
	} {
		if got := subjectsOverlap(tc.a, tc.b); got != tc.want {
			t.Errorf("subjectsOverlap(%q, %q) = %v", tc.a, tc.b, got)
		}
		if got := subjectsOverlap(tc.b, tc.a); got != tc.want {
			t.Errorf("subjectsOverlap(%q, %q) = %v", tc.b, tc.a, got)
		}
	}
}

// testPKI writes a CA (dir/ca.pem), and returns it with a server
// certificate for 127.0.0.1 and the paths of a client certificate and key.
func testPKI(t *testing.T, dir string) (*x509.Certificate, tls.Certificate, string, string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, ip net.IP) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "simdex"}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature}
		if ip != nil {
			tmpl.IPAddresses = []net.IP{ip}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	srvDER, srvKey := issue(2, x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	cliDER, cliKey := issue(3, x509.ExtKeyUsageClientAuth, nil)
	cliCert, cliKeyPath := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	writePEM(t, cliCert, "CERTIFICATE", cliDER)
	der, _ := x509.MarshalECPrivateKey(cliKey)
	writePEM(t, cliKeyPath, "EC PRIVATE KEY", der)
	return ca, tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}, cliCert, cliKeyPath
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
