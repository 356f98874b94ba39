package jetstream

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultMaxDeliver    = 5
	DefaultAckWait       = 2 * time.Minute
	DefaultMaxAckPending = 256
	DefaultMaxProcessing = 30 * time.Minute
	DefaultReplyTimeout  = 10 * time.Second
)

// DefaultBackoff is the redelivery delay schedule for transient failures
// when Config.Backoff is empty: delivery n waits DefaultBackoff[n-1], and
// later deliveries wait the last entry.
var DefaultBackoff = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute}

// DeadLetterStream is the stream that keeps dead-lettered records.
const DeadLetterStream = "DEADLETTER"

// DeadLetterPrefix prefixes the default dead-letter subjects; the
// DEADLETTER stream captures DeadLetterPrefix + ">".
const DeadLetterPrefix = "simdex.deadletter."

// ErrInvalidConfig is returned by New for a bad Config; the message names
// the field.
var ErrInvalidConfig = errors.New("invalid jetstream source config")

// Config configures a Source.
type Config struct {
	// Name is the source name put in Event.Source when the decoder leaves
	// it empty, and the metrics label, such as "nats:docs". Required.
	Name string
	// Stream is the JetStream stream to consume. Required.
	Stream string
	// Subjects are the stream's subjects, used when CreateStream is set.
	Subjects []string
	// CreateStream creates the stream (file storage) if it is missing, or
	// adds missing Subjects to it. Other stream settings are left alone.
	CreateStream bool
	// Replicas is the number of servers a created stream (and the
	// dead-letter stream) is kept on: 1 (default) for one server, 3 for a
	// JetStream cluster that must survive the loss of a node. Existing
	// streams are left as they are.
	Replicas int
	// Durable is the durable pull consumer's name. Its position survives
	// restarts of simdex and of the server. Required.
	Durable string
	// FilterSubject optionally restricts the consumer to matching subjects.
	FilterSubject string
	// MaxDeliver is how many times a message is delivered before it is
	// dead-lettered (default 5). It is enforced by the Source, not the
	// server: see the package documentation.
	MaxDeliver int
	// AckWait is how long the server waits for a settlement before it
	// redelivers (default 2m). While an event is in the pipeline the Source
	// sends progress notes every AckWait/4 or so, so slow events are not
	// redelivered while this Source runs.
	AckWait time.Duration
	// MaxProcessing bounds how long progress notes keep an event that was
	// handed out alive (default 30m). An event the pipeline has not settled
	// by then is presumed lost and is redelivered after AckWait.
	MaxProcessing time.Duration
	// ReplyTimeout bounds the wait for the server's confirmation of an
	// acknowledgement or of a dead letter's publication (default 10s). A
	// reply lost while the consumer's leader fails over would otherwise
	// hold the event until its handler's deadline; without a confirmation
	// the acknowledgement is sent once more unconfirmed, and a message
	// whose acknowledgement was lost after all is redelivered and found
	// already indexed.
	ReplyTimeout time.Duration
	// Backoff holds the redelivery delays for transient failures: delivery
	// n waits Backoff[n-1] (the last entry beyond). Default DefaultBackoff.
	Backoff []time.Duration
	// MaxAckPending bounds the messages in flight, delivered but not
	// settled (default 256).
	MaxAckPending int
	// DeadLetterSubject receives dead-lettered records (default
	// DeadLetterPrefix + the Name with characters other than letters,
	// digits, '-' and '_' replaced by '_'). The DEADLETTER stream is
	// created if missing and extended to capture this subject.
	DeadLetterSubject string
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
	// Metrics, if set, is updated as messages flow; it may be shared by
	// several sources (series are labelled by Name).
	Metrics *Metrics
}

// withDefaults returns a copy of c with defaults applied and validated.
func (c Config) withDefaults() (Config, error) {
	if c.MaxDeliver == 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.MaxProcessing == 0 {
		c.MaxProcessing = DefaultMaxProcessing
	}
	if c.ReplyTimeout == 0 {
		c.ReplyTimeout = DefaultReplyTimeout
	}
	if len(c.Backoff) == 0 {
		c.Backoff = DefaultBackoff
	}
	c.Backoff = append([]time.Duration(nil), c.Backoff...)
	c.Subjects = append([]string(nil), c.Subjects...)
	if c.MaxAckPending == 0 {
		c.MaxAckPending = DefaultMaxAckPending
	}
	if c.DeadLetterSubject == "" {
		c.DeadLetterSubject = DeadLetterPrefix + sanitizeToken(c.Name)
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
	if c.Name == "" {
		bad("Name", "must not be empty")
	}
	if err := checkName(c.Stream); err != nil {
		bad("Stream", "%v", err)
	}
	if err := checkName(c.Durable); err != nil {
		bad("Durable", "%v", err)
	}
	if c.CreateStream && len(c.Subjects) == 0 {
		bad("Subjects", "must not be empty when CreateStream is set")
	}
	for i, s := range c.Subjects {
		if err := checkSubject(s, true); err != nil {
			bad(fmt.Sprintf("Subjects[%d]", i), "%v", err)
		}
	}
	if c.FilterSubject != "" {
		if err := checkSubject(c.FilterSubject, true); err != nil {
			bad("FilterSubject", "%v", err)
		}
	}
	if c.MaxDeliver < 1 {
		bad("MaxDeliver", "must be at least 1, got %d", c.MaxDeliver)
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		bad("Replicas", "must be 0 to 5 (JetStream keeps a stream on at most 5 servers), got %d", c.Replicas)
	}
	if c.AckWait < time.Millisecond {
		bad("AckWait", "must be at least 1ms, got %s", c.AckWait)
	}
	if c.ReplyTimeout < 0 {
		bad("ReplyTimeout", "must not be negative, got %s", c.ReplyTimeout)
	}
	if c.MaxProcessing < 0 {
		bad("MaxProcessing", "must not be negative, got %s", c.MaxProcessing)
	}
	for i, d := range c.Backoff {
		if d < 0 {
			bad(fmt.Sprintf("Backoff[%d]", i), "must not be negative, got %s", d)
		}
	}
	if c.MaxAckPending < 1 {
		bad("MaxAckPending", "must be at least 1, got %d", c.MaxAckPending)
	}
	if err := checkSubject(c.DeadLetterSubject, false); err != nil {
		bad("DeadLetterSubject", "%v", err)
	}
	return errors.Join(errs...)
}

// checkName checks a stream or consumer name.
func checkName(name string) error {
	if name == "" {
		return errors.New("must not be empty")
	}
	if strings.ContainsAny(name, " \t\r\n.*>/\\") {
		return fmt.Errorf("%q must not contain whitespace, '.', '*', '>', '/' or '\\'", name)
	}
	return nil
}

// checkSubject checks a subject, optionally with wildcards.
func checkSubject(subject string, wildcards bool) error {
	if subject == "" {
		return errors.New("must not be empty")
	}
	if strings.ContainsAny(subject, " \t\r\n") {
		return fmt.Errorf("subject %q must not contain whitespace", subject)
	}
	tokens := strings.Split(subject, ".")
	for i, tok := range tokens {
		switch {
		case tok == "":
			return fmt.Errorf("subject %q has an empty token", subject)
		case !wildcards && (tok == "*" || tok == ">"):
			return fmt.Errorf("subject %q must not contain wildcards", subject)
		case tok == ">" && i != len(tokens)-1:
			return fmt.Errorf("subject %q: '>' must be the last token", subject)
		}
	}
	return nil
}

// sanitizeToken turns name into one subject token.
func sanitizeToken(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
}

// backoff returns the delay before redelivering a message that failed on
// its delivered-th delivery.
func (c Config) backoff(delivered uint64) time.Duration {
	i := int(min(delivered, uint64(len(c.Backoff))))
	if i < 1 {
		i = 1
	}
	return c.Backoff[i-1]
}
