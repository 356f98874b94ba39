// Package connectors defines how objects reach simdex: a Source delivers
// Events, one per created or removed object, and the pipeline settles each
// event once its effect is committed.
//
// Implementations live in sub-packages (s3, nats, fs) and must all pass the
// shared suite in connectors/connectortest. See README.md for how to write one.
package connectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Source delivers events from one origin (a bucket, a subject, a folder).
type Source interface {
	// Run delivers events on out until ctx is cancelled or a fatal error
	// occurs. It must return promptly when ctx is done, must not close out,
	// and must never block forever on a full out (select on ctx.Done()).
	// Events that were delivered but not settled when Run returns are
	// redelivered by the origin later (at-least-once); none is lost.
	Run(ctx context.Context, out chan<- Event) error
}

// Kind says what happened to an object.
type Kind int

// Event kinds.
const (
	// Created is a new object or a new version of one (put, post, copy,
	// multipart completion, a NATS document message, a new or changed file).
	Created Kind = iota + 1
	// Removed is a deletion of an object version or a delete marker.
	Removed
)

// String returns "created" or "removed".
func (k Kind) String() string {
	switch k {
	case Created:
		return "created"
	case Removed:
		return "removed"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Event is one object change. It is a plain value: no connector-specific
// type leaks out of a connector.
type Event struct {
	// Source names the origin, such as "s3:contracts", "nats:docs.in" or
	// "fs:/srv/inbox".
	Source string
	// Kind is what happened.
	Kind Kind
	// Bucket is the bucket for S3 events; empty otherwise.
	Bucket string
	// Key is the object key (URL-decoded), message id or path relative to
	// the watched folder: the name the owner knows the object by.
	Key string
	// VersionID is the S3 version id, the stream sequence or a file's
	// modification stamp; empty when the origin has none.
	VersionID string
	// ETag is the S3 entity tag or another content stamp; may be empty.
	ETag string
	// Size is the object size in bytes, or -1 when unknown.
	Size int64
	// ContentType is the declared content type; it may be wrong or empty.
	ContentType string
	// Metadata holds user metadata and tags given by the origin.
	Metadata map[string]string
	// Time is when the change happened at the origin.
	Time time.Time
	// Sequencer orders events for the same key (S3 sequencer); may be empty.
	Sequencer string
	// DeleteMarker is set on Removed events when a delete marker now hides
	// the key: VersionID is the marker's own id, and every version of the
	// key stops being current (the versions themselves may still exist).
	DeleteMarker bool
	// Open returns the object's body for Created events. The caller closes
	// it. It may be called more than once (each call reads from the start).
	Open func(ctx context.Context) (io.ReadCloser, error)
	// Current, when set, reports whether the Created event's object version
	// is still live at its origin: not deleted, not hidden by a delete
	// marker, not overwritten. Events of one key may be applied out of
	// order (a create fetched while its delete is applied), so the pipeline
	// asks, under a lock of the key, just before committing: a version that
	// is no longer current is not indexed. Nil when the origin cannot tell.
	Current func(ctx context.Context) (bool, error)
	// Done settles the event and must be called exactly once by the
	// consumer: with nil after the effect is durably committed (the origin
	// may then forget the event), or with an error. An *Error of kind
	// Transient asks for redelivery with backoff; any other error is
	// permanent and the connector records the event as dead-lettered.
	// Done may be nil for origins that need no settlement.
	Done func(ctx context.Context, err error)
}

// IdempotencyKey identifies this exact object version permanently, so that a
// redelivered or duplicated event is never indexed twice: source, bucket,
// key, version id and ETag joined by NUL bytes.
func (e Event) IdempotencyKey() string {
	return strings.Join([]string{e.Source, e.Bucket, e.Key, e.VersionID, e.ETag}, "\x00")
}

// Settle calls e.Done if it is set. It is safe on events without Done.
func (e Event) Settle(ctx context.Context, err error) {
	if e.Done != nil {
		e.Done(ctx, err)
	}
}

// ErrorKind classifies connector and pipeline errors; it drives retries and
// dead-lettering.
type ErrorKind int

// Error kinds.
const (
	// Transient errors may succeed on retry (network, unavailable service).
	Transient ErrorKind = iota + 1
	// Permanent errors will fail again (missing object, size cap exceeded).
	Permanent
	// Invalid marks malformed input (bad event JSON, bad headers).
	Invalid
)

// String names the kind.
func (k ErrorKind) String() string {
	switch k {
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("errorkind(%d)", int(k))
}

// Sentinel errors that callers branch on with errors.Is.
var (
	// ErrTransient matches every *Error of kind Transient.
	ErrTransient = errors.New("transient")
	// ErrPermanent matches every *Error of kind Permanent.
	ErrPermanent = errors.New("permanent")
	// ErrInvalid matches every *Error of kind Invalid.
	ErrInvalid = errors.New("invalid input")
	// ErrObjectMissing reports that an event names an object or bucket that
	// no longer exists.
	ErrObjectMissing = errors.New("object missing")
)

// Error is a connector error with what was attempted and where.
type Error struct {
	Op     string // what was attempted: "fetch", "decode event", "list versions"
	Source string // Event.Source
	Key    string // object key, if any
	Kind   ErrorKind
	Err    error
}

// Error formats "op source key: err".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Source != "" {
		b.WriteString(" " + e.Source)
	}
	if e.Key != "" {
		b.WriteString(" " + e.Key)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the kind sentinels.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrTransient:
		return e.Kind == Transient
	case ErrPermanent:
		return e.Kind == Permanent
	case ErrInvalid:
		return e.Kind == Invalid
	}
	return false
}

// IsTransient reports whether err asks for a retry.
func IsTransient(err error) bool { return errors.Is(err, ErrTransient) }
