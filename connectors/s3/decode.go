package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/jetstream"
)

// maxKeyLen is S3's limit on key length in bytes.
const maxKeyLen = 1024

// message is the body MinIO's NATS target publishes: the event name, the
// unescaped "bucket/key" and the S3 records. A bare S3 notification
// ({"Records": [...]}) has the records only.
type message struct {
	EventName string    `json:"EventName"`
	Key       string    `json:"Key"`
	Records   *[]record `json:"Records"`
}

// record is one S3 event record, limited to the fields simdex uses.
type record struct {
	EventName string `json:"eventName"`
	EventTime string `json:"eventTime"`
	S3        struct {
		Bucket struct {
			Name string `json:"name"`
		} `json:"bucket"`
		Object struct {
			Key          string            `json:"key"`
			Size         int64             `json:"size"`
			ETag         string            `json:"eTag"`
			ContentType  string            `json:"contentType"`
			UserMetadata map[string]string `json:"userMetadata"`
			VersionID    string            `json:"versionId"`
			Sequencer    string            `json:"sequencer"`
		} `json:"object"`
	} `json:"s3"`
}

// eventKind maps an S3 event name to the event kind; ok is false for the
// names that are ignored (see the package documentation).
func eventKind(name string) (kind connectors.Kind, ok bool) {
	switch strings.TrimPrefix(name, "s3:") {
	case "ObjectCreated:Put", "ObjectCreated:Post", "ObjectCreated:Copy", "ObjectCreated:CompleteMultipartUpload":
		return connectors.Created, true
	case "ObjectRemoved:Delete", "ObjectRemoved:DeleteMarkerCreated":
		return connectors.Removed, true
	}
	return 0, false
}

// DecodeRecords decodes a message of MinIO's NATS notification target
// ({"EventName", "Key", "Records": [...]}) or a bare S3 notification
// ({"Records": [...]}) into one event per record of this bucket and prefix
// with a handled event name, in record order. Keys are URL-decoded with
// url.QueryUnescape. Malformed JSON or records are a *connectors.Error of
// kind Invalid; one bad record makes the whole message invalid, so that it
// is dead-lettered whole rather than half-processed. Events carry no Done.
func (c *Client) DecodeRecords(_ context.Context, data []byte) ([]connectors.Event, error) {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, c.invalid("", fmt.Errorf("event JSON: %w", err))
	}
	if m.Records == nil {
		return nil, c.invalid("", errors.New("event JSON has no Records"))
	}
	var evs []connectors.Event
	for i, r := range *m.Records {
		ev, ok, err := c.recordEvent(r, true)
		if err != nil {
			return nil, c.invalid(ev.Key, fmt.Errorf("record %d (%s): %w", i, r.EventName, err))
		}
		if ok {
			evs = append(evs, ev)
		}
	}
	return evs, nil
}

func (c *Client) invalid(key string, err error) error {
	return &connectors.Error{Op: "decode event", Source: c.cfg.Name, Key: key, Kind: connectors.Invalid, Err: err}
}

// recordEvent turns one record into an event; ok is false for records that
// are skipped (another bucket or prefix, an ignored event name). escaped
// says whether the key is URL-encoded (notification targets) or raw (the
// listen API).
func (c *Client) recordEvent(r record, escaped bool) (ev connectors.Event, ok bool, err error) {
	if r.EventName == "" {
		return ev, false, errors.New("no eventName")
	}
	obj := r.S3.Object
	if r.S3.Bucket.Name == "" {
		return ev, false, errors.New("no s3.bucket.name")
	}
	if r.S3.Bucket.Name != c.cfg.Bucket {
		return ev, false, nil
	}
	kind, handled := eventKind(r.EventName)
	if !handled {
		c.log.Debug("ignoring bucket event", "event", r.EventName)
		return ev, false, nil
	}
	key := obj.Key
	if escaped {
		if key, err = url.QueryUnescape(obj.Key); err != nil {
			return ev, false, fmt.Errorf("s3.object.key %q: %w", obj.Key, err)
		}
	}
	if err := checkKey(key); err != nil {
		return ev, false, err
	}
	if !strings.HasPrefix(key, c.cfg.Prefix) || c.isProbeKey(key) {
		return ev, false, nil
	}
	t, err := time.Parse(time.RFC3339Nano, r.EventTime)
	if err != nil {
		return ev, false, fmt.Errorf("eventTime %q: %w", r.EventTime, err)
	}
	ev = connectors.Event{
		Source:    c.cfg.Name,
		Kind:      kind,
		Bucket:    c.cfg.Bucket,
		Key:       key,
		VersionID: normalizeVersion(obj.VersionID),
		Size:      -1,
		Time:      t,
		Sequencer: obj.Sequencer,
	}
	if kind == connectors.Removed {
		ev.DeleteMarker = strings.HasSuffix(r.EventName, "DeleteMarkerCreated")
		return ev, true, nil
	}
	if obj.Size < 0 {
		return ev, false, fmt.Errorf("s3.object.size %d is negative", obj.Size)
	}
	ev.ETag = normalizeETag(obj.ETag)
	if ev.ETag == "" {
		// Without an ETag every unversioned overwrite would share one
		// idempotency key and be skipped as a duplicate.
		return ev, false, errors.New("no s3.object.eTag in a created event")
	}
	ev.Size = obj.Size
	ev.Metadata, ev.ContentType = eventMetadata(obj.UserMetadata, obj.ContentType)
	c.attachOpen(&ev, obj.VersionID)
	return ev, true, nil
}

// checkKey rejects keys S3 cannot hold.
func checkKey(key string) error {
	switch {
	case key == "":
		return errors.New("empty object key")
	case len(key) > maxKeyLen:
		return fmt.Errorf("object key of %d bytes is longer than %d", len(key), maxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("object key %q is not UTF-8", key)
	}
	return nil
}

// attachOpen sets ev.Open to fetch the version; fetchVersion is the
// store's version id ("null" included), ev.ETag and ev.Size the expected
// ones.
func (c *Client) attachOpen(ev *connectors.Event, fetchVersion string) {
	key, etag, size := ev.Key, ev.ETag, ev.Size
	ev.Open = func(ctx context.Context) (io.ReadCloser, error) {
		return c.openVersion(ctx, key, fetchVersion, etag, size)
	}
	ev.Current = func(ctx context.Context) (bool, error) {
		return c.current(ctx, key, fetchVersion, etag)
	}
}

// Decoder adapts a Client to jetstream.Decoder, for the JetStream mode.
type Decoder struct {
	Client *Client
}

var _ jetstream.Decoder = Decoder{}

// Decode decodes the records of a message published by MinIO's NATS
// target; see Client.DecodeRecords.
func (d Decoder) Decode(ctx context.Context, m jetstream.Message) ([]connectors.Event, error) {
	return d.Client.DecodeRecords(ctx, m.Data)
}

// JetStream returns a source consuming the JetStream stream MinIO
// publishes this bucket's events to, through nc. cfg.Name defaults to the
// client's source name.
func (c *Client) JetStream(nc *nats.Conn, cfg jetstream.Config) (*jetstream.Source, error) {
	if cfg.Name == "" {
		cfg.Name = c.cfg.Name
	}
	if cfg.Logger == nil {
		cfg.Logger = c.cfg.Logger
	}
	return jetstream.New(nc, cfg, Decoder{Client: c})
}
