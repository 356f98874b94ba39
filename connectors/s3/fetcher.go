package s3

import (
	"context"
	"io"

	"github.com/simdex/simdex/connectors/nats"
)

// RefFetcher adapts a Client to nats.Fetcher, so that NATS reference
// messages (Simdex-Ref: s3://bucket/key?versionId=V) are fetched with this
// client's endpoint and credentials.
type RefFetcher struct {
	Client *Client
}

var _ nats.Fetcher = RefFetcher{}

// Fetch calls Client.Fetch and converts the object's description.
func (f RefFetcher) Fetch(ctx context.Context, bucket, key, versionID string) (io.ReadCloser, nats.ObjectInfo, error) {
	rc, info, err := f.Client.Fetch(ctx, bucket, key, versionID)
	if err != nil {
		return nil, nats.ObjectInfo{}, err
	}
	return rc, nats.ObjectInfo{
		Size:        info.Size,
		ETag:        info.ETag,
		ContentType: info.ContentType,
		VersionID:   normalizeVersion(info.VersionID),
		Metadata:    info.Metadata,
		ModTime:     info.ModTime,
	}, nil
}
