package daemon

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/simdex/simdex/connectors"
	fsconn "github.com/simdex/simdex/connectors/fs"
	s3conn "github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/ingest"
)

// bucketOrigin opens an S3 connector's objects again, by "bucket/key"
// and version, with the connector's client (s3:GetObject and
// s3:GetObjectVersion).
type bucketOrigin struct{ client *s3conn.Client }

// Reopen implements ingest.Origin.
func (o bucketOrigin) Reopen(ctx context.Context, name, versionID string) (io.ReadCloser, string, error) {
	bucket, key, ok := strings.Cut(name, "/")
	if !ok {
		return nil, "", &connectors.Error{Op: "open", Key: name, Kind: connectors.Invalid, Err: fmt.Errorf("%q names no bucket and key", name)}
	}
	rc, info, err := o.client.Fetch(ctx, bucket, key, versionID)
	if err != nil {
		return nil, "", err
	}
	return rc, info.ContentType, nil
}

// origins returns where the review API reads a document again when the
// index keeps no text (index.keep_text: false): the S3 connectors and the
// watched folders. NATS messages carry their bodies and cannot be read
// again.
func (p *parts) origins() map[string]ingest.Origin {
	out := map[string]ingest.Origin{}
	for _, b := range p.buckets {
		out[b.source] = bucketOrigin{b.client}
	}
	for _, s := range p.sources {
		if f, ok := s.src.(*fsconn.Source); ok {
			out[s.name] = f
		}
	}
	return out
}
