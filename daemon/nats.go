package daemon

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"golang.org/x/crypto/bcrypt"

	jsconn "github.com/simdex/simdex/connectors/jetstream"
	"github.com/simdex/simdex/internal/datadir"
)

// startEmbeddedNATS runs the in-process NATS server of the embedded default:
// JetStream on, storage under the data directory, and every write fsynced
// before it is acknowledged (sync_interval: always), because JetStream's
// default of syncing every two minutes loses acknowledged messages on power
// failure. It listens on loopback only, and accepts only the user
// EmbeddedNATSUser with password: any other process of the machine that
// finds the port is refused.
func startEmbeddedNATS(dataDir, password string, logger *slog.Logger) (*server.Server, error) {
	// nats-server picks the modes of its files; a private directory keeps
	// them to the daemon's user.
	if err := datadir.Make(filepath.Join(dataDir, "nats")); err != nil {
		return nil, fmt.Errorf("start embedded NATS: %w", err)
	}
	// The server keeps only a bcrypt hash of the password, at the least
	// cost: the password is 192 random bits, which no work factor makes
	// harder to guess, while the default cost is paid at every connection
	// (seconds each on a loaded 2-core machine under the race detector,
	// where the daemon's own connections timed out).
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		return nil, fmt.Errorf("start embedded NATS: hash its password: %w", err)
	}
	opts := &server.Options{
		ServerName: "simdex-embedded", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
		Users:     []*server.User{{Username: EmbeddedNATSUser, Password: string(hash)}},
		JetStream: true, StoreDir: filepath.Join(dataDir, "nats"), SyncAlways: true,
		MaxPayload: 8 << 20, JetStreamMaxMemory: 256 << 20,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("start embedded NATS: %w", err)
	}
	srv.SetLoggerV2(&natsLogger{logger: logger.With("component", "nats-server")}, false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("start embedded NATS: not ready after 30s")
	}
	return srv, nil
}

// natsLogger routes the server's logs to slog.
type natsLogger struct{ logger *slog.Logger }

// Noticef logs at debug: the server's notices (its banner, its listen
// addresses) say nothing the daemon's own start-up lines do not.
func (l *natsLogger) Noticef(format string, v ...any) { l.logger.Debug(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Warnf(format string, v ...any)   { l.logger.Warn(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Fatalf(format string, v ...any)  { l.logger.Error(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Errorf(format string, v ...any)  { l.logger.Error(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Debugf(format string, v ...any)  { l.logger.Debug(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Tracef(format string, v ...any)  {}

// EmbeddedNATSUser is the only user of the embedded NATS server; its
// password is in the file Config.NATSPasswordPath names.
const EmbeddedNATSUser = "simdex"

// NATSPasswordPath is where the embedded NATS server's password is kept
// (mode 0600, beside the initial admin token): whoever reads it may
// connect as the daemon, as `nats --user simdex --password "$(cat …)"`.
func (c *Config) NATSPasswordPath() string { return filepath.Join(c.DataDir, "nats-password") }

// embeddedNATSPassword returns the embedded server's password, generating
// and storing it (mode 0600) on the first start.
func embeddedNATSPassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		pw := strings.TrimSpace(string(b))
		if pw == "" {
			return "", fmt.Errorf("read NATS password %s: the file is empty; remove it to make a new one", path)
		}
		return pw, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read NATS password: %w", err)
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("generate NATS password: %w", err)
	}
	pw := base64.RawURLEncoding.EncodeToString(raw[:])
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write NATS password: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // whatever the umask did
		return "", fmt.Errorf("write NATS password: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write NATS password: %w", err)
	}
	return pw, nil
}

// The variables an external server's password and token are read from
// when the configuration names none: those the Helm chart sets from its
// credentials Secret.
const (
	DefaultNATSPasswordEnv = "SIMDEX_NATS_PASSWORD"
	DefaultNATSTokenEnv    = "SIMDEX_NATS_TOKEN"
)

// passwordEnv is the variable holding the password: PasswordEnv, or with
// a user and no password file, DefaultNATSPasswordEnv.
func (n NATSConfig) passwordEnv() string {
	if n.PasswordEnv == "" && n.PasswordFile == "" && n.User != "" {
		return DefaultNATSPasswordEnv
	}
	return n.PasswordEnv
}

// clientOptions returns the connection options that authenticate the
// daemon to an external NATS server, reading secrets with getenv and
// readFile.
func (n NATSConfig) clientOptions(getenv func(string) string, readFile func(string) ([]byte, error)) ([]nats.Option, error) {
	var opts []nats.Option
	switch {
	case n.User != "" || n.PasswordEnv != "" || n.PasswordFile != "":
		pw, err := natsSecret(n.passwordEnv(), n.PasswordFile, getenv, readFile)
		if err != nil {
			return nil, fmt.Errorf("nats.password_env: %w", err)
		}
		opts = append(opts, nats.UserInfo(n.User, pw))
	case n.NKeySeedFile != "":
		opt, err := nats.NkeyOptionFromSeed(n.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("nats.nkey_seed_file: %w", err)
		}
		opts = append(opts, opt)
	case n.CredsFile != "":
		if _, err := readFile(n.CredsFile); err != nil {
			return nil, fmt.Errorf("nats.creds_file: %w", err)
		}
		opts = append(opts, nats.UserCredentials(n.CredsFile))
	case n.TokenEnv != "" || n.TokenFile != "":
		tok, err := natsSecret(n.TokenEnv, n.TokenFile, getenv, readFile)
		if err != nil {
			return nil, fmt.Errorf("nats.token_env: %w", err)
		}
		opts = append(opts, nats.Token(tok))
	case getenv(DefaultNATSTokenEnv) != "":
		opts = append(opts, nats.Token(getenv(DefaultNATSTokenEnv)))
	}
	if t := n.TLS; t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" {
		cfg, err := t.config(readFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Secure(cfg))
	}
	return opts, nil
}

// config builds the client TLS configuration.
func (t NATSTLSConfig) config(readFile func(string) ([]byte, error)) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := readFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("nats.tls.ca_file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("nats.tls.ca_file: no certificate in %s", t.CAFile)
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("nats.tls: cert_file and key_file go together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats.tls.cert_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// validate checks the NATS section; secrets are looked up so that a
// missing one stops the daemon at start.
func (n NATSConfig) validate(getenv func(string) string, readFile func(string) ([]byte, error)) []error {
	var errs problems
	methods := 0
	for _, set := range []bool{n.User != "" || n.PasswordEnv != "" || n.PasswordFile != "", n.NKeySeedFile != "", n.CredsFile != "", n.TokenEnv != "" || n.TokenFile != ""} {
		if set {
			methods++
		}
	}
	hasPassword := n.PasswordEnv != "" || n.PasswordFile != ""
	errs.badIf(hasPassword && n.User == "", "nats.user", "required with password_env or password_file")
	errs.badIf(methods > 1, "nats", "give one of user with a password, nkey_seed_file, creds_file and token_env/token_file")
	errs.badIf(n.StreamReplicas < 0 || n.StreamReplicas > 5, "nats.stream_replicas", "%d is not 1 to 5", n.StreamReplicas)
	errs.badIf(n.URL == "" && n.StreamReplicas > 1, "nats.stream_replicas", "the embedded server is one node; replicas need a cluster (nats.url)")
	errs.badIf(n.URL == "" && (methods > 0 || n.TLS != NATSTLSConfig{}), "nats",
		"credentials and tls are for an external server (nats.url); the embedded one makes its own")
	if len(errs) == 0 && n.URL != "" {
		if _, err := n.clientOptions(getenv, readFile); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// natsSecret reads a secret from the environment variable env or the file.
func natsSecret(env, file string, getenv func(string) string, readFile func(string) ([]byte, error)) (string, error) {
	if env != "" {
		if v := getenv(env); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("environment variable %s is empty", env)
	}
	b, err := readFile(file)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", file)
	}
	return v, nil
}

// subjectsOverlap reports whether some subject matches both NATS subject
// patterns ('*' one token, '>' one or more trailing tokens).
func subjectsOverlap(a, b string) bool {
	at, bt := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; ; i++ {
		switch {
		case i == len(at) || i == len(bt):
			return len(at) == len(bt)
		case at[i] == ">" || bt[i] == ">":
			return true
		case at[i] != bt[i] && at[i] != "*" && bt[i] != "*":
			return false
		}
	}
}

// validateSubjects refuses a connector subject that the daemon's own
// publishers (flags, alerts, dead letters) could write to: whatever can
// publish an alert could otherwise get a document indexed, and the daemon
// would index its own messages.
func (c *Config) validateSubjects() []error {
	published := append(c.Notifier.PublishedSubjects(), jsconn.DeadLetterPrefix+">")
	var errs problems
	check := func(key, subject string) {
		for _, p := range published {
			errs.badIf(subjectsOverlap(subject, p), key, "%q overlaps %q, which the daemon itself publishes to", subject, p)
		}
	}
	for i, n := range c.Connectors.NATS {
		for j, s := range n.Subjects {
			check(fmt.Sprintf("connectors.nats[%d].subjects[%d]", i, j), s)
		}
	}
	for i, b := range c.Connectors.S3 {
		if b.Mode == "jetstream" && b.Subject != "" {
			check(fmt.Sprintf("connectors.s3[%d].subject", i), b.Subject)
		}
	}
	return errs
}

// connectNATS connects the daemon to NATS. Credentials the server refuses
// stop the start with an error naming the configuration; a server that
// cannot be reached yet is retried in the background, as are later
// disconnections. onError receives the asynchronous errors (permission
// violations among them).
func connectNATS(url string, auth []nats.Option, log *slog.Logger, onError nats.ErrHandler) (*nats.Conn, error) {
	opts := append(auth, nats.Name("simdex"), nats.MaxReconnects(-1), nats.ReconnectWait(2*time.Second),
		nats.ErrorHandler(onError),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS disconnected, reconnecting", "err", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS reconnected") }))
	nc, err := nats.Connect(url, opts...)
	switch {
	case err == nil:
		return nc, nil
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		return nil, fmt.Errorf("%w: connect to NATS %s: the server refused the credentials (nats.user, nats.password_env, nats.nkey_seed_file or nats.creds_file): %w", ErrConfig, url, err)
	}
	log.Warn("NATS not reachable yet, retrying in the background", "url", url, "err", err)
	nc, err = nats.Connect(url, append(opts, nats.RetryOnFailedConnect(true))...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", url, err)
	}
	return nc, nil
}
