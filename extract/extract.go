package extract

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Object is one object to extract.
type Object struct {
	// Name is the file name or key; a hint only — the type is sniffed
	// from the content.
	Name string
	// ContentType is the declared type; it may be wrong or empty.
	ContentType string
	// Reader is the content. Extract reads at most Limits.MaxObjectSize+1
	// bytes from it (a mailbox, MaxSpoolSize+1: see Limits.MaxSpoolSize)
	// and does not close it.
	Reader io.Reader
	// Memory, when set, is charged the bytes the extraction holds: the
	// object read into memory, what is decompressed from it and the
	// texts made (see Budget). The texts stay charged: the caller
	// releases them with the account once it drops the Document.
	Memory *Account
}

// Document is an extracted document: an object or one of its children
// (attachment, archive member).
type Document struct {
	// Name is the child's name within its parent (member path,
	// attachment filename), or the object's name.
	Name string
	// MediaType is the sniffed media type, e.g. "application/pdf",
	// "message/rfc822", "text/plain".
	MediaType string
	// Path is the location from the top object: [top name, member,
	// attachment, ...].
	Path []string
	// Text is the extracted UTF-8 text (visible text only for markup).
	Text string
	// Meta is the document's metadata.
	Meta Metadata
	// SHA256 is the hash of this document's raw bytes; zero when they
	// could not all be read.
	SHA256 [32]byte
	// Size is the raw size in bytes (what was read, when the read failed).
	Size int64
	// Children are the attachments, archive members and embedded objects,
	// in the order they appear.
	Children []*Document
	// Err is non-nil when this document could not be (fully) extracted:
	// a *Error wrapping one of the sentinel errors.
	Err error
}

// Metadata is what a document says about itself.
type Metadata struct {
	Title, Author, From           string
	To, Cc                        []string
	Subject, MessageID, InReplyTo string
	Created, Modified, Date       time.Time
	// Extra holds anything else worth keeping, e.g. "pages", "charset",
	// "sheet names", "encrypted".
	Extra map[string]string
}

// Options configures an Extractor; it is the extract section of a
// configuration file, Limits' keys at its top level.
type Options struct {
	// Limits bounds the work done per object; every field must be set
	// (start from DefaultLimits).
	Limits `mapstructure:",squash"`
	// SpoolDir is where a mailbox (PST, OST) that arrives as a stream is
	// written to be read by random access, each in a private directory
	// removed when its extraction ends; empty means os.TempDir().
	SpoolDir string `mapstructure:"spool_dir"`
}

// Extractor extracts text, metadata and children from objects. It is safe
// for concurrent use; each call to Extract works within its own limits.
type Extractor struct {
	lim      Limits
	grace    time.Duration
	spoolDir string
}

// New returns an Extractor after validating opts.
func New(opts Options) (*Extractor, error) {
	if err := opts.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("extract options: %w", err)
	}
	return &Extractor{lim: opts.Limits, grace: time.Second, spoolDir: opts.SpoolDir}, nil
}

// Extract reads obj and returns its Document tree.
//
// The returned Document is non-nil whenever anything could be read, even on
// failure: then Document.Err is set and the document keeps whatever text and
// children were extracted. The returned error is non-nil only together with
// the top document's Err (the same value), or when ctx ends before anything
// was read. A child that fails carries its own Err and does not fail its
// parent or its siblings. Extract never panics on bad input.
func (x *Extractor) Extract(ctx context.Context, obj Object) (*Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extract %s: %w", obj.Name, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, x.lim.Timeout, errTimeout)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	path := []string{obj.Name}
	if obj.Reader == nil {
		err := &Error{Op: "read", Err: fmt.Errorf("%w: no reader", ErrMalformed)}
		return &Document{Name: obj.Name, Path: path, Err: err}, err
	}
	// Mailboxes are read by random access, never into memory.
	mbox, rest := x.mailbox(ctx, obj, path)
	if mbox != nil {
		return mbox, mbox.Err
	}
	obj.Reader = rest
	j := newJob(ctx, x.lim)
	j.mem, j.stop = obj.Memory, stop
	data, rerr := readAll(ctx, obj.Reader, x.lim.MaxObjectSize, j.charge)
	if rerr != nil {
		// Only part of the object was read: Size counts what was read (the
		// "truncated" extra says so), and no hash is given, since a hash of
		// the part would pass for the object's.
		d := &Document{Name: obj.Name, Path: path, Size: int64(len(data))}
		d.MediaType = sniff(data, obj.Name, obj.ContentType).media
		switch {
		case errors.Is(rerr, ErrMemory):
			d.Err = &Error{Op: "read", Err: rerr}
		case errors.Is(rerr, ErrTooLarge):
			d.Err = &Error{Format: formatOf(d.MediaType), Op: "read", Err: rerr}
			d.setExtra("truncated", "true")
		case ctx.Err() != nil && len(data) == 0:
			return nil, fmt.Errorf("extract %s: %w", obj.Name, j.ctxErr())
		case ctx.Err() != nil:
			d.Err = &Error{Op: "read", Err: j.ctxErr()}
		default:
			d.Err = &Error{Op: "read", Err: fmt.Errorf("read %s: %w", obj.Name, rerr)}
		}
		return d, d.Err
	}

	done := make(chan *Document, 1)
	go func() {
		done <- j.extract(data, obj.Name, obj.ContentType, path, 0)
	}()
	var d *Document
	select {
	case d = <-done:
	case <-ctx.Done():
		// Every parser polls ctx, so the worker normally returns at once
		// with what it had; a parser stuck in a long call is abandoned
		// after a grace period (its memory is still bounded by the limits).
		t := time.NewTimer(x.grace)
		select {
		case d = <-done:
		case <-t.C:
			d = &Document{Name: obj.Name, Path: path, Size: int64(len(data)), SHA256: sha256.Sum256(data)}
			d.MediaType = sniff(data, obj.Name, obj.ContentType).media
			d.Err = &Error{Format: formatOf(d.MediaType), Op: "extract", Err: j.ctxErr()}
		}
		t.Stop()
	}
	if d.Err != nil {
		return d, d.Err
	}
	return d, nil
}

// readAll reads r up to limit bytes; more is ErrTooLarge, with the first
// limit bytes returned. Readers that know their size are read into one
// allocation. Every allocation is charged first.
func readAll(ctx context.Context, r io.Reader, limit int64, charge func(int64) error) ([]byte, error) {
	const chunk = 512 << 10
	size := int64(64 << 10)
	switch r := r.(type) {
	case interface{ Len() int }: // bytes.Reader, strings.Reader, bytes.Buffer
		size = int64(r.Len()) + 1
	case interface{ Stat() (fs.FileInfo, error) }: // *os.File
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size() + 1
		}
	}
	first := max(min(size, limit+1), 512)
	if err := charge(first); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, first)
	for {
		if err := ctx.Err(); err != nil {
			return buf, err
		}
		if int64(len(buf)) > limit {
			return buf[:limit], fmt.Errorf("%w: object exceeds MaxObjectSize (%d bytes)", ErrTooLarge, limit)
		}
		if len(buf) == cap(buf) {
			n := min(int64(cap(buf))*2, limit+1)
			if n <= int64(cap(buf)) {
				n = int64(cap(buf)) + 1
			}
			// The old buffer is dropped once copied: the account keeps
			// the larger, a fair estimate of the two while both live.
			if err := charge(n - int64(cap(buf))); err != nil {
				return buf, err
			}
			nb := make([]byte, len(buf), n)
			copy(nb, buf)
			buf = nb
		}
		want := min(cap(buf)-len(buf), chunk)
		n, err := r.Read(buf[len(buf) : len(buf)+want])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(buf)) > limit {
				return buf[:limit], fmt.Errorf("%w: object exceeds MaxObjectSize (%d bytes)", ErrTooLarge, limit)
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func (d *Document) setExtra(k, v string) {
	if d.Meta.Extra == nil {
		d.Meta.Extra = make(map[string]string)
	}
	d.Meta.Extra[k] = v
}

// fail records err on d unless an earlier error is already recorded: the
// first failure is the one a reviewer needs to see.
func (d *Document) fail(err error) {
	if d.Err == nil {
		d.Err = err
	}
}

// extract builds the Document for data found at path, depth levels below
// the top object.
func (j *job) extract(data []byte, name, declared string, path []string, depth int) *Document {
	d := &Document{Name: name, Path: path, Size: int64(len(data)), SHA256: sha256.Sum256(data)}
	k := sniff(data, name, declared)
	d.MediaType = k.media
	p := &parser{j: j, d: d, depth: depth, format: k.format, declared: declared, text: textBuf{max: int(min(j.lim.MaxTextSize, math.MaxInt))}}
	if p.cancelled() {
		return d
	}
	// The text is made beside the data (a decoded copy, then the text
	// kept): charge a copy while it is made, and the text kept.
	if err := j.charge(int64(len(data))); err != nil {
		p.fail("extract", err)
		return d
	}
	p.run(k, data)
	if err := j.charge(int64(len(d.Text))); err != nil {
		p.fail("extract", err)
	}
	j.release(int64(len(data)))
	return d
}

// parser is what a format parser works with: the document it fills, its
// text, and the job's limits.
type parser struct {
	j      *job
	d      *Document
	depth  int
	format string
	// declared is the content type the container declared, if any.
	declared string
	text     textBuf
	names    map[string]int
}

// run calls the format's parser, turning a panic into ErrMalformed and an
// overflowing text into ErrTooLarge.
func (p *parser) run(k kind, data []byte) {
	defer func() {
		if r := recover(); r != nil {
			p.fail("parse", fmt.Errorf("%w: parser panic: %v", ErrMalformed, r))
		}
		if p.text.full() {
			p.fail("text", fmt.Errorf("%w: text exceeds MaxTextSize (%d bytes), truncated", ErrTooLarge, p.j.lim.MaxTextSize))
		}
		if p.d.Text == "" && p.text.Len() > 0 {
			p.d.Text = p.text.String()
		}
	}()
	if k.parse == nil {
		p.fail("sniff", fmt.Errorf("%w: %s has no extractable text", ErrUnsupported, k.media))
		return
	}
	k.parse(p, data)
}

// fail records err, classified, as this document's error (the first one
// wins).
func (p *parser) fail(op string, err error) {
	var xe *Error
	if errors.As(err, &xe) && xe.Format != "" {
		p.d.fail(xe)
		return
	}
	p.d.fail(&Error{Format: p.format, Op: op, Err: p.j.classify(err)})
}

// cancelled reports whether the deadline has passed, recording it.
func (p *parser) cancelled() bool {
	if p.j.ctx.Err() == nil {
		return false
	}
	p.fail("extract", p.j.ctxErr())
	return true
}

// admit checks the depth and count limits before one more child; false
// means the child must not be extracted (the breach is recorded on p.d).
func (p *parser) admit() bool {
	if p.cancelled() {
		return false
	}
	if p.depth+1 > p.j.lim.MaxDepth {
		p.fail("open children", fmt.Errorf("%w: children below depth %d not opened", ErrTooDeep, p.j.lim.MaxDepth))
		return false
	}
	if n := p.j.children.Add(1); n > int64(p.j.lim.MaxChildren) {
		p.fail("add child", fmt.Errorf("%w: the tree reached MaxChildren (%d)", ErrTooManyChildren, p.j.lim.MaxChildren))
		return false
	}
	return true
}

// child extracts data as a child named name; call admit first.
func (p *parser) child(name, declared string, data []byte) *Document {
	name = p.unique(name)
	c := p.j.extract(data, name, declared, p.childPath(name), p.depth+1)
	p.d.Children = append(p.d.Children, c)
	return c
}

// failedChild records a child that could not be read; sum, when known,
// identifies its stored bytes (e.g. the encrypted bytes of a zip member).
func (p *parser) failedChild(name, media string, size int64, sum *[32]byte, err error) {
	name = p.unique(name)
	c := &Document{Name: name, MediaType: media, Path: p.childPath(name), Size: size}
	if sum != nil {
		c.SHA256 = *sum
	}
	var xe *Error
	if !errors.As(err, &xe) {
		err = &Error{Format: p.format, Op: "read member", Err: p.j.classify(err)}
	}
	c.Err = err
	p.d.Children = append(p.d.Children, c)
}

func (p *parser) childPath(name string) []string {
	path := make([]string, len(p.d.Path)+1)
	copy(path, p.d.Path)
	path[len(path)-1] = name
	return path
}

// unique makes sibling names distinct: "a.txt", "a.txt (2)", ...
func (p *parser) unique(name string) string {
	if p.names == nil {
		p.names = make(map[string]int)
	}
	p.names[name]++
	n := p.names[name]
	if n == 1 {
		return name
	}
	for {
		alt := fmt.Sprintf("%s (%d)", name, n)
		if p.names[alt] == 0 {
			p.names[alt] = 1
			return alt
		}
		n++
	}
}

// setText stores s as the document's text, within MaxTextSize: a longer
// one is cut, at a rune boundary, into a copy of its own (s is dropped),
// made once rather than through the text buffer and again out of it.
func (p *parser) setText(s string) {
	if int64(len(s)) > p.j.lim.MaxTextSize {
		n := int(min(p.j.lim.MaxTextSize, math.MaxInt))
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		p.d.Text = strings.Clone(s[:n])
		p.text.over = true
		return
	}
	p.d.Text = s
}
