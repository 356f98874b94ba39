package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"

	natsconn "github.com/simdex/simdex/connectors/nats"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// originEnforcer is the daemon's policy.Enforcer: it hands each object to
// the enforcer of its source. S3 objects (and anything it does not know)
// go to S3 Object Lock, files of a watched folder to fsEnforcer, and NATS
// messages that carried their body, whose bytes only simdex holds, to
// indexPurger.
type originEnforcer struct {
	s3     *s3Enforcer
	fs     *fsEnforcer
	purger *indexPurger
	// Lookup returns the current versions of an index key.
	Lookup func(ctx context.Context, key string) ([]*index.Record, error)
}

func (e *originEnforcer) of(ctx context.Context, o policy.Object) (policy.Enforcer, error) {
	if _, ok := e.fs.Roots[o.Source]; ok {
		return e.fs, nil
	}
	if !strings.HasPrefix(o.Source, "nats:") {
		return e.s3, nil
	}
	rec, err := indexed(ctx, e.Lookup, o)
	if err != nil {
		return nil, err
	}
	if _, ref := rec.OriginMeta()[natsconn.HeaderRef]; ref {
		return e.s3, nil // its bytes are in a bucket simdex reads, not deletes through NATS
	}
	return e.purger, nil
}

// HoldAll implements policy.Enforcer.
func (e *originEnforcer) HoldAll(ctx context.Context, o policy.Object) ([]string, error) {
	enf, err := e.of(ctx, o)
	if err != nil {
		return nil, err
	}
	return enf.HoldAll(ctx, o)
}

// Held implements policy.Enforcer.
func (e *originEnforcer) Held(ctx context.Context, o policy.Object) (bool, error) {
	enf, err := e.of(ctx, o)
	if err != nil {
		return false, err
	}
	return enf.Held(ctx, o)
}

// Delete implements policy.Enforcer.
func (e *originEnforcer) Delete(ctx context.Context, o policy.Object) error {
	enf, err := e.of(ctx, o)
	if err != nil {
		return err
	}
	return enf.Delete(ctx, o)
}

// indexed returns the indexed version of o: policy.ErrGone when its key
// has no version in the index, policy.ErrStale when it has others only.
func indexed(ctx context.Context, lookup func(context.Context, string) ([]*index.Record, error), o policy.Object) (*index.Record, error) {
	rs, err := lookup(ctx, o.IndexKey)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", o, err)
	}
	for _, r := range rs {
		if r.VersionID == o.VersionID && r.Parent == 0 {
			return r, nil
		}
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%w: %s is no longer in the index", policy.ErrGone, o)
	}
	return nil, fmt.Errorf("%w: the index now has another version of %s", policy.ErrStale, o)
}

// fsEnforcer deletes the files of watched folders. A file cannot be
// locked: HoldAll fails with policy.ErrCannotLock, so that a hold on one
// is flagged hold-unenforced. Delete removes a file only while it is the
// version indexed: the same size, modification time and SHA-256.
type fsEnforcer struct {
	// Roots maps a watched folder's source name ("fs:" + folder) to the
	// folder.
	Roots map[string]string
	// Lookup returns the current versions of an index key.
	Lookup func(ctx context.Context, key string) ([]*index.Record, error)
}

// HoldAll implements policy.Enforcer: a watched folder cannot lock a file.
func (s *fsEnforcer) HoldAll(_ context.Context, o policy.Object) ([]string, error) {
	return nil, fmt.Errorf("%w: %s is a watched folder, whose files cannot be locked", policy.ErrCannotLock, o.Source)
}

// Held implements policy.Enforcer: no file is ever held at its origin.
func (s *fsEnforcer) Held(context.Context, policy.Object) (bool, error) { return false, nil }

// Delete implements policy.Enforcer: o's file is removed if it is still
// the version indexed, else policy.ErrStale; a file no longer there is
// policy.ErrGone. The folder is opened as an os.Root: no key reaches
// outside it.
func (s *fsEnforcer) Delete(ctx context.Context, o policy.Object) error {
	dir, ok := s.Roots[o.Source]
	if !ok {
		return fmt.Errorf("%w: %s is not a watched folder", policy.ErrNotEnforceable, o.Source)
	}
	rec, err := indexed(ctx, s.Lookup, o)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open watched folder %s: %w", dir, err)
	}
	defer root.Close()
	if err := sameFile(root, o, rec); err != nil {
		return err
	}
	if err := root.Remove(o.Key); err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("%w: %s: %w", policy.ErrGone, o, err)
		}
		return fmt.Errorf("remove %s: %w", o, err)
	}
	return nil
}

// sameFile checks that o's file under root is rec: its size and
// modification time before and after hashing it, and its SHA-256.
func sameFile(root *os.Root, o policy.Object, rec *index.Record) error {
	f, err := root.Open(o.Key)
	if errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("%w: %s is no longer in its folder", policy.ErrGone, o)
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", o, err)
	}
	defer f.Close()
	if err := sameStat(f.Stat, o, rec); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", o, err)
	}
	if [32]byte(h.Sum(nil)) != rec.RawSHA256 {
		return fmt.Errorf("%w: %s has another SHA-256 than the one indexed", policy.ErrStale, o)
	}
	// Written to while it was read?
	return sameStat(func() (iofs.FileInfo, error) { return root.Stat(o.Key) }, o, rec)
}

// sameStat checks that stat reports rec's size and modification time.
func sameStat(stat func() (iofs.FileInfo, error), o policy.Object, rec *index.Record) error {
	info, err := stat()
	if errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("%w: %s is no longer in its folder", policy.ErrGone, o)
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", o, err)
	}
	switch {
	case !info.Mode().IsRegular():
		return fmt.Errorf("%w: %s is no longer a regular file", policy.ErrStale, o)
	case info.Size() != rec.RawSize:
		return fmt.Errorf("%w: %s is %d bytes, %d indexed", policy.ErrStale, o, info.Size(), rec.RawSize)
	case !info.ModTime().Equal(rec.ModTime):
		return fmt.Errorf("%w: %s was modified at %s, indexed as of %s", policy.ErrStale, o, info.ModTime().UTC(), rec.ModTime.UTC())
	}
	return nil
}

// indexPurger disposes of documents whose bytes only simdex holds (NATS
// messages that carried their body): deleting one removes it from the
// index. Nothing can lock them elsewhere; the store's holds keep them.
type indexPurger struct {
	// Remove deletes a document version from the index, with its children.
	Remove func(ctx context.Context, key, versionID string) ([]index.DocID, error)
}

// HoldAll implements policy.Enforcer: there is no origin to lock.
func (s *indexPurger) HoldAll(_ context.Context, o policy.Object) ([]string, error) {
	return nil, fmt.Errorf("%w: %s has no origin but simdex", policy.ErrNotEnforceable, o)
}

// Held implements policy.Enforcer: no origin holds it.
func (s *indexPurger) Held(context.Context, policy.Object) (bool, error) { return false, nil }

// Delete implements policy.Enforcer: the version leaves the index.
func (s *indexPurger) Delete(ctx context.Context, o policy.Object) error {
	if o.VersionID == "" {
		return fmt.Errorf("%w: %s has no version; only exact versions are purged", policy.ErrNotEnforceable, o)
	}
	ids, err := s.Remove(ctx, o.IndexKey, o.VersionID)
	if err != nil {
		return fmt.Errorf("purge %s from the index: %w", o, err)
	}
	if len(ids) == 0 {
		return fmt.Errorf("%w: %s is no longer in the index", policy.ErrGone, o)
	}
	return nil
}
