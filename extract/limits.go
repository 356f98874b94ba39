package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Limits bounds the work and memory spent on one top-level object and all
// of its descendants. Every field must be positive, except MaxSpoolSize,
// which may be zero. The mapstructure tags name the fields in a
// configuration file.
type Limits struct {
	// MaxObjectSize is the number of raw bytes read from Object.Reader.
	MaxObjectSize int64 `mapstructure:"max_object_size"`
	// MaxDecompressedSize is the total number of bytes decompressed across
	// the whole tree (a DOCX inside a ZIP inside an e-mail counts both the
	// ZIP member and the DOCX parts).
	MaxDecompressedSize int64 `mapstructure:"max_decompressed_size"`
	// MaxCompressionRatio is the largest decompressed/compressed ratio
	// allowed for one compressed member or stream, measured on the bytes
	// actually produced (the first ratioSlack bytes are always allowed).
	MaxCompressionRatio float64 `mapstructure:"max_compression_ratio"`
	// MaxDepth is how deep children may nest below the top object.
	MaxDepth int `mapstructure:"max_depth"`
	// MaxChildren is the number of children in the whole tree.
	MaxChildren int `mapstructure:"max_children"`
	// MaxTextSize is the extracted text kept per document, in bytes.
	MaxTextSize int64 `mapstructure:"max_text_size"`
	// Timeout bounds the extraction of one top-level object.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxSpoolSize is the largest mailbox (PST, OST) read: mailboxes are
	// read in place or from a spool file, never into memory, so they may
	// exceed MaxObjectSize. Zero means MaxObjectSize.
	MaxSpoolSize int64 `mapstructure:"max_spool_size"`
}

// DefaultLimits returns the default limits: 256 MiB objects, 1 GiB
// decompressed per tree, ratio 200, depth 8, 10000 children, 64 MiB of text
// per document, two minutes per object and 64 GiB mailboxes.
func DefaultLimits() Limits {
	return Limits{
		MaxObjectSize:       256 << 20,
		MaxDecompressedSize: 1 << 30,
		MaxCompressionRatio: 200,
		MaxDepth:            8,
		MaxChildren:         10000,
		MaxTextSize:         64 << 20,
		Timeout:             2 * time.Minute,
		MaxSpoolSize:        64 << 30,
	}
}

// MaxFetchSize is the largest object worth fetching for extraction: the
// larger of MaxObjectSize and MaxSpoolSize.
func (l Limits) MaxFetchSize() int64 { return max(l.MaxObjectSize, l.MaxSpoolSize) }

// Validate reports every field that is not positive (or not finite).
func (l Limits) Validate() error {
	var errs []error
	bad := func(field string, v any) {
		errs = append(errs, fmt.Errorf("limits: %s must be > 0, got %v", field, v))
	}
	if l.MaxObjectSize <= 0 {
		bad("MaxObjectSize", l.MaxObjectSize)
	}
	if l.MaxDecompressedSize <= 0 {
		bad("MaxDecompressedSize", l.MaxDecompressedSize)
	}
	if !(l.MaxCompressionRatio > 0) || math.IsInf(l.MaxCompressionRatio, 0) {
		errs = append(errs, fmt.Errorf("limits: MaxCompressionRatio must be a finite number > 0, got %v", l.MaxCompressionRatio))
	}
	if l.MaxDepth <= 0 {
		bad("MaxDepth", l.MaxDepth)
	}
	if l.MaxChildren <= 0 {
		bad("MaxChildren", l.MaxChildren)
	}
	if l.MaxTextSize <= 0 {
		bad("MaxTextSize", l.MaxTextSize)
	}
	if l.Timeout <= 0 {
		bad("Timeout", l.Timeout)
	}
	if l.MaxSpoolSize < 0 {
		errs = append(errs, fmt.Errorf("limits: MaxSpoolSize must be >= 0, got %d", l.MaxSpoolSize))
	}
	return errors.Join(errs...)
}

// ratioSlack is the output every compressed stream may produce whatever
// its ratio: tiny members of repetitive text legitimately compress far
// better than large ones.
const ratioSlack = 1 << 20

// job is the shared state of one top-level extraction: its deadline and
// the budgets every descendant draws from. Counters are atomic because a
// worker abandoned after its deadline may still be running.
type job struct {
	ctx      context.Context
	lim      Limits
	inflated atomic.Int64
	children atomic.Int64
	// mem is charged what the extraction holds (nil: nothing is); stop
	// ends the extraction when it cannot be charged.
	mem  *Account
	stop context.CancelCauseFunc
}

func newJob(ctx context.Context, lim Limits) *job {
	return &job{ctx: ctx, lim: lim, stop: func(error) {}}
}

// charge charges n bytes about to be held to the object's memory
// account; when they cannot be had the whole extraction stops with the
// account's error (ErrMemory), since what it would produce is incomplete.
//
// Once the extraction has ended (an abandoned worker still running), the
// account is left alone: its object may be being read again.
func (j *job) charge(n int64) error {
	if j.ctx.Err() != nil {
		return j.ctxErr()
	}
	if err := j.mem.Charge(j.ctx, n); err != nil {
		j.stop(err)
		return err
	}
	return nil
}

// release records that n bytes charged are no longer held.
func (j *job) release(n int64) {
	if j.ctx.Err() == nil {
		j.mem.Release(n)
	}
}

// ctxErr explains why ctx ended: the object's own Timeout is ErrTimeout; a
// caller's deadline is ErrTimeout too; a caller's cancellation is
// context.Canceled.
func (j *job) ctxErr() error {
	err := j.ctx.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(context.Cause(j.ctx), ErrMemory):
		return context.Cause(j.ctx)
	case errors.Is(context.Cause(j.ctx), errTimeout):
		return fmt.Errorf("%w: extraction took longer than %v", ErrTimeout, j.lim.Timeout)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	default:
		return err
	}
}

// classify turns a parser's error into one that wraps a sentinel: limit
// errors and ctx errors are kept, anything else is ErrMalformed.
func (j *job) classify(err error) error {
	switch {
	case err == nil:
		return nil
	case isSentinel(err):
		return err
	case j.ctx.Err() != nil:
		return j.ctxErr()
	default:
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
}

func isSentinel(err error) bool {
	for _, s := range []error{ErrTooLarge, ErrBomb, ErrTooDeep, ErrTooManyChildren, ErrTimeout, ErrEncrypted, ErrMalformed, ErrUnsupported, ErrMemory, context.Canceled} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// inflate wraps r, the decompressed side of a stream whose compressed size
// is compressed, so that it fails with ErrBomb once the stream breaks the
// ratio or the tree breaks its decompression budget, and with the ctx
// error once the deadline passes. What is decompressed is read whole by
// readAllHint, which charges it to the object's memory account.
func (j *job) inflate(r io.Reader, compressed int64) io.Reader {
	return &inflater{j: j, r: r, compressed: max(compressed, 1)}
}

type inflater struct {
	j          *job
	r          io.Reader
	compressed int64
	n          int64
	err        error
}

func (f *inflater) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if err := f.j.ctx.Err(); err != nil {
		f.err = f.j.ctxErr()
		return 0, f.err
	}
	n, err := f.r.Read(p)
	f.n += int64(n)
	if f.n > ratioSlack && float64(f.n) > f.j.lim.MaxCompressionRatio*float64(f.compressed) {
		f.err = fmt.Errorf("%w: stream expands beyond ratio %g:1 (%d bytes from %d)", ErrBomb, f.j.lim.MaxCompressionRatio, f.n, f.compressed)
		return n, f.err
	}
	if total := f.j.inflated.Add(int64(n)); total > f.j.lim.MaxDecompressedSize {
		f.err = fmt.Errorf("%w: tree decompresses to more than MaxDecompressedSize (%d bytes)", ErrBomb, f.j.lim.MaxDecompressedSize)
		return n, f.err
	}
	return n, err
}

// checkDeclared rejects a member before decompressing it when its declared
// size already breaks the ratio or the remaining budget.
func (j *job) checkDeclared(declared, compressed int64) error {
	if declared > ratioSlack && float64(declared) > j.lim.MaxCompressionRatio*float64(max(compressed, 1)) {
		return fmt.Errorf("%w: declared size %d from %d compressed bytes exceeds ratio %g:1", ErrBomb, declared, compressed, j.lim.MaxCompressionRatio)
	}
	if declared > j.lim.MaxDecompressedSize-j.inflated.Load() {
		return fmt.Errorf("%w: declared size %d exceeds the remaining decompression budget", ErrBomb, declared)
	}
	return nil
}

// readAllHint reads r to EOF, preallocating size bytes when that is a
// plausible hint. Each allocation is charged to the object's memory
// account before it is made (what it reads is held: a member read whole,
// a decompressed stream); whoever drops the bytes releases cap of them.
func (j *job) readAllHint(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > j.lim.MaxDecompressedSize-j.inflated.Load() {
		size = 0
	}
	if err := j.charge(size + 512); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, size+512)
	for {
		if len(buf) == cap(buf) {
			// The old buffer is dropped once copied: charged is the new.
			grown := int64(cap(buf)) + int64(cap(buf))/2
			if err := j.charge(grown - int64(cap(buf))); err != nil {
				return buf, err
			}
			nb := make([]byte, len(buf), grown)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// textBuf accumulates a document's text up to MaxTextSize bytes.
type textBuf struct {
	b    []byte
	max  int
	over bool
}

func (t *textBuf) full() bool { return t.over }

func (t *textBuf) room(n int) int {
	if t.over {
		return 0
	}
	if len(t.b)+n <= t.max {
		return n
	}
	t.over = true
	return t.max - len(t.b)
}

// addString appends s, truncating at a rune boundary at the limit.
func (t *textBuf) addString(s string) {
	if n := t.room(len(s)); n < len(s) {
		s = s[:n]
		for len(s) > 0 {
			if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
				break
			}
			s = s[:len(s)-1]
		}
	}
	t.b = append(t.b, s...)
}

// add appends p like addString.
func (t *textBuf) add(p []byte) {
	if n := t.room(len(p)); n < len(p) {
		p = p[:n]
		for len(p) > 0 {
			if r, size := utf8.DecodeLastRune(p); r != utf8.RuneError || size > 1 {
				break
			}
			p = p[:len(p)-1]
		}
	}
	t.b = append(t.b, p...)
}

// addByte appends an ASCII byte.
func (t *textBuf) addByte(c byte) {
	if t.room(1) == 1 {
		t.b = append(t.b, c)
	}
}

// last returns the last byte written, or '\n' at the start.
func (t *textBuf) last() byte {
	if len(t.b) == 0 {
		return '\n'
	}
	return t.b[len(t.b)-1]
}

// space separates words: a space unless the text is empty or already
// ends in white space.
func (t *textBuf) space() {
	if c := t.last(); c != ' ' && c != '\n' && c != '\t' {
		t.addByte(' ')
	}
}

// newline ends a line unless the text is empty or already ends one; a
// trailing space is replaced.
func (t *textBuf) newline() {
	for len(t.b) > 0 && (t.b[len(t.b)-1] == ' ' || t.b[len(t.b)-1] == '\t') {
		t.b = t.b[:len(t.b)-1]
	}
	if t.last() != '\n' {
		t.addByte('\n')
	}
}

// String returns the text.
func (t *textBuf) String() string { return string(t.b) }

// Len returns the number of bytes written.
func (t *textBuf) Len() int { return len(t.b) }
