package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/simdex/simdex/connectors"
)

// Sentinel errors callers branch on with errors.Is. They are wrapped in a
// *connectors.Error whose Kind drives retries.
var (
	// ErrAccessDenied reports refused credentials or a missing permission.
	ErrAccessDenied = errors.New("access denied")
	// ErrNoBucket reports that the configured bucket does not exist.
	ErrNoBucket = errors.New("bucket does not exist")
	// ErrTooLarge reports an object over Config.MaxObjectSize.
	ErrTooLarge = errors.New("object too large")
	// ErrSuperseded reports that an unversioned object changed since its
	// event; it also matches connectors.ErrObjectMissing.
	ErrSuperseded = errors.New("object superseded by a newer one")
	// ErrLockNotEnabled reports a bucket without an Object Lock
	// configuration.
	ErrLockNotEnabled = errors.New("object lock not enabled on bucket")
	// ErrVersionRequired reports an empty version id where only an exact
	// version will do.
	ErrVersionRequired = errors.New("version id required")
	// ErrObjectLocked reports a version protected by a legal hold or a
	// retention period.
	ErrObjectLocked = errors.New("object version is locked")
)

// ObjectInfo describes one object version as the store reports it.
// VersionID is the store's handle for the version: "null" names the null
// version of a versioned bucket and is what listings report on unversioned
// buckets (events normalise it to "").
type ObjectInfo struct {
	Key            string
	VersionID      string
	ETag           string // without quotes
	ContentType    string
	Size           int64
	ModTime        time.Time
	Metadata       map[string]string // user metadata, names lower-cased, without "X-Amz-Meta-"
	IsDeleteMarker bool
	IsLatest       bool // only set by Versions
}

// Client wraps a *minio.Client for one bucket. Its methods are safe for
// concurrent use.
type Client struct {
	cfg Config
	mc  *minio.Client
	log *slog.Logger

	instance   string        // names this client's listen canaries
	watch      watch         // listen mode's subscription health
	subscribed chan struct{} // a listen request was sent (listenIdentity)

	mu        sync.Mutex
	versioned *bool // cached bucket versioning, once known
	locked    bool  // object lock seen enabled
}

// NewClient validates cfg, applies defaults and returns a Client. It does
// no I/O: wrong credentials or an unreachable server show at the first
// call (use Check at start-up).
func NewClient(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	subscribed := make(chan struct{}, 1)
	tr, err := minio.DefaultTransport(cfg.Secure)
	if err != nil {
		return nil, fmt.Errorf("s3 transport: %w", err)
	}
	mc, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:      credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:     cfg.Secure,
		Region:     cfg.Region,
		MaxRetries: cfg.MaxRetries,
		Transport:  listenIdentity{next: tr, sent: subscribed},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: Endpoint: %q: %w", ErrInvalidConfig, cfg.Endpoint, err)
	}
	return &Client{
		cfg:        cfg,
		mc:         mc,
		log:        cfg.Logger.With("component", "connector/s3", "source", cfg.Name, "bucket", cfg.Bucket),
		instance:   newInstance(),
		subscribed: subscribed,
	}, nil
}

// Config returns the configuration in effect, defaults applied.
func (c *Client) Config() Config { return c.cfg }

// Name returns the source name put in events.
func (c *Client) Name() string { return c.cfg.Name }

// Check verifies that the server answers, the credentials are accepted
// and the bucket exists. Refused credentials (ErrAccessDenied) and a
// missing bucket (ErrNoBucket) are Permanent: the daemon should not start;
// an unreachable server is Transient.
func (c *Client) Check(ctx context.Context) error {
	ok, err := c.mc.BucketExists(ctx, c.cfg.Bucket)
	if err != nil {
		e := c.classify("check bucket", "", err)
		if errors.Is(e, ErrAccessDenied) {
			e.Kind = connectors.Permanent
		}
		return e
	}
	if !ok {
		return &connectors.Error{Op: "check bucket", Source: c.cfg.Name, Kind: connectors.Permanent,
			Err: fmt.Errorf("%w: %s", ErrNoBucket, c.cfg.Bucket)}
	}
	return nil
}

// Fetch returns the body of the object key in bucket, at versionID (""
// means the latest version), and its description. The caller closes the
// body. Errors are *connectors.Error: Permanent wrapping
// connectors.ErrObjectMissing for a missing bucket, object or version (or
// a delete marker), Permanent ErrTooLarge over Config.MaxObjectSize,
// Transient for network trouble, an unavailable server or refused
// credentials. Reading the body may fail the same way.
func (c *Client) Fetch(ctx context.Context, bucket, key, versionID string) (io.ReadCloser, ObjectInfo, error) {
	obj, err := c.mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{VersionID: versionID})
	if err != nil {
		return nil, ObjectInfo{}, c.classify("fetch", key, err)
	}
	st, err := obj.Stat() // sends the request
	if err != nil {
		_ = obj.Close()
		return nil, ObjectInfo{}, c.classify("fetch", key, err)
	}
	info := objectInfo(st, false)
	if limit := c.cfg.MaxObjectSize; limit > 0 && info.Size > limit {
		_ = obj.Close()
		return nil, info, c.tooLarge("fetch", key, info.Size)
	}
	return &body{c: c, key: key, obj: obj}, info, nil
}

// openVersion fetches the version an event names. versionID "" or "null"
// can be overwritten in place, so the object's ETag must still be etag.
func (c *Client) openVersion(ctx context.Context, key, versionID, etag string, size int64) (io.ReadCloser, error) {
	if limit := c.cfg.MaxObjectSize; limit > 0 && size > limit {
		return nil, c.tooLarge("open", key, size)
	}
	rc, info, err := c.Fetch(ctx, c.cfg.Bucket, key, versionID)
	if err != nil {
		return nil, err
	}
	if (versionID == "" || versionID == "null") && etag != "" && info.ETag != etag {
		_ = rc.Close()
		return nil, &connectors.Error{Op: "open", Source: c.cfg.Name, Key: key, Kind: connectors.Permanent,
			Err: fmt.Errorf("%w (%w): ETag is now %q, the event had %q; the newer object has its own event",
				connectors.ErrObjectMissing, ErrSuperseded, info.ETag, etag)}
	}
	return rc, nil
}

// current reports whether the object version is still live: the key is
// not deleted or hidden by a delete marker, and the version still exists
// (on an unversioned bucket: the object still has this ETag). It costs one
// HEAD when the version is the latest, two otherwise.
func (c *Client) current(ctx context.Context, key, versionID, etag string) (bool, error) {
	latest, err := c.mc.StatObject(ctx, c.cfg.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if e := c.classify("stat", key, err); !errors.Is(e, connectors.ErrObjectMissing) {
			return false, e
		}
		return false, nil // deleted, or hidden by a delete marker
	}
	if versionID == "" || versionID == "null" {
		return etag == "" || latest.ETag == etag, nil
	}
	if latest.VersionID == versionID {
		return true, nil
	}
	return c.exists(ctx, key, versionID)
}

func (c *Client) tooLarge(op, key string, size int64) error {
	return &connectors.Error{Op: op, Source: c.cfg.Name, Key: key, Kind: connectors.Permanent,
		Err: fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, size, c.cfg.MaxObjectSize)}
}

// body is a fetched object's body: it classifies read errors and enforces
// MaxObjectSize on the bytes actually read.
type body struct {
	c    *Client
	key  string
	obj  *minio.Object
	read int64 // bytes read so far
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.obj.Read(p)
	b.read += int64(n)
	if b.c.cfg.MaxObjectSize > 0 && b.read > b.c.cfg.MaxObjectSize {
		return n, b.c.tooLarge("read", b.key, b.read)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, b.c.classify("read", b.key, err)
	}
	return n, err
}

func (b *body) Close() error { return b.obj.Close() }

// objectInfo converts minio-go's description; listed says whether it came
// from a listing (user metadata still prefixed) or a GET/HEAD (stripped).
func objectInfo(o minio.ObjectInfo, listed bool) ObjectInfo {
	info := ObjectInfo{
		Key:            o.Key,
		VersionID:      o.VersionID,
		ETag:           normalizeETag(o.ETag),
		ContentType:    o.ContentType,
		Size:           o.Size,
		ModTime:        o.LastModified,
		IsDeleteMarker: o.IsDeleteMarker,
		IsLatest:       o.IsLatest,
	}
	if listed {
		info.Metadata, info.ContentType = eventMetadata(o.UserMetadata, info.ContentType)
	} else if len(o.UserMetadata) > 0 {
		info.Metadata = make(map[string]string, len(o.UserMetadata))
		for k, v := range o.UserMetadata {
			info.Metadata[strings.ToLower(k)] = v
		}
	}
	return info
}

// metaPrefix prefixes user metadata names in events and listings.
const metaPrefix = "x-amz-meta-"

// eventMetadata keeps the user metadata of an event or listing ("X-Amz-Meta-"
// names, stripped and lower-cased) and takes the content type from its
// "content-type" entry when contentType is empty. Other entries (standard
// headers MinIO stores alongside) are dropped.
func eventMetadata(m map[string]string, contentType string) (map[string]string, string) {
	var meta map[string]string
	for k, v := range m {
		lk := strings.ToLower(k)
		switch {
		case strings.HasPrefix(lk, metaPrefix) && len(lk) > len(metaPrefix):
			if meta == nil {
				meta = make(map[string]string, len(m))
			}
			meta[lk[len(metaPrefix):]] = v
		case lk == "content-type" && contentType == "":
			contentType = v
		}
	}
	return meta, contentType
}

// normalizeETag strips the quotes S3 puts around ETags.
func normalizeETag(etag string) string { return strings.Trim(etag, `"`) }

// normalizeVersion maps the "null" version of unversioned objects to "".
func normalizeVersion(v string) string {
	if v == "null" {
		return ""
	}
	return v
}

// S3 error codes, grouped by what they mean for a retry.
var (
	missingCodes = map[string]bool{
		"NoSuchKey": true, "NoSuchVersion": true, "NoSuchBucket": true,
		"MethodNotAllowed": true, // the version is a delete marker
	}
	deniedCodes = map[string]bool{
		"AccessDenied": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
		"ExpiredToken": true, "InvalidToken": true, "InvalidClientTokenId": true,
	}
	transientCodes = map[string]bool{
		"SlowDown": true, "SlowDownRead": true, "SlowDownWrite": true, "RequestTimeout": true,
		"RequestTimeTooSkewed": true, "InternalError": true, "ServiceUnavailable": true,
		"XMinioServerNotInitialized": true, "XMinioReadQuorum": true, "XMinioWriteQuorum": true,
		"OperationTimedOut": true, "XMinioAdminClientConnectionTimedOut": true,
	}
)

// classify turns a minio-go error into a *connectors.Error of the right
// kind, wrapping a sentinel where callers need one.
func (c *Client) classify(op, key string, err error) *connectors.Error {
	e := &connectors.Error{Op: op, Source: c.cfg.Name, Key: key, Kind: connectors.Transient, Err: err}
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) || (resp.Code == "" && resp.StatusCode == 0) {
		// Network trouble, a cancelled context, a truncated body.
		return e
	}
	switch {
	case missingCodes[resp.Code] || resp.StatusCode == http.StatusNotFound:
		e.Kind = connectors.Permanent
		e.Err = fmt.Errorf("%w: %w", connectors.ErrObjectMissing, err)
	case isLockedError(resp):
		e.Kind = connectors.Permanent
		e.Err = fmt.Errorf("%w: %w", ErrObjectLocked, err)
	case deniedCodes[resp.Code] || resp.StatusCode == http.StatusForbidden:
		// Credentials and policies can be fixed without the event
		// changing: retry with backoff.
		e.Err = fmt.Errorf("%w: %w", ErrAccessDenied, err)
	case transientCodes[resp.Code] || resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
	default:
		e.Kind = connectors.Permanent
	}
	return e
}

// isLockedError recognises a refusal because of Object Lock: MinIO answers
// InvalidRequest "Object is WORM protected and cannot be overwritten", AWS
// AccessDenied "Access Denied because object protected by object lock".
func isLockedError(resp minio.ErrorResponse) bool {
	msg := strings.ToLower(resp.Message)
	return (resp.Code == "InvalidRequest" && strings.Contains(msg, "worm")) ||
		(resp.Code == "AccessDenied" && strings.Contains(msg, "object lock"))
}

// isVersioned reports whether the bucket keeps versions (Config.Versioned,
// or asked once from the bucket).
func (c *Client) isVersioned(ctx context.Context) (bool, error) {
	if c.cfg.Versioned {
		return true, nil
	}
	c.mu.Lock()
	v := c.versioned
	c.mu.Unlock()
	if v != nil {
		return *v, nil
	}
	vc, err := c.mc.GetBucketVersioning(ctx, c.cfg.Bucket)
	if err != nil {
		return false, c.classify("get bucket versioning", "", err)
	}
	versioned := vc.Enabled() || vc.Suspended()
	c.mu.Lock()
	c.versioned = &versioned
	c.mu.Unlock()
	return versioned, nil
}

// listenIdentity shapes the ListenBucketNotification exchange so that each
// event reaches minio-go as soon as its bytes reach this process.
//
// It asks for an uncompressed stream: MinIO gzips the response when the
// client accepts gzip, and the compressor holds events back until it has a
// block to emit.
//
// It hands the body out one byte per Read. MinIO never flushes the listen
// stream (the pinned release's trackingResponseWriter hides http.Flusher),
// so events leave the server only when its write buffers (about 6 KB) fill,
// in pieces that end in the middle of an HTTP chunk. net/http's chunked
// reader returns only at the end of a chunk or when the caller's buffer is
// full, and minio-go reads with a 4 MB buffer: measured, a listener saw
// none of 1,000 uploads until the connection closed. One byte per Read
// returns every byte as it arrives; it costs a function call per byte
// through a buffered reader (measured in BenchmarkListenBody).
//
// It tells sent of every listen request: minio-go subscribes again by
// itself when a stream ends cleanly (MinIO stopping), and Listen must
// then catch up with what the gap lost.
type listenIdentity struct {
	next http.RoundTripper
	sent chan<- struct{}
}

func (t listenIdentity) RoundTrip(r *http.Request) (*http.Response, error) {
	listen := r.Method == http.MethodGet && r.URL.Query().Has("events")
	if listen {
		r = r.Clone(r.Context())
		r.Header.Set("Accept-Encoding", "identity")
		select {
		case t.sent <- struct{}{}:
		default: // one is pending already
		}
	}
	resp, err := t.next.RoundTrip(r)
	if listen && err == nil {
		resp.Body = byteBody{resp.Body}
	}
	return resp, err
}

// byteBody reads its body one byte per Read (see listenIdentity).
type byteBody struct{ io.ReadCloser }

func (b byteBody) Read(p []byte) (int, error) { return b.ReadCloser.Read(p[:min(len(p), 1)]) }
