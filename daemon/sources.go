package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"
)

// ConnectorsConfig configures the connectors.
type ConnectorsConfig struct {
	// FS watches folders; the embedded default watches data_dir/inbox.
	FS FSConfig `mapstructure:"fs"`
	// NATS lists JetStream subjects carrying documents or references.
	NATS []NATSSourceConfig `mapstructure:"nats"`
	// S3 lists buckets on MinIO or another S3-compatible store.
	S3 []S3SourceConfig `mapstructure:"s3"`
}

// FSConfig configures the watched folders.
type FSConfig struct {
	// Dirs are the watched folders; relative paths are relative to
	// data_dir. Empty disables the connector.
	Dirs []string `mapstructure:"dirs"`
	// Interval between scans of the folder.
	Interval time.Duration `mapstructure:"interval"`
	// Settle is how long a file must stay unchanged before it is read, so
	// that half-written files are not indexed.
	Settle time.Duration `mapstructure:"settle"`
}

// NATSSourceConfig configures one JetStream document source.
type NATSSourceConfig struct {
	Name       string        `mapstructure:"name" yaml:"name"`
	Stream     string        `mapstructure:"stream" yaml:"stream"`
	Subjects   []string      `mapstructure:"subjects" yaml:"subjects"`
	Durable    string        `mapstructure:"durable" yaml:"durable"`
	MaxDeliver int           `mapstructure:"max_deliver" yaml:"max_deliver"`
	AckWait    time.Duration `mapstructure:"ack_wait" yaml:"ack_wait"`
	MaxPayload int           `mapstructure:"max_payload" yaml:"max_payload"`
}

// S3SourceConfig configures one bucket.
type S3SourceConfig struct {
	Name     string `mapstructure:"name" yaml:"name"`
	Endpoint string `mapstructure:"endpoint" yaml:"endpoint"`
	Secure   bool   `mapstructure:"secure" yaml:"secure"`
	Region   string `mapstructure:"region" yaml:"region"`
	Bucket   string `mapstructure:"bucket" yaml:"bucket"`
	Prefix   string `mapstructure:"prefix" yaml:"prefix"`
	// Mode is "jetstream" (MinIO publishes bucket events to a JetStream
	// stream; durable, acknowledged after commit) or "listen" (MinIO's
	// ListenBucketNotification; a hint only, reconciliation catches up).
	Mode string `mapstructure:"mode" yaml:"mode"`
	// Stream and Subject name the JetStream stream MinIO's NATS target
	// publishes to (jetstream mode).
	Stream  string `mapstructure:"stream" yaml:"stream"`
	Subject string `mapstructure:"subject" yaml:"subject"`
	// AckWait is how long JetStream waits for an event's settlement
	// before it delivers it again (jetstream mode; default 2m): after a
	// replica dies, its unsettled events go to another after this long.
	AckWait time.Duration `mapstructure:"ack_wait" yaml:"ack_wait"`
	// Credentials never sit in the file: name the environment variables
	// or files that hold them.
	AccessKeyEnv  string `mapstructure:"access_key_env" yaml:"access_key_env"`
	SecretKeyEnv  string `mapstructure:"secret_key_env" yaml:"secret_key_env"`
	AccessKeyFile string `mapstructure:"access_key_file" yaml:"access_key_file"`
	SecretKeyFile string `mapstructure:"secret_key_file" yaml:"secret_key_file"`
	// Backfill lists every object version on first start.
	Backfill bool `mapstructure:"backfill" yaml:"backfill"`
	// Reconcile is a cron schedule comparing the bucket with the index;
	// empty disables it in jetstream mode (not recommended: bucket events
	// are not guaranteed) and means DefaultListenReconcile in listen mode,
	// whose events are a hint only.
	Reconcile string `mapstructure:"reconcile" yaml:"reconcile"`
	// ProbeInterval is how long listen mode goes without an event before
	// it checks its subscription with a canary object (default 1m; the
	// credentials must be allowed to put and delete objects under the
	// prefix's ".simdex-listen-probe/"). A subscription whose canary does
	// not come through is replaced and the bucket reconciled.
	ProbeInterval time.Duration `mapstructure:"probe_interval" yaml:"probe_interval"`
	// SettleTimeout bounds how long a reconciliation or an on-demand
	// backfill waits for its events to be committed before it logs its
	// counts and returns (default 30s; the events still go on). The first
	// start's backfill always waits for every event: its marker means
	// "every version committed".
	SettleTimeout time.Duration `mapstructure:"settle_timeout" yaml:"settle_timeout"`
}

// DefaultListenReconcile is the reconciliation schedule of a listen-mode
// bucket that names none: MinIO's listen API replays nothing, so the
// bucket, not its events, is the truth.
const DefaultListenReconcile = "@every 15m"

// ReconcileSchedule returns the bucket's reconciliation schedule, "" for
// none: Reconcile, or DefaultListenReconcile for a listen-mode bucket
// without one.
func (s S3SourceConfig) ReconcileSchedule() string {
	if s.Reconcile == "" && s.Mode == "listen" {
		return DefaultListenReconcile
	}
	return s.Reconcile
}

func defaultConnectorsConfig() ConnectorsConfig {
	return ConnectorsConfig{
		FS: FSConfig{Dirs: []string{"inbox"}, Interval: 2 * time.Second, Settle: time.Second},
		NATS: []NATSSourceConfig{{
			Name: "docs", Stream: "SIMDEX_DOCS", Subjects: []string{"simdex.docs.>"},
			Durable: "simdex", MaxDeliver: 5, AckWait: 2 * time.Minute, MaxPayload: 8 << 20,
		}},
		S3: []S3SourceConfig{},
	}
}

// WatchedDirs returns the watched folders, resolved against data_dir.
func (c *Config) WatchedDirs() []string {
	out := make([]string, len(c.Connectors.FS.Dirs))
	for i, d := range c.Connectors.FS.Dirs {
		if filepath.IsAbs(d) {
			out[i] = d
		} else {
			out[i] = filepath.Join(c.DataDir, d)
		}
	}
	return out
}

// credential reads a secret from the named environment variable or file.
func credential(env, file string, getenv func(string) string, readFile func(string) ([]byte, error)) (string, error) {
	switch {
	case env != "" && file != "":
		return "", errors.New("set either the _env or the _file key, not both")
	case env != "":
		v := getenv(env)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty or unset", env)
		}
		return v, nil
	case file != "":
		b, err := readFile(file)
		if err != nil {
			return "", fmt.Errorf("read secret file: %w", err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("secret file %s is empty", file)
		}
		return v, nil
	}
	return "", errors.New("required: name an environment variable (_env) or a file (_file)")
}

// Credentials returns the access and secret keys of an S3 source.
func (s S3SourceConfig) Credentials() (access, secret string, err error) {
	access, err = credential(s.AccessKeyEnv, s.AccessKeyFile, os.Getenv, os.ReadFile)
	if err != nil {
		return "", "", fmt.Errorf("access key: %w", err)
	}
	secret, err = credential(s.SecretKeyEnv, s.SecretKeyFile, os.Getenv, os.ReadFile)
	if err != nil {
		return "", "", fmt.Errorf("secret key: %w", err)
	}
	return access, secret, nil
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

func (s *ConnectorsConfig) validate(getenv func(string) string, readFile func(string) ([]byte, error)) []error {
	var errs problems
	errs.badIf(len(s.FS.Dirs) > 0 && s.FS.Interval <= 0, "connectors.fs.interval", "must be positive")
	errs.badIf(s.FS.Settle < 0, "connectors.fs.settle", "must not be negative")
	for i, d := range s.FS.Dirs {
		errs.badIf(d == "", fmt.Sprintf("connectors.fs.dirs[%d]", i), "empty path")
	}
	names := map[string]bool{}
	unique := func(key, name string) {
		if name == "" {
			errs.badIf(true, key+".name", "required")
			return
		}
		errs.badIf(names[name], key+".name", "%q is used by another source", name)
		names[name] = true
	}
	for i, n := range s.NATS {
		key := fmt.Sprintf("connectors.nats[%d]", i)
		unique(key, n.Name)
		errs.badIf(n.Stream == "", key+".stream", "required")
		errs.badIf(len(n.Subjects) == 0, key+".subjects", "required")
		errs.badIf(n.Durable == "", key+".durable", "required")
		errs.badIf(n.MaxDeliver < 1, key+".max_deliver", "%d is below 1", n.MaxDeliver)
		errs.badIf(n.AckWait <= 0, key+".ack_wait", "must be positive")
	}
	for i, b := range s.S3 {
		key := fmt.Sprintf("connectors.s3[%d]", i)
		unique(key, b.Name)
		errs.badIf(b.Endpoint == "", key+".endpoint", "required")
		errs.badIf(b.Bucket == "", key+".bucket", "required")
		switch b.Mode {
		case "jetstream":
			errs.badIf(b.Stream == "", key+".stream", "required in jetstream mode")
			errs.badIf(b.Subject == "", key+".subject", "required in jetstream mode")
			errs.badIf(b.AckWait < 0 || (b.AckWait > 0 && b.AckWait < time.Second), key+".ack_wait", "%s is below 1s (0: the default, 2m)", b.AckWait)
		case "listen":
			errs.badIf(b.ProbeInterval < 0, key+".probe_interval", "must not be negative (0: the default, 1m)")
		default:
			errs.badIf(true, key+".mode", "%q is not jetstream or listen", b.Mode)
		}
		if sched := b.ReconcileSchedule(); sched != "" {
			_, err := cronParser.Parse(sched)
			errs.badIf(err != nil, key+".reconcile", "bad cron schedule %q: %v", sched, err)
		}
		_, err := credential(b.AccessKeyEnv, b.AccessKeyFile, getenv, readFile)
		errs.badIf(err != nil, key+".access_key", "%v", err)
		_, err = credential(b.SecretKeyEnv, b.SecretKeyFile, getenv, readFile)
		errs.badIf(err != nil, key+".secret_key", "%v", err)
	}
	return errs
}

// yamlListHook decodes a list of sources given as one string (an
// environment variable such as SIMDEX_CONNECTORS_S3) as YAML or JSON.
func yamlListHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to.Kind() != reflect.Slice || to.Elem().Kind() != reflect.Struct {
		return data, nil
	}
	var out []map[string]any
	if err := yaml.Unmarshal([]byte(data.(string)), &out); err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	return out, nil
}
