package extract

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// Mailboxes (PST, OST) are read by random access and may be far larger
// than memory, so they are never read into memory like other objects: a
// reader that has random access and a known size (*os.File, bytes.Reader)
// is read in place, and a stream (an S3 body, a pipe) is first written to
// a spool file in a private directory that is removed when the extraction
// ends. Both are bounded by Limits.MaxSpoolSize instead of MaxObjectSize.

// spoolBuffer is the copy buffer of a spool.
const spoolBuffer = 1 << 20

// sizedReaderAt is a reader with random access and a known size.
type sizedReaderAt interface {
	io.ReaderAt
	Size() int64
}

// mailbox extracts obj if it is a mailbox; otherwise it returns a nil
// Document and the reader to read obj from (obj.Reader, or a reader that
// puts back the bytes peeked at).
func (x *Extractor) mailbox(ctx context.Context, obj Object, path []string) (*Document, io.Reader) {
	r := obj.Reader
	if ra, size, ok := randomAccess(r); ok {
		head := make([]byte, len(magicPST))
		if n, _ := ra.ReadAt(head, 0); n < len(head) || !bytes.Equal(head, magicPST) {
			return nil, r
		}
		return x.extractAt(ctx, obj, path, ra, size, nil), nil
	}
	if b, ok := r.(interface{ Bytes() []byte }); ok { // bytes.Buffer: peek without reading
		if !bytes.HasPrefix(b.Bytes(), magicPST) {
			return nil, r
		}
		return x.extractAt(ctx, obj, path, bytes.NewReader(b.Bytes()), int64(len(b.Bytes())), nil), nil
	}
	head := make([]byte, len(magicPST))
	n, err := io.ReadFull(r, head)
	var rest io.Reader = bytes.NewReader(head[:n])
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, rest
	case err != nil:
		return nil, io.MultiReader(rest, errReader{err})
	case !bytes.Equal(head, magicPST):
		return nil, io.MultiReader(rest, r)
	}
	return x.spooled(ctx, obj, path, io.MultiReader(rest, r)), nil
}

// randomAccess returns r's random access and size when r has both and has
// not been read yet.
func randomAccess(r io.Reader) (io.ReaderAt, int64, bool) {
	switch r := r.(type) {
	case *os.File:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return nil, 0, false
		}
		if off, err := r.Seek(0, io.SeekCurrent); err != nil || off != 0 {
			return nil, 0, false
		}
		return r, fi.Size(), true
	case sizedReaderAt:
		if l, ok := r.(interface{ Len() int }); ok && int64(l.Len()) != r.Size() {
			return nil, 0, false
		}
		return r, r.Size(), true
	}
	return nil, 0, false
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// spoolLimit is the largest mailbox read.
func (x *Extractor) spoolLimit() int64 {
	if x.lim.MaxSpoolSize > 0 {
		return x.lim.MaxSpoolSize
	}
	return x.lim.MaxObjectSize
}

// spooled writes r to a spool file and extracts it from there.
func (x *Extractor) spooled(ctx context.Context, obj Object, path []string, r io.Reader) *Document {
	sp, err := newSpool(x.spoolDir)
	if err != nil {
		d := &Document{Name: obj.Name, Path: path, MediaType: mediaPST}
		d.Err = &Error{Format: "pst", Op: "spool", Err: err}
		return d
	}
	defer sp.remove()
	size, sum, err := sp.fill(ctx, r, x.spoolLimit())
	if err != nil {
		d := &Document{Name: obj.Name, Path: path, MediaType: mediaPST, Size: size}
		j := newJob(ctx, x.lim)
		switch {
		case errors.Is(err, ErrTooLarge):
			d.setExtra("truncated", "true")
		case ctx.Err() != nil:
			err = j.ctxErr()
		}
		d.Err = &Error{Format: "pst", Op: "spool", Err: err}
		return d
	}
	return x.extractAt(ctx, obj, path, sp.f, size, &sum)
}

// spool is a file holding one object, in a directory of its own that
// only this process's user can read.
type spool struct {
	dir string
	f   *os.File
}

func newSpool(parent string) (*spool, error) {
	if parent == "" {
		parent = os.TempDir()
	} else if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("create spool directory: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "simdex-spool-")
	if err != nil {
		return nil, fmt.Errorf("create spool directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "object"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("create spool file: %w", err)
	}
	return &spool{dir: dir, f: f}, nil
}

// fill copies r into the spool, hashing it, up to limit bytes: more is
// ErrTooLarge.
func (s *spool) fill(ctx context.Context, r io.Reader, limit int64) (int64, [32]byte, error) {
	var sum [32]byte
	h := sha256.New()
	n, err := io.CopyBuffer(s.f, io.TeeReader(io.LimitReader(ctxReader{ctx, r}, limit+1), h), make([]byte, spoolBuffer))
	switch {
	case err != nil:
		return n, sum, fmt.Errorf("copy to spool: %w", err)
	case n > limit:
		return limit, sum, fmt.Errorf("%w: mailbox exceeds MaxSpoolSize (%d bytes)", ErrTooLarge, limit)
	}
	h.Sum(sum[:0])
	return n, sum, nil
}

// remove closes and deletes the spool.
func (s *spool) remove() {
	_ = s.f.Close()
	_ = os.RemoveAll(s.dir)
}

// ctxReader fails reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// extractAt extracts the mailbox ra of the given size; sum is its hash
// when known (else it is computed). Like Extract, it abandons a worker
// still running a grace period after the deadline.
func (x *Extractor) extractAt(ctx context.Context, obj Object, path []string, ra io.ReaderAt, size int64, sum *[32]byte) *Document {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	j := newJob(ctx, x.lim)
	j.mem, j.stop = obj.Memory, stop // the items' texts, not the mailbox
	base := Document{Name: obj.Name, Path: path, MediaType: mediaPST, Size: size}
	if size > x.spoolLimit() {
		base.setExtra("truncated", "true")
		base.Err = &Error{Format: "pst", Op: "read", Err: fmt.Errorf("%w: mailbox exceeds MaxSpoolSize (%d bytes)", ErrTooLarge, x.spoolLimit())}
		return &base
	}
	done := make(chan *Document, 1)
	go func() {
		d := base
		p := &parser{j: j, d: &d, format: "pst", declared: obj.ContentType, text: textBuf{max: int(min(x.lim.MaxTextSize, math.MaxInt))}}
		p.run(kind{format: "pst", media: mediaPST, parse: func(p *parser, _ []byte) {
			if sum != nil {
				d.SHA256 = *sum
			} else if err := hashAt(ctx, ra, size, &d.SHA256); err != nil {
				p.fail("read", err)
				return
			}
			readPST(p, ra, size)
		}}, nil)
		done <- &d
	}()
	select {
	case d := <-done:
		return d
	case <-ctx.Done():
	}
	t := time.NewTimer(x.grace)
	defer t.Stop()
	select {
	case d := <-done:
		return d
	case <-t.C:
		base.Err = &Error{Format: "pst", Op: "extract", Err: j.ctxErr()}
		return &base
	}
}

// hashAt hashes the size bytes of ra into sum.
func hashAt(ctx context.Context, ra io.ReaderAt, size int64, sum *[32]byte) error {
	h := sha256.New()
	buf := make([]byte, min(max(size, 512), spoolBuffer))
	if _, err := io.CopyBuffer(h, ctxReader{ctx, io.NewSectionReader(ra, 0, size)}, buf); err != nil {
		return fmt.Errorf("hash mailbox: %w", err)
	}
	h.Sum(sum[:0])
	return nil
}
