package daemon

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-viper/mapstructure/v2"
	"go.yaml.in/yaml/v3"

	"github.com/simdex/simdex/index"
)

func TestExampleConfigIsDefaults(t *testing.T) {
	got, err := Load(filepath.Join("..", "config.yaml"), nil)
	if err != nil {
		t.Fatalf("load ../config.yaml: %v", err)
	}
	want := DefaultConfig()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("config.yaml differs from the defaults:\n got %+v\nwant %+v", got, want)
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	c, err := Load(filepath.Join("..", "config.yaml"), []string{
		"SIMDEX_INDEX_THRESHOLDS_RESEMBLANCE=0.7",
		"SIMDEX_HTTP_ADDR=127.0.0.1:9999",
		"SIMDEX_EXTRACT_TIMEOUT=5s",
		"UNRELATED=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Index.Thresholds.Resemblance != 0.7 || c.HTTP.Addr != "127.0.0.1:9999" || c.Extract.Timeout.Seconds() != 5 {
		t.Fatalf("overrides not applied: %+v", c)
	}
	// Without a file, the environment alone still reaches every key.
	c, err = Load("", []string{"SIMDEX_DATA_DIR=/srv/simdex"})
	if err != nil || c.DataDir != "/srv/simdex" {
		t.Fatalf("env-only: %v %+v", err, c.DataDir)
	}
}

func TestBadConfigs(t *testing.T) {
	tests := []struct {
		name, yaml string
		env        []string
		wantKeys   []string
	}{
		{name: "unknown key", yaml: "data_dir: x\nbogus: 1\n", wantKeys: []string{"bogus"}},
		{name: "bad threshold", yaml: "index:\n  thresholds:\n    resemblance: 1.5\n", wantKeys: []string{"index.thresholds: resemblance"}},
		{name: "bad log level", yaml: "log:\n  level: loud\n", wantKeys: []string{"log.level"}},
		{name: "several problems", yaml: "log:\n  format: xml\nindex:\n  durability: maybe\n", wantKeys: []string{"log.format", "index.durability"}},
		{name: "bad sketch", yaml: "index:\n  sketch:\n    bands: 7\n", wantKeys: []string{"index.sketch"}},
		{name: "bad env value", env: []string{"SIMDEX_INDEX_TEMPLATE_SHARE=lots"}, wantKeys: []string{"template_share"}},
		{name: "anchors in memory not a boolean", yaml: "index:\n  anchors_in_memory: sometimes\n", wantKeys: []string{"anchors_in_memory"}},
		{name: "negative max searches", yaml: "http:\n  max_searches: -1\n", wantKeys: []string{"http.max_searches"}},
		{name: "bad extract limit", yaml: "extract:\n  max_depth: -1\n", wantKeys: []string{"extract"}},
		{name: "negative memory budget", yaml: "memory:\n  budget: -1\n", wantKeys: []string{"memory.budget"}},
		{name: "negative budget from the environment", env: []string{"SIMDEX_MEMORY_BUDGET=-5"}, wantKeys: []string{"memory.budget"}},
		{name: "the pipeline's former budget", yaml: "pipeline:\n  in_flight_bytes: 5000\n", wantKeys: []string{"in_flight_bytes"}},
		{name: "bad policy schedule", env: []string{"SIMDEX_POLICY_SCHEDULES_EVALUATE=bad cron"}, wantKeys: []string{"policy.schedules.evaluate", "bad cron"}},
		{name: "bad policy scope and notifier", yaml: "policy:\n  near_copies:\n    resemblance: 3\nnotifier:\n  flags_subject: \"a.*\"\n",
			wantKeys: []string{"policy.near_copies", "resemblance 3", "notifier.flags_subject"}},
		{name: "one file for two stores", yaml: "data_dir: d\nindex:\n  path: d/policy.db\n", wantKeys: []string{"index.path", "d/policy.db is also policy.path"}},
		{name: "tokens in the index", env: []string{"SIMDEX_INDEX_PATH=/srv/x.db", "SIMDEX_HTTP_TOKENS_PATH=/srv/./x.db"}, wantKeys: []string{"index.path: /srv/x.db is also http.tokens_path"}},
		{name: "unknown store driver", yaml: "store:\n  driver: mysql\n", wantKeys: []string{`store.driver: "mysql" is not sqlite or postgres`}},
		{name: "postgres without a DSN source", env: []string{"SIMDEX_STORE_DRIVER=postgres"}, wantKeys: []string{"store.postgres: the postgres driver needs dsn_file"}},
		{name: "two DSN sources", yaml: "store:\n  driver: postgres\n  postgres:\n    dsn_file: /run/dsn\n    dsn_env: PGDSN\n", wantKeys: []string{"store.postgres: give one of dsn_file and dsn_env"}},
		{name: "DSN source with sqlite", yaml: "store:\n  postgres:\n    dsn_env: PGDSN\n", wantKeys: []string{"store.driver: sqlite, but store.postgres names a DSN"}},
		{name: "DSN in the file", yaml: "store:\n  driver: postgres\n  postgres:\n    dsn: postgres://u:pw@db/simdex\n", wantKeys: []string{"store.postgres.dsn: refused", "dsn_file", "dsn_env"}},
		{name: "DSN in an unread variable", env: []string{"SIMDEX_STORE_POSTGRES_DSN=postgres://u:pw@db/simdex"}, wantKeys: []string{"SIMDEX_STORE_POSTGRES_DSN: not read", "store.postgres.dsn_env"}},
		{name: "no connections", yaml: "store:\n  postgres:\n    max_conns: 0\n", wantKeys: []string{"store.postgres.max_conns: 0 is below 1"}},
		{name: "no replicas", env: []string{"SIMDEX_REPLICAS=0"}, wantKeys: []string{"replicas: 0 is below 1"}},
		{name: "fleet on sqlite and embedded NATS", env: []string{"SIMDEX_REPLICAS=3"},
			wantKeys: []string{"replicas: 3 replicas with store.driver sqlite", "replicas: 3 replicas with the embedded NATS (nats.url empty)"}},
		{name: "fleet on sqlite", yaml: "replicas: 2\nnats:\n  url: nats://n:4222\n", wantKeys: []string{"replicas: 2 replicas with store.driver sqlite"}},
		{name: "fleet on embedded NATS", yaml: "replicas: 2\nstore:\n  driver: postgres\n  postgres:\n    dsn_env: PGDSN\n",
			wantKeys: []string{"replicas: 2 replicas with the embedded NATS"}},
		{name: "replicated streams on the embedded NATS", yaml: "nats:\n  stream_replicas: 3\n", wantKeys: []string{"nats.stream_replicas: the embedded server is one node"}},
		{name: "negative listen probe interval", env: []string{"K=a"},
			yaml:     "connectors:\n  s3:\n    - {name: r, endpoint: m:9000, bucket: r, mode: listen, probe_interval: -1s, access_key_env: K, secret_key_env: K}\n",
			wantKeys: []string{"connectors.s3[0].probe_interval: must not be negative"}},
		{name: "six stream replicas", yaml: "nats:\n  url: nats://n:4222\n  stream_replicas: 6\n", wantKeys: []string{"nats.stream_replicas: 6 is not 1 to 5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.yaml != "" {
				path = filepath.Join(t.TempDir(), "c.yaml")
				if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(path, tc.env)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
			for _, k := range tc.wantKeys {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("error %q does not name %q", err, k)
				}
			}
		})
	}
}

func TestMissingConfigFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "absent.yaml"), nil); err == nil {
		t.Fatal("missing file accepted")
	}
}

// A bulk command's commit size reaches the index; left unset, the index's
// default stays (also through Load), and configuration cannot set it.
func TestMaxBatchOverride(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Index.MaxBatch, index.DefaultOptions().MaxBatch; got != want {
		t.Errorf("MaxBatch %d by default, want the index's %d", got, want)
	}
	cfg.Index.MaxBatch = 2048
	if got := cfg.Index.Options.MaxBatch; got != 2048 {
		t.Errorf("MaxBatch %d, want 2048", got)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("index:\n  max_batch: 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, nil); err == nil {
		t.Error("index.max_batch accepted in a configuration file")
	}
}

// TestLoadErrorsNameKeysAndVariables: decoding errors name the YAML key
// and, for a value from the environment, its SIMDEX_ variable; never a Go
// type such as 'daemon.Config'.
func TestLoadErrorsNameKeysAndVariables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "simdex.yaml")
	if err := os.WriteFile(path, []byte("pipline:\n  workers: 3\npipeline:\n  workers: many\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, []string{"SIMDEX_PIPELINE_SHUTDOWN_TIMEOUT=soon"})
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	msg := err.Error()
	for _, want := range []string{"unknown keys: pipline", "pipeline.workers: cannot parse", "pipeline.shutdown_timeout (from SIMDEX_PIPELINE_SHUTDOWN_TIMEOUT)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "daemon.Config") {
		t.Errorf("error %q names a Go type", msg)
	}
}

var update = flag.Bool("update", false, "rewrite testdata/config.golden.json")

// TestConfigGolden pins every configuration key, its variable, its default
// and its decoding from a file and the environment, whatever the Go types
// that hold them: testdata/config.golden.json holds DefaultConfig(),
// testdata/config-full.yaml (every key set) loaded with a few variables,
// and the SIMDEX_ variable of every key, in order.
func TestConfigGolden(t *testing.T) {
	full, err := Load(filepath.Join("testdata", "config-full.yaml"), []string{
		"NATS_PW=secret", "SIMDEX_INDEX_CHUNK_AVG=256", "SIMDEX_INDEX_DURABILITY=full",
		"SIMDEX_INDEX_THRESHOLDS_HAMMING=7", "SIMDEX_EXTRACT_SPOOL_DIR=/tmp/spool",
	})
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, k := range leafKeys(reflect.TypeOf(Config{}), "") {
		env = append(env, EnvPrefix+"_"+strings.ToUpper(strings.ReplaceAll(k.name, ".", "_")))
	}
	slices.Sort(env)
	got, err := json.MarshalIndent(map[string]any{
		"default": configKeys(t, DefaultConfig()), "full": configKeys(t, full), "env": env,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "config.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("configuration differs from %s (go test -run TestConfigGolden -update):\n%s", golden, got)
	}
}

// configKeys renders c by its configuration keys, as mapstructure encodes
// it, so that arranging the Go types differently changes nothing.
func configKeys(t *testing.T, c Config) map[string]any {
	t.Helper()
	var m map[string]any
	if err := mapstructure.Decode(c, &m); err != nil {
		t.Fatalf("encode configuration: %v", err)
	}
	return m
}

// TestFleetConfig: a fleet on PostgreSQL and an external NATS loads, from
// a file or from the environment alone, and the DSN is not in it.
func TestFleetConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	yaml := "replicas: 3\nnats:\n  url: nats://n:4222\nstore:\n  driver: postgres\n  postgres:\n    dsn_file: /etc/simdex/postgres/dsn\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func() (Config, error){
		"file": func() (Config, error) { return Load(path, nil) },
		"environment": func() (Config, error) {
			return Load("", []string{"SIMDEX_REPLICAS=3", "SIMDEX_NATS_URL=nats://n:4222", "SIMDEX_STORE_DRIVER=postgres",
				"SIMDEX_STORE_POSTGRES_DSN_FILE=/etc/simdex/postgres/dsn"})
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := load()
			if err != nil {
				t.Fatal(err)
			}
			if c.Replicas != 3 || c.Store.Driver != DriverPostgres || c.Store.Postgres.DSNFile != "/etc/simdex/postgres/dsn" || c.Store.Postgres.MaxConns != 20 {
				t.Errorf("loaded %+v, %d replicas", c.Store, c.Replicas)
			}
			if got := c.Store.Postgres.Source(); got != "store.postgres.dsn_file /etc/simdex/postgres/dsn" {
				t.Errorf("Source() = %q", got)
			}
		})
	}
	// The variable store.postgres.dsn_env names may be SIMDEX_STORE_POSTGRES_DSN itself.
	c, err := Load("", []string{"SIMDEX_STORE_DRIVER=postgres", "SIMDEX_STORE_POSTGRES_DSN_ENV=SIMDEX_STORE_POSTGRES_DSN", "SIMDEX_STORE_POSTGRES_DSN=postgres://db/x"})
	if err != nil {
		t.Fatal(err)
	}
	if dsn, err := c.PostgresDSN(envMap{"SIMDEX_STORE_POSTGRES_DSN": "postgres://db/x"}.get, nil); err != nil || dsn != "postgres://db/x" {
		t.Errorf("PostgresDSN = %q, %v", dsn, err)
	}
}

// TestPostgresDSN reads the DSN from an injected file system and
// environment; each failure is one line naming the key, never the DSN.
func TestPostgresDSN(t *testing.T) {
	files := fstest.MapFS{
		"run/dsn":   {Data: []byte("  postgres://simdex:s3cret@db:5432/simdex?sslmode=verify-full\n")},
		"run/empty": {Data: []byte(" \n")},
	}
	readFile := func(name string) ([]byte, error) { return fs.ReadFile(files, strings.TrimPrefix(name, "/")) }
	env := envMap{"PGDSN": "postgres://db/simdex", "BLANK": "  "}
	const want = "postgres://simdex:s3cret@db:5432/simdex?sslmode=verify-full"
	tests := []struct {
		name     string
		driver   string
		pg       PostgresConfig
		want     string
		wantErrs []string
	}{
		{name: "file, trimmed", pg: PostgresConfig{DSNFile: "/run/dsn"}, want: want},
		{name: "variable", pg: PostgresConfig{DSNEnv: "PGDSN"}, want: "postgres://db/simdex"},
		{name: "missing file", pg: PostgresConfig{DSNFile: "/run/absent"}, wantErrs: []string{"store.postgres.dsn_file: /run/absent does not exist"}},
		{name: "empty file", pg: PostgresConfig{DSNFile: "/run/empty"}, wantErrs: []string{"store.postgres.dsn_file: /run/empty is empty"}},
		{name: "unreadable file", pg: PostgresConfig{DSNFile: "/run"}, wantErrs: []string{"store.postgres.dsn_file: read /run:"}},
		{name: "unset variable", pg: PostgresConfig{DSNEnv: "NOPE"}, wantErrs: []string{"store.postgres.dsn_env: variable NOPE is empty or unset"}},
		{name: "blank variable", pg: PostgresConfig{DSNEnv: "BLANK"}, wantErrs: []string{"store.postgres.dsn_env: variable BLANK"}},
		{name: "sqlite driver", driver: DriverSQLite, pg: PostgresConfig{DSNEnv: "PGDSN"}, wantErrs: []string{`store.driver: "sqlite" is not postgres`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Store = StoreConfig{Driver: cmp.Or(tc.driver, DriverPostgres), Postgres: tc.pg}
			got, err := c.PostgresDSN(env.get, readFile)
			if tc.wantErrs == nil {
				if err != nil || got != tc.want {
					t.Fatalf("PostgresDSN = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("got %q, %v; want ErrConfig", got, err)
			}
			msg := err.Error()
			for _, w := range tc.wantErrs {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "s3cret") {
				t.Errorf("error %q is not one line without the DSN", msg)
			}
		})
	}
}

// envMap is an injected environment.
type envMap map[string]string

func (e envMap) get(k string) string { return e[k] }

// FuzzLoad feeds arbitrary configuration files to Load: it must never
// panic, a configuration it accepts must pass Validate, and one with a
// store.postgres.dsn key (a password in the file) is always refused.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{filepath.Join("..", "config.yaml"), filepath.Join("testdata", "config-full.yaml")} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("replicas: 3\nnats:\n  url: nats://n:4222\nstore:\n  driver: postgres\n  postgres:\n    dsn_file: /x\n"))
	f.Add([]byte("store:\n  postgres:\n    dsn: postgres://u:pw@db/x\n"))
	f.Add([]byte("store: [1, 2]\nreplicas: {a: b}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, nil)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Load accepted what Validate refuses: %v", err)
		}
		if bytes.Contains(data, []byte("dsn:")) && strings.Contains(string(data), "postgres") {
			var m map[string]any
			if yaml.Unmarshal(data, &m) == nil {
				if st, ok := m["store"].(map[string]any); ok {
					if pg, ok := st["postgres"].(map[string]any); ok {
						if _, ok := pg["dsn"]; ok {
							t.Fatal("store.postgres.dsn accepted")
						}
					}
				}
			}
		}
	})
}

// TestStartLineNamesTheStore: with PostgreSQL the start-up line named an
// index.db that does not exist (issue 47, item 7); it names the store in
// use and where its connection string comes from, never the string.
func TestStartLineNamesTheStore(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = "/var/lib/simdex"
	if got := fmt.Sprint(cfg.storeAttrs()); got != "[index /var/lib/simdex/index.db]" {
		t.Errorf("embedded default: %s", got)
	}
	cfg.Store.Driver = DriverPostgres
	cfg.Store.Postgres.DSNEnv = "SIMDEX_PG_DSN"
	if got := fmt.Sprint(cfg.storeAttrs()); got != "[store postgres dsn store.postgres.dsn_env SIMDEX_PG_DSN]" {
		t.Errorf("postgres: %s", got)
	}
}

// TestMemoryBudgetDefault: memory.budget 0 is a quarter of the memory the
// process may use, the container's limit when it is below the machine's,
// at least 256 MiB; a budget set is kept.
func TestMemoryBudgetDefault(t *testing.T) {
	files := func(meminfo, cgroup string) func(string) ([]byte, error) {
		return func(name string) ([]byte, error) {
			switch {
			case name == "/proc/meminfo" && meminfo != "":
				return []byte(meminfo), nil
			case name == "/sys/fs/cgroup/memory.max" && cgroup != "":
				return []byte(cgroup), nil
			}
			return nil, os.ErrNotExist
		}
	}
	const machine = "MemTotal:       16384000 kB\nMemFree:  100 kB\n"
	for _, tc := range []struct {
		name, meminfo, cgroup string
		budget, want          int64
	}{
		{"machine", machine, "", 0, 16384000 << 10 / 4},
		{"unlimited container", machine, "max\n", 0, 16384000 << 10 / 4},
		{"container limit", machine, "2147483648\n", 0, 512 << 20},
		{"small container", machine, "536870912\n", 0, MinMemoryBudget},
		{"unknown machine", "", "", 0, 1 << 30},
		{"set", machine, "", 5000, 5000},
	} {
		got := MemoryConfig{Budget: tc.budget}.Resolve(MachineMemory(files(tc.meminfo, tc.cgroup)))
		if got != tc.want {
			t.Errorf("%s: budget %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestReplacedKeySaysWhatReplacedIt: a configuration carried through the
// upgrade that replaced pipeline.in_flight_bytes by memory.budget is
// refused with what to do, not as an unknown key.
func TestReplacedKeySaysWhatReplacedIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("pipeline:\n  in_flight_bytes: 268435456\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, nil)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "pipeline.in_flight_bytes: replaced by memory.budget") {
		t.Fatalf("Load = %v, want ErrConfig naming memory.budget", err)
	}
}

// TestListenModeReconcilesByDefault: MinIO's listen API replays nothing,
// so a listen-mode bucket without a schedule is reconciled on
// DefaultListenReconcile; a jetstream bucket's empty schedule stays off,
// and a schedule given is kept.
func TestListenModeReconcilesByDefault(t *testing.T) {
	for _, tc := range []struct{ mode, reconcile, want string }{
		{"listen", "", DefaultListenReconcile},
		{"listen", "@every 1m", "@every 1m"},
		{"jetstream", "", ""},
	} {
		yaml := fmt.Sprintf("connectors:\n  s3:\n    - {name: r, endpoint: m:9000, bucket: r, mode: %s, stream: S, subject: s.x, reconcile: %q, access_key_env: K, secret_key_env: K}\n", tc.mode, tc.reconcile)
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, []string{"K=a"})
		if err != nil {
			t.Fatalf("%s %q: %v", tc.mode, tc.reconcile, err)
		}
		if got := cfg.Connectors.S3[0].ReconcileSchedule(); got != tc.want {
			t.Errorf("%s with reconcile %q: schedule %q, want %q", tc.mode, tc.reconcile, got, tc.want)
		}
	}
}
