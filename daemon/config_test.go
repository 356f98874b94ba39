package daemon

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-viper/mapstructure/v2"

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
		{name: "no in-flight budget", yaml: "pipeline:\n  in_flight_bytes: 0\n", wantKeys: []string{"pipeline.in_flight_bytes"}},
		{name: "negative budget from the environment", env: []string{"SIMDEX_PIPELINE_IN_FLIGHT_BYTES=-5"}, wantKeys: []string{"pipeline.in_flight_bytes"}},
		{name: "bad policy schedule", env: []string{"SIMDEX_POLICY_SCHEDULES_EVALUATE=bad cron"}, wantKeys: []string{"policy.schedules.evaluate", "bad cron"}},
		{name: "bad policy scope and notifier", yaml: "policy:\n  near_copies:\n    resemblance: 3\nnotifier:\n  flags_subject: \"a.*\"\n",
			wantKeys: []string{"policy.near_copies", "resemblance 3", "notifier.flags_subject"}},
		{name: "one file for two stores", yaml: "data_dir: d\nindex:\n  path: d/policy.db\n", wantKeys: []string{"index.path", "d/policy.db is also policy.path"}},
		{name: "tokens in the index", env: []string{"SIMDEX_INDEX_PATH=/srv/x.db", "SIMDEX_HTTP_TOKENS_PATH=/srv/./x.db"}, wantKeys: []string{"index.path: /srv/x.db is also http.tokens_path"}},
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
