package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/policy"
)

// s3Enforcer is the daemon's policy.Enforcer: it enforces holds and
// deletions with S3 Object Lock through the daemon's S3 connectors. Its
// credentials need s3:PutObjectLegalHold, s3:GetObjectLegalHold,
// s3:ListBucketVersions and s3:DeleteObjectVersion; nothing here turns a
// legal hold off (see docs/policy.md for the bucket policy).
type s3Enforcer struct {
	// Client returns the connector client of an object's source and
	// bucket, or false when there is none.
	Client func(source, bucket string) (*s3.Client, bool)
}

func (s *s3Enforcer) client(o policy.Object) (*s3.Client, error) {
	if o.Bucket == "" || s.Client == nil {
		return nil, fmt.Errorf("%w: %s is not an S3 object", policy.ErrNotEnforceable, o)
	}
	c, ok := s.Client(o.Source, o.Bucket)
	if !ok {
		return nil, fmt.Errorf("%w: no S3 client for %s bucket %s", policy.ErrNotEnforceable, o.Source, o.Bucket)
	}
	return c, nil
}

// HoldAll implements policy.Enforcer: every version of o.Key (delete markers
// aside) gets its legal hold turned on. A bucket without Object Lock
// fails with policy.ErrObjectLockDisabled.
func (s *s3Enforcer) HoldAll(ctx context.Context, o policy.Object) ([]string, error) {
	c, err := s.client(o)
	if err != nil {
		return nil, err
	}
	vs, err := c.Versions(ctx, o.Key)
	if err != nil {
		return nil, fmt.Errorf("list versions of %s: %w", o.Key, err)
	}
	var held []string
	var errs []error
	for _, v := range vs {
		if v.IsDeleteMarker {
			continue
		}
		if err := c.SetLegalHold(ctx, o.Key, v.VersionID); err != nil {
			if errors.Is(err, s3.ErrLockNotEnabled) {
				// No version of the bucket can ever be held.
				return held, fmt.Errorf("%w on bucket %s: %w", policy.ErrObjectLockDisabled, o.Bucket, err)
			}
			errs = append(errs, fmt.Errorf("hold %s@%s: %w", o.Key, v.VersionID, err))
			continue
		}
		held = append(held, v.VersionID)
	}
	return held, errors.Join(errs...)
}

// Held implements policy.Enforcer.
func (s *s3Enforcer) Held(ctx context.Context, o policy.Object) (bool, error) {
	c, err := s.client(o)
	if err != nil {
		return false, err
	}
	if o.VersionID == "" {
		return false, fmt.Errorf("%w: %s has no version id", policy.ErrNotEnforceable, o)
	}
	on, err := c.LegalHold(ctx, o.Key, o.VersionID)
	if err != nil {
		return false, fmt.Errorf("read legal hold of %s: %w", o, err)
	}
	return on, nil
}

// Delete implements policy.Enforcer: exactly o.VersionID is deleted; a version
// under legal hold or retention is refused by S3 (policy.ErrLegalHold).
func (s *s3Enforcer) Delete(ctx context.Context, o policy.Object) error {
	c, err := s.client(o)
	if err != nil {
		return err
	}
	if o.VersionID == "" {
		return fmt.Errorf("%w: %s has no version id; only exact versions are deleted", policy.ErrNotEnforceable, o)
	}
	if err := c.DeleteVersion(ctx, o.Key, o.VersionID); err != nil {
		if errors.Is(err, s3.ErrObjectLocked) {
			return fmt.Errorf("%w: %w", policy.ErrLegalHold, err)
		}
		return fmt.Errorf("delete %s: %w", o, err)
	}
	return nil
}
