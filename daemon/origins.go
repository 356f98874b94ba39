package daemon

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/simdex/simdex/connectors"
	fsconn "github.com/simdex/simdex/connectors/fs"
	natsconn "github.com/simdex/simdex/connectors/nats"
	s3conn "github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/ingest"
)

// bucketOrigin opens an S3 connector's objects again, by "bucket/key"
// and version, with the connector's client (s3:GetObject and
// s3:GetObjectVersion).
type bucketOrigin struct{ client *s3conn.Client }

// Reopen implements ingest.Origin.
func (o bucketOrigin) Reopen(ctx context.Context, loc ingest.Location) (io.ReadCloser, string, error) {
	bucket, key, ok := strings.Cut(loc.Name, "/")
	if !ok {
		return nil, "", &connectors.Error{Op: "open", Key: loc.Name, Kind: connectors.Invalid, Err: fmt.Errorf("%q names no bucket and key", loc.Name)}
	}
	return reopen(ctx, o.client, bucket, key, loc.VersionID)
}

// reopen fetches an object version with c: its body and declared type.
func reopen(ctx context.Context, c *s3conn.Client, bucket, key, versionID string) (io.ReadCloser, string, error) {
	rc, info, err := c.Fetch(ctx, bucket, key, versionID)
	if err != nil {
		return nil, "", err
	}
	return rc, info.ContentType, nil
}

// folderOrigin opens a watched folder's files again.
type folderOrigin struct{ src *fsconn.Source }

// Reopen implements ingest.Origin.
func (o folderOrigin) Reopen(ctx context.Context, loc ingest.Location) (io.ReadCloser, string, error) {
	return o.src.Reopen(ctx, loc.Name, loc.VersionID)
}

// referenceOrigin opens again the S3 object a NATS reference message
// named (its Simdex-Ref, kept in the document's metadata), through the S3
// connector of its bucket. A message that carried its body has no origin.
type referenceOrigin struct{ buckets bucketFetcher }

// Reopen implements ingest.Origin.
func (o referenceOrigin) Reopen(ctx context.Context, loc ingest.Location) (io.ReadCloser, string, error) {
	ref, ok := loc.Meta[natsconn.HeaderRef]
	if !ok {
		return nil, "", fmt.Errorf("%w: the NATS message carried its body, which is not kept", ingest.ErrNoOrigin)
	}
	bucket, key, version, err := natsconn.ParseRef(ref)
	if err != nil {
		return nil, "", &connectors.Error{Op: "open", Key: loc.Name, Kind: connectors.Invalid, Err: err}
	}
	c, err := o.buckets.client(bucket, key)
	if err != nil {
		return nil, "", err
	}
	return reopen(ctx, c, bucket, key, version)
}

// origins returns where the review API reads a document again when the
// index keeps no text (index.keep_text: false): the S3 connectors, the
// watched folders, and the buckets NATS reference messages name.
func (p *parts) origins() map[string]ingest.Origin {
	out := map[string]ingest.Origin{}
	for _, b := range p.buckets {
		out[b.source] = bucketOrigin{b.client}
	}
	for _, s := range p.sources {
		if src, ok := s.src.(*fsconn.Source); ok {
			out[s.name] = folderOrigin{src}
		} else if strings.HasPrefix(s.name, "nats:") {
			out[s.name] = referenceOrigin{bucketFetcher(p.buckets)}
		}
	}
	return out
}
