package notifier

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultNATSSubject is the subject prefix of a NATS channel that names none.
const DefaultNATSSubject = "simdex.alerts"

// Errors callers branch on.
var (
	// ErrInvalidConfig wraps every configuration error; the message names
	// the key.
	ErrInvalidConfig = errors.New("invalid notifier configuration")
	// ErrInvalidAlert reports an alert that cannot be routed.
	ErrInvalidAlert = errors.New("invalid alert")
	// ErrPermanent marks a delivery failure that retrying cannot fix (a
	// webhook answering 400, an address the mail server refuses): the
	// delivery is failed at once instead of retried.
	ErrPermanent = errors.New("permanent delivery failure")
	// ErrNotFound reports an unknown delivery.
	ErrNotFound = errors.New("delivery not found")
)

// Channel types.
const (
	TypeNATS    = "nats"
	TypeWebhook = "webhook"
	TypeEmail   = "email"
)

// Config is the `notifier` section of config.yaml.
type Config struct {
	// Channels are the places alerts can go, each with a unique name.
	Channels []ChannelConfig `mapstructure:"channels" yaml:"channels"`
	// Routes send alerts to channels; an alert matching several routes
	// goes once to each channel named.
	Routes []Route `mapstructure:"routes" yaml:"routes"`
	// Retry is the backoff of failed deliveries.
	Retry RetryConfig `mapstructure:"retry" yaml:"retry"`
	// Interval is how often the dispatcher looks for due deliveries when
	// nothing wakes it.
	Interval time.Duration `mapstructure:"interval" yaml:"interval"`
	// FlagsSubject, when not empty, publishes every alert on NATS as
	// <FlagsSubject>.<kind> through the outbox, whatever the routes say:
	// the channel other systems subscribe to. Default "simdex.flags".
	FlagsSubject string `mapstructure:"flags_subject" yaml:"flags_subject"`
	// KeepDelivered is how long a delivered alert stays in the outbox
	// (default 30 days; 0 keeps them forever). Failed and pending ones
	// stay until they are sent. The policy's audit log, not the outbox,
	// is the record of what was flagged: an alert enqueued again after it
	// was pruned is sent again.
	KeepDelivered time.Duration `mapstructure:"keep_delivered" yaml:"keep_delivered"`
}

// FlagsChannel is the name of the built-in NATS channel of FlagsSubject;
// no configured channel may take it.
const FlagsChannel = "flags"

// ChannelConfig configures one channel.
type ChannelConfig struct {
	Name string `mapstructure:"name" yaml:"name"`
	// Type is nats, webhook or email.
	Type string `mapstructure:"type" yaml:"type"`
	// Subject is the NATS subject prefix (default "simdex.alerts"): an
	// alert goes to <subject>.<kind>.
	Subject string `mapstructure:"subject" yaml:"subject"`
	// URL is the webhook endpoint.
	URL string `mapstructure:"url" yaml:"url"`
	// Format is the webhook body: json (default) or slack.
	Format string `mapstructure:"format" yaml:"format"`
	// SecretEnv or SecretFile hold the webhook's HMAC key; required for
	// json webhooks so receivers can authenticate simdex.
	SecretEnv  string `mapstructure:"secret_env" yaml:"secret_env"`
	SecretFile string `mapstructure:"secret_file" yaml:"secret_file"`
	// Timeout bounds one send (default 10s).
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
	// SMTP configures an e-mail channel.
	SMTP SMTPConfig `mapstructure:"smtp" yaml:"smtp"`
}

// SMTPConfig configures an e-mail channel.
type SMTPConfig struct {
	// Addr is host:port of the submission server.
	Addr string `mapstructure:"addr" yaml:"addr"`
	From string `mapstructure:"from" yaml:"from"`
	// To are the recipients.
	To []string `mapstructure:"to" yaml:"to"`
	// UsernameEnv/PasswordEnv (or the _file variants) hold credentials;
	// without a username no authentication is attempted.
	UsernameEnv  string `mapstructure:"username_env" yaml:"username_env"`
	PasswordEnv  string `mapstructure:"password_env" yaml:"password_env"`
	UsernameFile string `mapstructure:"username_file" yaml:"username_file"`
	PasswordFile string `mapstructure:"password_file" yaml:"password_file"`
	// InsecureNoTLS allows sending without STARTTLS. Off by default: a
	// server that does not offer STARTTLS is refused.
	InsecureNoTLS bool `mapstructure:"insecure_no_tls" yaml:"insecure_no_tls"`
	// Digest, when set, gathers the alerts of each period into one message
	// (e.g. 1h, 24h); zero sends each alert at once.
	Digest time.Duration `mapstructure:"digest" yaml:"digest"`
}

// Route sends the alerts it matches to channels. Empty lists match
// everything.
type Route struct {
	Kinds    []string `mapstructure:"kinds" yaml:"kinds"`
	Matters  []string `mapstructure:"matters" yaml:"matters"`
	Rules    []string `mapstructure:"rules" yaml:"rules"`
	Channels []string `mapstructure:"channels" yaml:"channels"`
}

// RetryConfig is the backoff of failed deliveries: Initial, doubling up to
// Max, at most MaxAttempts attempts in all.
type RetryConfig struct {
	Initial     time.Duration `mapstructure:"initial" yaml:"initial"`
	Max         time.Duration `mapstructure:"max" yaml:"max"`
	MaxAttempts int           `mapstructure:"max_attempts" yaml:"max_attempts"`
	// Lease is how long a claimed delivery is reserved for the replica
	// sending it; it must exceed the slowest send.
	Lease time.Duration `mapstructure:"lease" yaml:"lease"`
}

// DefaultConfig returns a configuration with no channel but the built-in
// NATS flags subject: alerts are published there and kept as flags until
// channels for people are configured.
func DefaultConfig() Config {
	return Config{
		Channels:      []ChannelConfig{},
		Routes:        []Route{},
		Retry:         RetryConfig{Initial: 5 * time.Second, Max: 30 * time.Minute, MaxAttempts: 12, Lease: 2 * time.Minute},
		Interval:      5 * time.Second,
		FlagsSubject:  "simdex.flags",
		KeepDelivered: 30 * 24 * time.Hour,
	}
}

var (
	kinds   = []string{KindDispositionDue, KindHoldMatch, KindDuplicateUpload, KindHoldUnenforced, KindHoldSourceChanged}
	formats = []string{"", "json", "slack"}
)

// PublishedSubjects returns the NATS subject patterns the notifier
// publishes to: the flags subject and every NATS channel's prefix, each
// followed by ".>".
func (c *Config) PublishedSubjects() []string {
	var out []string
	if c.FlagsSubject != "" {
		out = append(out, c.FlagsSubject+".>")
	}
	for _, ch := range c.Channels {
		if ch.Type == TypeNATS {
			out = append(out, cmp.Or(ch.Subject, DefaultNATSSubject)+".>")
		}
	}
	return out
}

// Validate checks the configuration; secrets are looked up with getenv and
// readFile so that a missing secret stops the daemon at start.
func (c *Config) Validate(getenv func(string) string, readFile func(string) ([]byte, error)) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: notifier.%s: %s", ErrInvalidConfig, key, fmt.Sprintf(format, args...)))
	}
	names := map[string]bool{}
	for i, ch := range c.Channels {
		k := fmt.Sprintf("channels[%d]", i)
		switch {
		case ch.Name == "":
			bad(k+".name", "required")
		case names[ch.Name]:
			bad(k+".name", "%q is used twice", ch.Name)
		case ch.Name == FlagsChannel && c.FlagsSubject != "":
			bad(k+".name", "%q is the built-in channel of flags_subject", ch.Name)
		}
		names[ch.Name] = true
		if ch.Timeout < 0 {
			bad(k+".timeout", "must not be negative")
		}
		switch ch.Type {
		case TypeNATS:
			if ch.Subject != "" && strings.ContainsAny(ch.Subject, " *>") {
				bad(k+".subject", "%q is not a NATS subject prefix", ch.Subject)
			}
		case TypeWebhook:
			u, err := url.Parse(ch.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(k+".url", "%q is not an http(s) URL", ch.URL)
			}
			if !slices.Contains(formats, ch.Format) {
				bad(k+".format", "%q: want json or slack", ch.Format)
			}
			if ch.Format != "slack" {
				if _, err := secret(ch.SecretEnv, ch.SecretFile, getenv, readFile); err != nil {
					bad(k+".secret_env", "%v (json webhooks are signed)", err)
				}
			}
		case TypeEmail:
			s := ch.SMTP
			if _, _, err := net.SplitHostPort(s.Addr); err != nil {
				bad(k+".smtp.addr", "%q: want host:port", s.Addr)
			}
			if _, err := mail.ParseAddress(s.From); err != nil {
				bad(k+".smtp.from", "%q: %v", s.From, err)
			}
			if len(s.To) == 0 {
				bad(k+".smtp.to", "at least one recipient")
			}
			for j, to := range s.To {
				if _, err := mail.ParseAddress(to); err != nil {
					bad(fmt.Sprintf("%s.smtp.to[%d]", k, j), "%q: %v", to, err)
				}
			}
			if s.Digest < 0 {
				bad(k+".smtp.digest", "must not be negative")
			}
			if s.UsernameEnv != "" || s.UsernameFile != "" {
				if _, err := secret(s.PasswordEnv, s.PasswordFile, getenv, readFile); err != nil {
					bad(k+".smtp.password_env", "%v", err)
				}
			}
		default:
			bad(k+".type", "%q: want nats, webhook or email", ch.Type)
		}
	}
	for i, r := range c.Routes {
		k := fmt.Sprintf("routes[%d]", i)
		if len(r.Channels) == 0 {
			bad(k+".channels", "a route needs at least one channel")
		}
		for _, n := range r.Channels {
			if !names[n] {
				bad(k+".channels", "no channel named %q", n)
			}
		}
		for _, kd := range r.Kinds {
			if !slices.Contains(kinds, kd) {
				bad(k+".kinds", "%q: want one of %s", kd, strings.Join(kinds, ", "))
			}
		}
	}
	r := c.Retry
	if r.Initial <= 0 || r.Max < r.Initial || r.MaxAttempts < 1 || r.Lease <= 0 {
		bad("retry", "want initial > 0, max >= initial, max_attempts >= 1, lease > 0 (got %+v)", r)
	}
	if c.Interval <= 0 {
		bad("interval", "must be positive")
	}
	if c.KeepDelivered < 0 {
		bad("keep_delivered", "must not be negative (0 keeps delivered alerts forever)")
	}
	if c.FlagsSubject != "" && (strings.ContainsAny(c.FlagsSubject, " *>") || strings.HasPrefix(c.FlagsSubject, ".") || strings.HasSuffix(c.FlagsSubject, ".")) {
		bad("flags_subject", "%q is not a NATS subject prefix", c.FlagsSubject)
	}
	return errors.Join(errs...)
}

// secret reads a secret from the environment variable env or the file
// path; exactly one may be set, and the value must not be empty.
func secret(env, path string, getenv func(string) string, readFile func(string) ([]byte, error)) (string, error) {
	switch {
	case env != "" && path != "":
		return "", errors.New("set the environment variable or the file, not both")
	case env != "":
		v := getenv(env)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty or unset", env)
		}
		return v, nil
	case path != "":
		b, err := readFile(path)
		if err != nil {
			return "", fmt.Errorf("read secret file: %w", err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("secret file %s is empty", path)
		}
		return v, nil
	}
	return "", errors.New("no secret configured (secret_env or secret_file)")
}

// osSecret reads secrets from the process environment and files.
func osSecret(env, path string) (string, error) { return secret(env, path, os.Getenv, os.ReadFile) }
