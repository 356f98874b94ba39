package s3

import (
	"context"
	"errors"
	"fmt"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/connectors"
)

// Object Lock primitives for the policy engine. Holds protect versions, not
// keys, so every function takes an exact version id. There is deliberately
// no function that turns a legal hold off: see POLICY.md.

// lockEnabled reports ErrLockNotEnabled unless the bucket has an Object
// Lock configuration. A positive answer is cached: object lock cannot be
// disabled once enabled.
func (c *Client) lockEnabled(ctx context.Context, op string) error {
	c.mu.Lock()
	locked := c.locked
	c.mu.Unlock()
	if locked {
		return nil
	}
	enabled, _, _, _, err := c.mc.GetObjectLockConfig(ctx, c.cfg.Bucket)
	if err != nil {
		var resp minio.ErrorResponse
		if errors.As(err, &resp) && resp.Code == "ObjectLockConfigurationNotFoundError" {
			return &connectors.Error{Op: op, Source: c.cfg.Name, Kind: connectors.Permanent,
				Err: fmt.Errorf("%w: %s", ErrLockNotEnabled, c.cfg.Bucket)}
		}
		return c.classify(op+": get object lock configuration", "", err)
	}
	if enabled != "Enabled" {
		return &connectors.Error{Op: op, Source: c.cfg.Name, Kind: connectors.Permanent,
			Err: fmt.Errorf("%w: %s (object lock is %q)", ErrLockNotEnabled, c.cfg.Bucket, enabled)}
	}
	c.mu.Lock()
	c.locked = true
	c.mu.Unlock()
	return nil
}

func (c *Client) needVersion(op, key, versionID string) error {
	if versionID != "" {
		return nil
	}
	return &connectors.Error{Op: op, Source: c.cfg.Name, Key: key, Kind: connectors.Invalid,
		Err: fmt.Errorf("%w: holds and deletions address one version (use \"null\" for the null version)", ErrVersionRequired)}
}

// SetLegalHold turns the legal hold of one object version ON. It is
// idempotent. It fails with ErrLockNotEnabled on a bucket without Object
// Lock, ErrVersionRequired for an empty versionID, and
// connectors.ErrObjectMissing for a missing version.
func (c *Client) SetLegalHold(ctx context.Context, key, versionID string) error {
	const op = "set legal hold"
	if err := c.needVersion(op, key, versionID); err != nil {
		return err
	}
	if err := c.lockEnabled(ctx, op); err != nil {
		return err
	}
	on := minio.LegalHoldEnabled
	err := c.mc.PutObjectLegalHold(ctx, c.cfg.Bucket, key, minio.PutObjectLegalHoldOptions{VersionID: versionID, Status: &on})
	if err != nil {
		return c.classify(op, key, err)
	}
	return nil
}

// LegalHold reports whether the legal hold of one object version is ON. A
// version whose hold was never set reports false. Callers that delete must
// treat an error as "held" (when hold state cannot be read, nothing is
// deleted).
func (c *Client) LegalHold(ctx context.Context, key, versionID string) (bool, error) {
	const op = "get legal hold"
	if err := c.needVersion(op, key, versionID); err != nil {
		return false, err
	}
	if err := c.lockEnabled(ctx, op); err != nil {
		return false, err
	}
	st, err := c.mc.GetObjectLegalHold(ctx, c.cfg.Bucket, key, minio.GetObjectLegalHoldOptions{VersionID: versionID})
	if err != nil {
		var resp minio.ErrorResponse
		if errors.As(err, &resp) && resp.Code == "NoSuchObjectLockConfiguration" {
			return false, nil // no hold was ever placed on this version
		}
		return false, c.classify(op, key, err)
	}
	return st != nil && *st == minio.LegalHoldEnabled, nil
}

// Versions returns every version of key, delete markers included, newest
// first, with version ids as the store reports them ("null" for the null
// version).
func (c *Client) Versions(ctx context.Context, key string) ([]ObjectInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	var vs []ObjectInfo
	opts := minio.ListObjectsOptions{Prefix: key, Recursive: true, WithVersions: true, WithMetadata: true}
	objects := c.mc.ListObjects(ctx, c.cfg.Bucket, opts)
	defer stopListing(cancel, objects)
	for o := range objects {
		if o.Err != nil {
			return nil, c.classify("list versions", key, o.Err)
		}
		if o.Key == key {
			vs = append(vs, objectInfo(o, true))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, &connectors.Error{Op: "list versions", Source: c.cfg.Name, Key: key, Kind: connectors.Transient, Err: err}
	}
	return vs, nil
}

// DeleteVersion permanently deletes exactly one version of key, never
// bypassing governance retention. On a versioned bucket an empty versionID
// is refused (ErrVersionRequired) rather than turned into a delete marker;
// on an unversioned bucket "" deletes the object, whatever it now holds. A
// held or retained version fails with ErrObjectLocked. Deleting a version
// that does not exist succeeds, as S3 does.
func (c *Client) DeleteVersion(ctx context.Context, key, versionID string) error {
	const op = "delete version"
	if versionID == "" {
		versioned, err := c.isVersioned(ctx)
		if err != nil {
			return err
		}
		if versioned {
			return c.needVersion(op, key, versionID)
		}
	}
	if err := c.mc.RemoveObject(ctx, c.cfg.Bucket, key, minio.RemoveObjectOptions{VersionID: versionID}); err != nil {
		return c.classify(op, key, err)
	}
	return nil
}
