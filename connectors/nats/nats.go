// Package nats is the connector for documents and object references that
// arrive as messages on JetStream subjects. Delivery (durable consumer,
// acknowledgement after commit, redelivery, dead letters) is package
// connectors/jetstream's; this package decodes the messages.
//
// A message is one of two forms, told apart by the Simdex-Ref header:
//
//   - A document: the payload is the document's bytes. Headers:
//     Simdex-Id (required: the key the owner knows the document by),
//     Simdex-Name (a display name, kept in Event.Metadata["Simdex-Name"]),
//     Content-Type, Simdex-Version (the version id; default the stream
//     sequence) and Simdex-Meta-<Name> (user metadata <Name>; a <Name> of
//     Simdex-Name or Simdex-Ref is refused, the connector setting those).
//   - A reference: Simdex-Ref: s3://bucket/key?versionId=V (key path-escaped,
//     versionId optional) and an empty payload. The object is fetched
//     through the Fetcher when the pipeline opens the event, and the
//     reference is kept in Event.Metadata["Simdex-Ref"], so that it can be
//     fetched again for a reviewer. Simdex-Id, if given, overrides the key;
//     the other headers apply as for documents.
//
// Simdex-Op: delete turns either form into a Removed event for the key (and
// Simdex-Version, if given). Header names are matched case-insensitively.
// A malformed message (no Simdex-Id on a document, a bad Simdex-Ref, a
// payload over MaxPayload, an unknown Simdex-Op, a reference with no
// Fetcher configured) is an error of kind Invalid and is dead-lettered.
package nats

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	natsgo "github.com/nats-io/nats.go"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/jetstream"
)

// Message headers.
const (
	HeaderID          = "Simdex-Id"
	HeaderName        = "Simdex-Name"
	HeaderContentType = "Content-Type"
	HeaderVersion     = "Simdex-Version"
	HeaderMetaPrefix  = "Simdex-Meta-"
	HeaderOp          = "Simdex-Op"
	HeaderRef         = "Simdex-Ref"
)

// Simdex-Op values.
const (
	OpPut    = "put" // the default
	OpDelete = "delete"
)

// DefaultMaxPayload is the document size cap when Config.MaxPayload is 0;
// it is also NATS's own hard limit on message size.
const DefaultMaxPayload = 64 << 20

// maxKeyLen bounds Simdex-Id and reference keys, as S3 bounds keys.
const maxKeyLen = 1024

// Fetcher fetches a referenced object version; versionID empty means the
// latest. It should return a *connectors.Error whose kind says whether a
// retry can help (connectors.ErrObjectMissing for a missing object);
// other errors reach the pipeline unchanged. The caller closes the body.
type Fetcher interface {
	Fetch(ctx context.Context, bucket, key, versionID string) (io.ReadCloser, ObjectInfo, error)
}

// ObjectInfo describes a fetched object.
type ObjectInfo struct {
	Size        int64
	ETag        string
	ContentType string
	VersionID   string
	Metadata    map[string]string
	ModTime     time.Time
}

// Config configures a NATS source: the JetStream consumer plus the decoder
// limits.
type Config struct {
	jetstream.Config
	// MaxPayload caps a document message's payload in bytes (default
	// DefaultMaxPayload); larger documents are dead-lettered.
	MaxPayload int
}

// New returns a source consuming cfg's stream and decoding document and
// reference messages; fetch may be nil, and then reference messages are
// dead-lettered.
func New(nc *natsgo.Conn, cfg Config, fetch Fetcher) (*jetstream.Source, error) {
	if cfg.MaxPayload < 0 {
		return nil, fmt.Errorf("%w: MaxPayload: must not be negative, got %d", jetstream.ErrInvalidConfig, cfg.MaxPayload)
	}
	return jetstream.New(nc, cfg.Config, NewDecoder(cfg.Name, cfg.MaxPayload, fetch))
}

// Decoder decodes document and reference messages. Create it with
// NewDecoder.
type Decoder struct {
	source     string
	maxPayload int
	fetch      Fetcher
}

var _ jetstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a decoder naming its events source; maxPayload 0
// means DefaultMaxPayload; fetch may be nil.
func NewDecoder(source string, maxPayload int, fetch Fetcher) *Decoder {
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayload
	}
	return &Decoder{source: source, maxPayload: maxPayload, fetch: fetch}
}

// Decode turns m into one event, or returns a *connectors.Error of kind
// Invalid.
func (d *Decoder) Decode(_ context.Context, m jetstream.Message) ([]connectors.Event, error) {
	ev, err := d.decode(m)
	if err != nil {
		return nil, &connectors.Error{Op: "decode message", Source: d.source, Key: ev.Key, Kind: connectors.Invalid, Err: err}
	}
	return []connectors.Event{ev}, nil
}

func (d *Decoder) decode(m jetstream.Message) (connectors.Event, error) {
	h := headers(m.Header)
	ev := connectors.Event{
		Source:      d.source,
		Kind:        connectors.Created,
		Key:         h.get(HeaderID),
		VersionID:   h.get(HeaderVersion),
		Size:        -1,
		ContentType: h.get(HeaderContentType),
		Time:        m.Time,
		Sequencer:   fmt.Sprintf("%016x", m.Sequence),
	}
	if ev.VersionID == "" {
		ev.VersionID = strconv.FormatUint(m.Sequence, 10)
	} else if err := checkKey(HeaderVersion, ev.VersionID); err != nil {
		return ev, err
	}
	switch op := strings.ToLower(h.get(HeaderOp)); op {
	case "", OpPut:
	case OpDelete:
		ev.Kind = connectors.Removed
		ev.ContentType = ""
	default:
		return ev, fmt.Errorf("unknown %s %q (want %q or %q)", HeaderOp, op, OpPut, OpDelete)
	}
	meta, err := h.metadata()
	if err != nil {
		return ev, err
	}
	if name := h.get(HeaderName); name != "" {
		if meta == nil {
			meta = map[string]string{}
		}
		meta[HeaderName] = name
	}
	if ev.Kind == connectors.Created {
		ev.Metadata = meta
	}
	if ref, ok := h.lookup(HeaderRef); ok {
		return d.reference(ev, ref, m.Data)
	}
	if err := checkKey(HeaderID, ev.Key); err != nil {
		return ev, err
	}
	if len(m.Data) > d.maxPayload {
		return ev, fmt.Errorf("payload of %d bytes exceeds the %d-byte limit", len(m.Data), d.maxPayload)
	}
	if ev.Kind == connectors.Removed {
		return ev, nil
	}
	data := m.Data
	sum := sha256.Sum256(data)
	ev.ETag = hex.EncodeToString(sum[:])
	ev.Size = int64(len(data))
	ev.Open = func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	return ev, nil
}

// reference completes ev for a Simdex-Ref message.
func (d *Decoder) reference(ev connectors.Event, ref string, data []byte) (connectors.Event, error) {
	bucket, key, version, err := ParseRef(ref)
	if err != nil {
		return ev, err
	}
	if len(data) != 0 {
		return ev, fmt.Errorf("reference message has a %d-byte payload; it must be empty", len(data))
	}
	ev.Bucket = bucket
	if ev.Key == "" {
		ev.Key = key
	} else if err := checkKey(HeaderID, ev.Key); err != nil {
		return ev, err
	}
	if version != "" {
		ev.VersionID = version
	}
	if ev.Kind == connectors.Removed {
		return ev, nil
	}
	// Kept with the document, so that its object can be read again.
	if ev.Metadata == nil {
		ev.Metadata = map[string]string{}
	}
	ev.Metadata[HeaderRef] = ref
	if d.fetch == nil {
		return ev, errors.New("reference message, but no object store is configured to fetch it from")
	}
	fetch := d.fetch
	ev.Open = func(ctx context.Context) (io.ReadCloser, error) {
		body, _, err := fetch.Fetch(ctx, bucket, key, version)
		if err != nil {
			return nil, fmt.Errorf("fetch s3://%s/%s (version %q): %w", bucket, key, version, err)
		}
		return body, nil
	}
	return ev, nil
}

// ParseRef parses a Simdex-Ref value, s3://bucket/key?versionId=V, where
// key is path-escaped and versionId is optional.
func ParseRef(ref string) (bucket, key, versionID string, err error) {
	rest, ok := strings.CutPrefix(ref, "s3://")
	if !ok {
		return "", "", "", fmt.Errorf("%s %q: want s3://bucket/key", HeaderRef, ref)
	}
	rest, query, _ := strings.Cut(rest, "?")
	bucket, escaped, ok := strings.Cut(rest, "/")
	if !ok || escaped == "" {
		return "", "", "", fmt.Errorf("%s %q: no object key", HeaderRef, ref)
	}
	if err := checkBucket(bucket); err != nil {
		return "", "", "", fmt.Errorf("%s %q: %w", HeaderRef, ref, err)
	}
	key, err = url.PathUnescape(escaped)
	if err != nil {
		return "", "", "", fmt.Errorf("%s %q: key: %w", HeaderRef, ref, err)
	}
	if err := checkKey("key", key); err != nil {
		return "", "", "", fmt.Errorf("%s %q: %w", HeaderRef, ref, err)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", "", fmt.Errorf("%s %q: query: %w", HeaderRef, ref, err)
	}
	for name, vs := range q {
		if name != "versionId" || len(vs) != 1 {
			return "", "", "", fmt.Errorf("%s %q: unexpected query parameter %q (only one versionId is allowed)", HeaderRef, ref, name)
		}
	}
	versionID = q.Get("versionId")
	if strings.ContainsRune(versionID, 0) || !utf8.ValidString(versionID) {
		return "", "", "", fmt.Errorf("%s %q: versionId must be UTF-8 without NUL", HeaderRef, ref)
	}
	return bucket, key, versionID, nil
}

// FormatRef formats a Simdex-Ref value that ParseRef accepts.
func FormatRef(bucket, key, versionID string) string {
	ref := "s3://" + bucket + "/" + escapePath(key)
	if versionID != "" {
		ref += "?versionId=" + url.QueryEscape(versionID)
	}
	return ref
}

// escapePath escapes each segment of key, keeping the slashes.
func escapePath(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// checkKey checks an object key or document id: non-empty valid UTF-8
// without NUL (which separates idempotency key fields), at most maxKeyLen
// bytes.
func checkKey(what, key string) error {
	switch {
	case key == "":
		return fmt.Errorf("missing %s", what)
	case len(key) > maxKeyLen:
		return fmt.Errorf("%s is %d bytes long, over the %d-byte limit", what, len(key), maxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%s %q is not valid UTF-8", what, key)
	case strings.ContainsRune(key, 0):
		return fmt.Errorf("%s %q contains a NUL byte", what, key)
	}
	return nil
}

// checkBucket checks an S3 bucket name loosely: 3 to 63 lowercase letters,
// digits, dots and hyphens.
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket %q must be 3 to 63 characters long", b)
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return fmt.Errorf("bucket %q may hold only lowercase letters, digits, '.' and '-'", b)
		}
	}
	return nil
}

// headers looks NATS headers up case-insensitively.
type headers natsgo.Header

func (h headers) lookup(name string) (string, bool) {
	if vs, ok := h[name]; ok && len(vs) > 0 {
		return vs[0], true
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0], true
		}
	}
	return "", false
}

func (h headers) get(name string) string {
	v, _ := h.lookup(name)
	return strings.TrimSpace(v)
}

// metadata collects Simdex-Meta-<Name> headers into a map keyed by <Name>.
// A <Name> that is one of the keys the connector itself sets in an event's
// metadata (HeaderRef, HeaderName) is refused: the message would otherwise
// choose which object a document is read again from.
func (h headers) metadata() (map[string]string, error) {
	var meta map[string]string
	for k, vs := range h {
		if len(k) < len(HeaderMetaPrefix) || !strings.EqualFold(k[:len(HeaderMetaPrefix)], HeaderMetaPrefix) || len(vs) == 0 {
			continue
		}
		name := k[len(HeaderMetaPrefix):]
		if name == "" {
			return nil, fmt.Errorf("header %q names no metadata key", k)
		}
		if strings.EqualFold(name, HeaderRef) || strings.EqualFold(name, HeaderName) {
			// The connector records these itself, from their own headers.
			return nil, fmt.Errorf("metadata header %q names the connector's own %s", k, name)
		}
		if !utf8.ValidString(name) || !utf8.ValidString(vs[0]) {
			return nil, fmt.Errorf("metadata header %q is not valid UTF-8", k)
		}
		if meta == nil {
			meta = make(map[string]string)
		}
		meta[name] = vs[0]
	}
	return meta, nil
}
