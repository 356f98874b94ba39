package s3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Event delivery modes for Config.Mode.
const (
	// ModeJetStream consumes a JetStream stream that MinIO's NATS
	// notification target publishes to.
	ModeJetStream = "jetstream"
	// ModeListen uses MinIO's ListenBucketNotification API (a hint only).
	ModeListen = "listen"
)

// Defaults applied by NewClient to zero Config fields.
const (
	DefaultMaxRetries    = 3
	DefaultSettleTimeout = 30 * time.Second
)

// ErrInvalidConfig is returned by NewClient for a bad Config; the message
// names the field.
var ErrInvalidConfig = errors.New("invalid s3 connector config")

// Config configures a Client for one bucket.
type Config struct {
	// Name is the source name put in events, default "s3:<bucket>".
	Name string
	// Endpoint is the server's host:port, without a scheme. Required.
	Endpoint string
	// Secure uses HTTPS.
	Secure bool
	// Region is the bucket's region; empty lets minio-go discover it.
	Region string
	// AccessKey and SecretKey are the credentials. They must come from the
	// environment or files (the daemon enforces that); both are required.
	AccessKey, SecretKey string
	// Bucket is the bucket to watch. Required.
	Bucket string
	// Prefix restricts events, backfill and reconciliation to keys that
	// start with it.
	Prefix string
	// Mode says how events arrive: ModeJetStream (default) or ModeListen.
	Mode string
	// Versioned asserts that the bucket keeps versions, without asking it.
	// When false the Client asks the bucket (GetBucketVersioning) the first
	// time it matters, and treats Enabled and Suspended as versioned. Event
	// version ids are honoured either way: an unversioned bucket sends none.
	Versioned bool
	// MaxObjectSize refuses larger objects with a Permanent error
	// (ErrTooLarge); 0 means no limit.
	MaxObjectSize int64
	// MaxRetries bounds minio-go's own retries of a failed request
	// (default DefaultMaxRetries; 1 disables retries). Connector errors are
	// retried by the pipeline with backoff, so this stays small.
	MaxRetries int
	// SettleTimeout bounds how long Backfill and Reconcile wait, after
	// emitting their last event, for the emitted events to be settled
	// (default DefaultSettleTimeout; negative: do not wait).
	SettleTimeout time.Duration
	// ProbeInterval is how long listen mode waits without a notification
	// before it probes its subscription with a canary object under
	// ProbeDir (default DefaultProbeInterval); the probe waits for the
	// canary's event as long, at most 15 s. The credentials must be
	// allowed to put and delete objects under ProbeDir.
	ProbeInterval time.Duration
	// CatchUp, if set, is called in listen mode, in a goroutine of its
	// own, once each subscription has held for a few seconds (the first
	// one, and each that replaces one that stalled or ended): MinIO
	// replays nothing, so the events before it are lost and the daemon
	// reconciles. Runs do not overlap; Listen waits for one under way
	// before returning.
	CatchUp func(ctx context.Context)
	// Metrics, if set, records listen mode's probes.
	Metrics *Metrics
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
}

// String describes the config without its secret.
func (c Config) String() string {
	return fmt.Sprintf("s3 %s bucket=%s prefix=%q mode=%s endpoint=%s access_key=%s secret_key=REDACTED",
		c.Name, c.Bucket, c.Prefix, c.Mode, c.Endpoint, c.AccessKey)
}

// withDefaults returns a copy of c with defaults applied, validated.
func (c Config) withDefaults() (Config, error) {
	if c.Name == "" && c.Bucket != "" {
		c.Name = "s3:" + c.Bucket
	}
	if c.Mode == "" {
		c.Mode = ModeJetStream
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.SettleTimeout == 0 {
		c.SettleTimeout = DefaultSettleTimeout
	}
	if c.ProbeInterval == 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, c.validate()
}

func (c Config) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalidConfig, field, fmt.Sprintf(format, args...)))
	}
	switch {
	case c.Endpoint == "":
		bad("Endpoint", "must not be empty")
	case strings.Contains(c.Endpoint, "://"):
		bad("Endpoint", "%q must be host:port without a scheme (use Secure for https)", c.Endpoint)
	case strings.ContainsAny(c.Endpoint, "/ "):
		bad("Endpoint", "%q must be host:port without a path", c.Endpoint)
	}
	if c.AccessKey == "" {
		bad("AccessKey", "must not be empty (give it in the environment or a file)")
	}
	if c.SecretKey == "" {
		bad("SecretKey", "must not be empty (give it in the environment or a file)")
	}
	if c.Bucket == "" {
		bad("Bucket", "must not be empty")
	} else if err := s3utils.CheckValidBucketNameStrict(c.Bucket); err != nil {
		bad("Bucket", "%q: %v", c.Bucket, err)
	}
	if c.Mode != ModeJetStream && c.Mode != ModeListen {
		bad("Mode", "%q must be %q or %q", c.Mode, ModeJetStream, ModeListen)
	}
	if c.MaxObjectSize < 0 {
		bad("MaxObjectSize", "must not be negative, got %d", c.MaxObjectSize)
	}
	if c.ProbeInterval < 0 {
		bad("ProbeInterval", "must not be negative, got %s", c.ProbeInterval)
	}
	if c.MaxRetries < 1 {
		bad("MaxRetries", "must be at least 1, got %d", c.MaxRetries)
	}
	return errors.Join(errs...)
}
