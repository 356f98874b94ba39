package daemon

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/notifier"
	"github.com/simdex/simdex/policy"
)

// EnvPrefix prefixes the environment variable of every configuration key:
// index.thresholds.resemblance is SIMDEX_INDEX_THRESHOLDS_RESEMBLANCE.
const EnvPrefix = "SIMDEX"

// ErrConfig reports an invalid configuration.
var ErrConfig = errors.New("invalid configuration")

// Config is simdex's whole configuration.
type Config struct {
	// DataDir holds the embedded index, the embedded NATS store and the
	// default inbox.
	DataDir    string           `mapstructure:"data_dir"`
	Log        LogConfig        `mapstructure:"log"`
	HTTP       HTTPConfig       `mapstructure:"http"`
	NATS       NATSConfig       `mapstructure:"nats"`
	Index      IndexConfig      `mapstructure:"index"`
	Extract    extract.Options  `mapstructure:"extract"`
	Pipeline   PipelineConfig   `mapstructure:"pipeline"`
	Memory     MemoryConfig     `mapstructure:"memory"`
	Connectors ConnectorsConfig `mapstructure:"connectors"`
	Notifier   notifier.Config  `mapstructure:"notifier"`
	Policy     policy.Config    `mapstructure:"policy"`
	Store      StoreConfig      `mapstructure:"store"`
	// Replicas is the declared size of the fleet: how many simdex
	// processes share this configuration's NATS and stores. Above 1 it
	// needs the postgres driver and an external NATS.
	Replicas int `mapstructure:"replicas"`
}

// PipelineConfig configures the ingest worker pool.
type PipelineConfig struct {
	// Workers is how many objects are extracted and indexed at once.
	Workers int `mapstructure:"workers"`
	// ShutdownTimeout bounds how long events under way may take to finish
	// after a stop signal.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// PurgeInterval is how often documents kept under a legal hold after
	// their source deleted them are checked, and removed once no hold
	// keeps them (default 1m).
	PurgeInterval time.Duration `mapstructure:"purge_interval"`
}

// MemoryConfig bounds the process's memory.
type MemoryConfig struct {
	// Budget is the bytes that the objects being read, extracted and
	// fingerprinted (by the pipeline and the API's uploads) may hold at
	// once: raw bytes, decompressed bytes and texts (extract.Budget). 0:
	// a quarter of the machine's memory, or of the container's limit
	// (cgroup memory.max), at least 256 MiB.
	Budget int64 `mapstructure:"budget"`
}

// MinMemoryBudget is the smallest budget the default gives.
const MinMemoryBudget = 256 << 20

// Resolve returns Budget, or the default for a machine of total bytes
// (0: unknown, taken as 4 GiB).
func (m MemoryConfig) Resolve(total int64) int64 {
	if m.Budget > 0 {
		return m.Budget
	}
	if total <= 0 {
		total = 4 << 30
	}
	return max(total/4, MinMemoryBudget)
}

// MachineMemory returns the memory the process may use: the cgroup v2
// limit (memory.max) when set, else the machine's (MemTotal of
// /proc/meminfo); 0 when neither can be read. readFile reads the files.
func MachineMemory(readFile func(string) ([]byte, error)) int64 {
	var total int64
	if b, err := readFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					total = kb << 10
				}
			}
		}
	}
	if b, err := readFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}

// LogConfig configures structured logs.
type LogConfig struct {
	Level  string `mapstructure:"level"`  // debug, info, warn, error
	Format string `mapstructure:"format"` // text or json
}

// HTTPConfig configures the HTTP endpoints.
type HTTPConfig struct {
	Addr string `mapstructure:"addr"`
	// TokensPath is the API token store; default DataDir/auth.db.
	TokensPath string `mapstructure:"tokens_path"`
	// InitialAdminToken creates an admin token when the token store is
	// empty at start and writes it to DataDir/initial-admin-token (mode
	// 0600), so that the first operator can sign in and create the others.
	InitialAdminToken bool      `mapstructure:"initial_admin_token"`
	TLS               TLSConfig `mapstructure:"tls"`
	// MaxSearches is how many near-copy searches the API runs at once
	// ("all versions" by id or upload, families); the others wait their
	// turn in order of arrival. 0: twice the CPUs.
	MaxSearches int `mapstructure:"max_searches"`
}

// Searches returns MaxSearches, resolved.
func (h HTTPConfig) Searches() int {
	if h.MaxSearches > 0 {
		return h.MaxSearches
	}
	return 2 * runtime.GOMAXPROCS(0)
}

// TLSConfig serves HTTPS, optionally authenticating clients by
// certificate (mutual TLS) besides tokens.
type TLSConfig struct {
	CertFile string `mapstructure:"cert_file"`
	KeyFile  string `mapstructure:"key_file"`
	// ClientCAFile verifies client certificates against this PEM bundle;
	// clients without a certificate may still use a token.
	ClientCAFile string `mapstructure:"client_ca_file"`
	// ClientCerts maps verified certificates, by subject common name or
	// subject alternative name, to a role and matters.
	ClientCerts []ClientCertConfig `mapstructure:"client_certs"`
}

// ClientCertConfig is the identity of a client certificate name.
type ClientCertConfig struct {
	Name    string   `mapstructure:"name"`
	Role    string   `mapstructure:"role"`
	Matters []string `mapstructure:"matters"`
}

// NATSConfig configures the NATS connection; an empty URL runs the
// embedded server, which accepts only the daemon's own credentials
// (generated at first start, DataDir/nats-password). For an external
// server, credentials never sit in the file: name the environment variable
// or file that holds them. At most one of a password, an nkey seed and a
// credentials file is given.
type NATSConfig struct {
	URL string `mapstructure:"url"`
	// User with PasswordEnv or PasswordFile (default: the variable
	// SIMDEX_NATS_PASSWORD): user/password authentication.
	User         string `mapstructure:"user"`
	PasswordEnv  string `mapstructure:"password_env"`
	PasswordFile string `mapstructure:"password_file"`
	// NKeySeedFile holds an nkey seed (SU…): nkey authentication.
	NKeySeedFile string `mapstructure:"nkey_seed_file"`
	// CredsFile is a decentralised-auth credentials file (JWT and seed).
	CredsFile string `mapstructure:"creds_file"`
	// TokenEnv or TokenFile: token authentication (default: the variable
	// SIMDEX_NATS_TOKEN, when set and no other method is).
	TokenEnv  string `mapstructure:"token_env"`
	TokenFile string `mapstructure:"token_file"`
	// TLS verifies the server with CAFile (the system roots when empty)
	// and, with CertFile and KeyFile, authenticates the daemon by
	// certificate.
	TLS NATSTLSConfig `mapstructure:"tls"`
	// StreamReplicas is the number of servers each stream and key-value
	// bucket the daemon creates is kept on: 1 (default; 0 means 1), or 3 on a
	// JetStream cluster, so that losing a node loses no event.
	StreamReplicas int `mapstructure:"stream_replicas"`
}

// NATSTLSConfig configures TLS towards an external NATS server.
type NATSTLSConfig struct {
	CAFile   string `mapstructure:"ca_file"`
	CertFile string `mapstructure:"cert_file"`
	KeyFile  string `mapstructure:"key_file"`
}

// IndexConfig is the index section: the store's keys and the index's,
// each package's type embedded at the section's top level.
type IndexConfig struct {
	sqlite.Config `mapstructure:",squash"`
	index.Options `mapstructure:",squash"`
}

// DefaultConfig returns the built-in defaults: the embedded mode.
func DefaultConfig() Config {
	ix := index.DefaultOptions()
	ix.KeepText = true
	limits := extract.DefaultLimits()
	limits.MaxSpoolSize = 0 // max_object_size
	return Config{
		DataDir:    "data",
		Log:        LogConfig{Level: "info", Format: "text"},
		HTTP:       HTTPConfig{Addr: "127.0.0.1:8080", InitialAdminToken: true, TLS: TLSConfig{ClientCerts: []ClientCertConfig{}}},
		Index:      IndexConfig{Config: sqlite.Config{Durability: sqlite.Full, AnchorsInMemory: true}, Options: ix},
		Extract:    extract.Options{Limits: limits},
		Pipeline:   PipelineConfig{Workers: 24, ShutdownTimeout: 30 * time.Second, PurgeInterval: time.Minute},
		Connectors: defaultConnectorsConfig(),
		Notifier:   notifier.DefaultConfig(),
		Policy:     policy.DefaultConfig(),
		Store:      StoreConfig{Driver: DriverSQLite, Postgres: PostgresConfig{MaxConns: 20}},
		NATS:       NATSConfig{StreamReplicas: 1},
		Replicas:   1,
	}
}

// PolicyPath returns the path of the policy store (rules, holds, flags,
// audit log).
func (c *Config) PolicyPath() string {
	return cmp.Or(c.Policy.Path, filepath.Join(c.DataDir, "policy.db"))
}

// OutboxPath returns the path of the notifier's outbox.
func (c *Config) OutboxPath() string { return filepath.Join(c.DataDir, "outbox.db") }

// TokensPath returns the path of the API token store.
func (c *Config) TokensPath() string {
	return cmp.Or(c.HTTP.TokensPath, filepath.Join(c.DataDir, "auth.db"))
}

// InitialAdminTokenPath is where the first admin token is written.
func (c *Config) InitialAdminTokenPath() string {
	return filepath.Join(c.DataDir, "initial-admin-token")
}

// IndexPath returns the store path.
func (c *Config) IndexPath() string {
	return cmp.Or(c.Index.Path, filepath.Join(c.DataDir, "index.db"))
}

// SpoolDir is where mailboxes are spooled while they are read.
func (c *Config) SpoolDir() string {
	return cmp.Or(c.Extract.SpoolDir, filepath.Join(c.DataDir, "spool"))
}

// problems collects a configuration's problems, each naming its key.
type problems []error

// badIf records the problem format describes with key when cond holds.
func (p *problems) badIf(cond bool, key, format string, args ...any) {
	if cond {
		*p = append(*p, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
}

// Validate reports every problem, each naming its key.
func (c *Config) Validate() error { return c.validate(os.Getenv, true) }

// validate is Validate with the environment's variables read by getenv:
// Load checks a configuration against the environment it was given.
// Without serving, the sections only serve runs, whose secrets it reads
// (connectors, nats, notifier), are left unchecked: see LoadWithoutSecrets.
func (c *Config) validate(getenv func(string) string, serving bool) error {
	var errs problems
	errs.badIf(c.DataDir == "", "data_dir", "must not be empty")
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs.badIf(true, "log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	errs.badIf(c.Log.Format != "text" && c.Log.Format != "json", "log.format", "%q is not text or json", c.Log.Format)
	errs = append(errs, c.HTTP.TLS.validate()...)
	errs.badIf(c.HTTP.MaxSearches < 0, "http.max_searches", "%d is negative", c.HTTP.MaxSearches)
	errs.badIf(c.Pipeline.Workers < 1, "pipeline.workers", "%d is below 1", c.Pipeline.Workers)
	errs.badIf(c.Memory.Budget < 0, "memory.budget", "%d is negative (0: a quarter of the machine's memory)", c.Memory.Budget)
	errs.badIf(c.Pipeline.ShutdownTimeout <= 0, "pipeline.shutdown_timeout", "must be positive")
	errs.badIf(c.Extract.MaxSpoolSize < 0, "extract.max_spool_size", "must not be negative")
	errs.badIf(c.Pipeline.PurgeInterval <= 0, "pipeline.purge_interval", "must be positive")
	if serving {
		errs = append(errs, c.Connectors.validate(getenv, os.ReadFile)...)
		errs = append(errs, c.NATS.validate(getenv, os.ReadFile)...)
		errs = append(errs, c.validateSubjects()...)
		if err := c.Notifier.Validate(os.Getenv, os.ReadFile); err != nil {
			errs = append(errs, unjoin(err)...)
		}
	}
	errs = append(errs, c.validateStore(getenv)...)
	dur := c.Index.Durability
	errs.badIf(dur != sqlite.Full && dur != sqlite.Normal, "index.durability", "%q is not full or normal", dur)
	if err := c.Index.Options.Validate(); err != nil {
		for _, e := range unjoin(err) {
			errs = append(errs, fmt.Errorf("index.%w", e))
		}
	}
	if err := c.Extract.Limits.Validate(); err != nil {
		for _, e := range unjoin(err) {
			errs = append(errs, fmt.Errorf("extract: %w", e))
		}
	}
	if err := c.Policy.Validate(); err != nil {
		errs = append(errs, unjoin(err)...)
	}
	// Each store is its own file; one path for two would be refused at
	// start, later and with less to go on.
	stores := []struct{ key, path string }{
		{"index.path", c.IndexPath()}, {"policy.path", c.PolicyPath()},
		{"http.tokens_path", c.TokensPath()}, {"data_dir (outbox.db)", c.OutboxPath()},
	}
	for i, a := range stores {
		for _, b := range stores[i+1:] {
			errs.badIf(filepath.Clean(a.path) == filepath.Clean(b.path), a.key, "%s is also %s", a.path, b.key)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
}

// unjoin splits errors.Join lists (also under a prefix added by
// wrapping) into their members, so that each bad key is its own error.
// An error that merely wraps several errors with fmt's %w, such as
// "invalid policy configuration: policy.schedules.evaluate: bad schedule:
// ...", is one message and is kept whole.
func unjoin(err error) []error {
	joined, prefix, wrapped := err, "", false
	if w := errors.Unwrap(err); w != nil {
		joined, prefix, wrapped = w, strings.TrimSuffix(err.Error(), w.Error()), true
	}
	j, ok := joined.(interface{ Unwrap() []error })
	if !ok || !isJoin(joined, j.Unwrap()) {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		for _, ee := range unjoin(e) {
			if wrapped {
				ee = fmt.Errorf("%s%w", prefix, ee)
			}
			out = append(out, ee)
		}
	}
	return out
}

// isJoin reports whether err is a list of errs as errors.Join makes it:
// their messages one per line.
func isJoin(err error, errs []error) bool {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	return err.Error() == strings.Join(msgs, "\n")
}

// Load reads configuration: defaults, then the file at path (if not
// empty), then SIMDEX_* environment variables, which override both. Every
// key is bound to its variable explicitly, because viper's AutomaticEnv
// alone does not reach Unmarshal (spf13/viper#761). Unknown keys are
// errors. The result is validated.
func Load(path string, environ []string) (Config, error) { return load(path, environ, true) }

// LoadWithoutSecrets is Load for the commands that only open simdex's own
// stores or call the daemon (token, scan, similar, the API clients): the
// sections only serve runs — connectors, nats, notifier — are not
// validated, so the credentials they name need not be set where such a
// command runs (token create refused to run without the S3 keys).
func LoadWithoutSecrets(path string, environ []string) (Config, error) {
	return load(path, environ, false)
}

func load(path string, environ []string, serving bool) (Config, error) {
	v := viper.New()
	def := DefaultConfig()
	keys := leafKeys(reflect.TypeOf(def), "")
	defVal := reflect.ValueOf(def)
	for _, k := range keys {
		v.SetDefault(k.name, defVal.FieldByIndex(k.index).Interface())
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok {
			env[k] = val
		}
	}
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("read config %s: %w", path, err)
		}
		for _, k := range slices.Sorted(maps.Keys(replacedKeys)) {
			if v.InConfig(k) {
				return Config{}, fmt.Errorf("%w: %s: %s: %s", ErrConfig, path, k, replacedKeys[k])
			}
		}
		if v.InConfig("store.postgres.dsn") {
			return Config{}, fmt.Errorf("%w: %s: store.postgres.dsn: refused: a DSN carries the database password and the file holds no secrets; "+
				"name a file that holds it (store.postgres.dsn_file, a mounted Secret) or a variable (store.postgres.dsn_env)", ErrConfig, path)
		}
	}
	fromEnv := map[string]string{} // key -> the variable that set it
	for _, k := range keys {
		name := EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(k.name, ".", "_"))
		if val, ok := env[name]; ok {
			v.Set(k.name, val)
			fromEnv[k.name] = name
		}
	}
	// Decoded over the defaults, with every key it sets zeroed first, so
	// that fields outside configuration (mapstructure:"-") keep theirs.
	c := def
	if err := v.UnmarshalExact(&c, func(dc *mapstructure.DecoderConfig) { dc.ZeroFields = true }, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		yamlListHook,
		mapstructure.StringToSliceHookFunc(","),
	))); err != nil {
		return Config{}, fmt.Errorf("%w: %s:\n%s", ErrConfig, cmp.Or(path, "environment"), explainDecodeError(err, fromEnv))
	}
	if err := c.validate(func(k string) string { return env[k] }, serving); err != nil {
		return Config{}, fmt.Errorf("%s: %w", cmp.Or(path, "configuration"), err)
	}
	return c, nil
}

// replacedKeys are keys of earlier releases that a later one replaced,
// each with what to do instead, so that a configuration carried through an
// upgrade says what to change rather than "unknown key".
var replacedKeys = map[string]string{
	"pipeline.in_flight_bytes": "replaced by memory.budget, one budget for the whole process charged with the bytes " +
		"extraction decompresses and the texts it makes (default: a quarter of the memory available); remove it, " +
		"and set memory.budget if the default does not suit",
}

// decodeKey finds the key a decoding error line starts with.
var decodeKey = regexp.MustCompile(`^'([^']*)' (.*)$`)

// explainDecodeError rewrites mapstructure's error, one line per problem,
// in the words of the configuration: the YAML key, and the SIMDEX_…
// variable when the value came from the environment; never a Go type.
func explainDecodeError(err error, fromEnv map[string]string) string {
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "decoding failed") {
			continue
		}
		m := decodeKey.FindStringSubmatch(line)
		switch {
		case m == nil:
			out = append(out, "  "+line)
		case strings.HasPrefix(m[2], "has invalid keys: "):
			unknown := strings.TrimPrefix(m[2], "has invalid keys: ")
			if m[1] != "" && !strings.Contains(m[1], ".Config") {
				unknown = m[1] + ": " + unknown
			}
			out = append(out, "  unknown keys: "+unknown)
		default:
			key, msg := m[1], m[2]
			if name, ok := fromEnv[key]; ok {
				key += " (from " + name + ")"
			}
			out = append(out, "  "+key+": "+msg)
		}
	}
	return strings.Join(out, "\n")
}

// LoadFromEnvironment is Load with the process environment.
func LoadFromEnvironment(path string) (Config, error) { return Load(path, os.Environ()) }

type leafKey struct {
	name  string
	index []int
}

// leafKeys lists the dotted keys of every leaf field of t, following the
// mapstructure tags as Load decodes them.
func leafKeys(t reflect.Type, prefix string) []leafKey {
	var out []leafKey
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, opt, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if (tag == "" && opt != "squash") || tag == "-" {
			continue
		}
		name, sub := prefix+tag, prefix+tag+"."
		if opt == "squash" { // an embedded section's keys are its parent's
			sub = prefix
		}
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Time{}) {
			for _, k := range leafKeys(f.Type, sub) {
				out = append(out, leafKey{name: k.name, index: append([]int{i}, k.index...)})
			}
			continue
		}
		out = append(out, leafKey{name: name, index: []int{i}})
	}
	return out
}
