// Package ingest turns one stored object into indexed documents: it
// extracts the object's text and children, fingerprints each document and
// commits the whole family to the index in one transaction. The CLI and the
// Pipeline (connector events to index changes, run by the daemon) both use
// it, so an object is indexed the same way whichever way it arrives. Scan
// (simdex scan) indexes the files under directories into a bulk load of the
// index and analyses them.
//
// Nothing is dropped: an object that cannot be extracted, or whose key or
// name is not valid UTF-8 (ErrInvalidName), is committed with its error
// for reviewers; a document with no text of its own whose members failed
// carries the first member's error (MemberError) rather than the index's
// "empty text".
package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/mailthread"
)

// Object is one object to ingest.
type Object struct {
	// Key, VersionID, Name, Source and Idempotency become the top-level
	// document's index.Doc fields; children derive theirs from them.
	Key, VersionID, Name, Source, Idempotency string
	// ContentType is the declared type; the extractor sniffs the content.
	ContentType string
	// Meta is origin metadata (user metadata, tags): it becomes the
	// top-level document's index.Doc.Origin, never its Meta.
	Meta map[string]string
	// ModTime is the modification time at the origin.
	ModTime time.Time
	// KeepVersions keeps older versions of Key in the index.
	KeepVersions bool
	// KeepText keeps the texts of the object and its children even when
	// the index does not keep texts (index.Input.KeepText): for an object
	// that cannot be read again from any origin, such as a hold's seed
	// file.
	KeepText bool
	// Body is the object's content.
	Body io.Reader
	// Memory, when set, is charged what reading, extracting and
	// fingerprinting the object hold (extract.Budget). The caller closes
	// it once the object is committed or dropped.
	Memory *extract.Account
}

// extractor is what ingest needs of the extract stage.
type extractor interface {
	Extract(ctx context.Context, obj extract.Object) (*extract.Document, error)
}

// adder is what ingest needs of the index: Add in its two halves.
type adder interface {
	Prepare(ctx context.Context, inputs []index.Input) *index.Prepared
	Commit(ctx context.Context, p *index.Prepared) ([]index.Result, error)
}

// Ingester extracts and indexes objects. It is safe for concurrent use.
type Ingester struct {
	ex extractor
	ix adder
}

// New returns an Ingester.
func New(ex extractor, ix adder) *Ingester { return &Ingester{ex: ex, ix: ix} }

// Store is an index store that can be closed: the daemon's, or a scan's
// bulk load.
type Store interface {
	index.Store
	Close() error
}

// Engine is an index over its store, with the extraction and the
// Ingester that feed it.
type Engine[S Store] struct {
	Store     S
	Index     *index.Index
	Extractor *extract.Extractor
	Ingester  *Ingester
}

// OpenEngine opens the index over st, the store at path, with the
// extraction xo configures; on failure it closes st.
func OpenEngine[S Store](ctx context.Context, st S, path string, opts index.Options, xo extract.Options) (*Engine[S], error) {
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	ex, err := extract.New(xo)
	if err != nil {
		ix.Close()
		st.Close()
		return nil, fmt.Errorf("configure extraction: %w", err)
	}
	return &Engine[S]{Store: st, Index: ix, Extractor: ex, Ingester: New(ex, ix)}, nil
}

// Close stops the index and closes the store.
func (e *Engine[S]) Close() error {
	e.Index.Close()
	return e.Store.Close()
}

// Outcome reports one ingested object: the documents committed (the object
// first, then its descendants in depth-first order) and their results.
type Outcome struct {
	Inputs  []index.Input
	Results []index.Result
	// Err is the top-level object's extraction error, if any: the object
	// is still recorded in the index with that error, for reviewers.
	Err error
}

// ChildSeparator joins a parent key and a child's location.
const ChildSeparator = "!/"

// ErrInvalidName reports an object whose key or name is not valid UTF-8,
// such as a file named in Latin-1 on a Linux disk. No API, export or alert
// could name it faithfully, so it is not extracted: it is recorded in the
// index with this error, which quotes the name with its bytes escaped.
var ErrInvalidName = errors.New("name is not valid UTF-8")

// MemberError is recorded on a document with no text of its own (an
// archive, a message with nothing but attachments) when a document inside
// it could not be extracted: the top of a zip nested too deep would
// otherwise read "empty text" while the cause sat on its deepest member.
type MemberError struct {
	// Path locates the member from the document, one element per level.
	Path []string
	// Err is the member's extraction error.
	Err error
}

// Error returns a message like "member a.zip!/b.zip: zip: open children:
// nested too deep: …".
func (e *MemberError) Error() string {
	return "member " + strings.Join(e.Path, ChildSeparator) + ": " + e.Err.Error()
}

// Unwrap returns the member's error.
func (e *MemberError) Unwrap() error { return e.Err }

// Ingest extracts obj and commits it with its children. An extraction
// failure is recorded on the document (and returned in Outcome.Err) rather
// than dropping the object; the returned error is non-nil only when nothing
// could be committed (the index refused the write or ctx ended). Ingest is
// Prepare then Commit.
func (in *Ingester) Ingest(ctx context.Context, obj Object) (*Outcome, error) {
	p, err := in.Prepare(ctx, obj)
	if err != nil {
		return nil, err
	}
	return in.Commit(ctx, p)
}

// Prepared is an object read, extracted and fingerprinted, ready to
// commit: what Prepare returns and Commit takes.
type Prepared struct {
	key   string
	idem  string
	out   *Outcome
	batch *index.Prepared
}

// Idempotency is the idempotency key of p's top-level document.
func (p *Prepared) Idempotency() string { return p.idem }

// KeepOlderVersions makes p keep the older versions of its key in the
// index instead of replacing them (see index.Prepared.KeepOlderVersions).
func (p *Prepared) KeepOlderVersions() {
	if p.batch != nil {
		p.batch.KeepOlderVersions()
	}
}

// Prepare reads obj's body, extracts it and fingerprints its documents:
// the half of Ingest that keeps a core busy (see index.Index.Commit for
// why a caller may bound how many run at once). Its error is non-nil only
// when ctx ended before anything was read, or when obj.Memory could not
// be charged what the object needs (extract.ErrMemory: nothing may be
// committed, what was read being incomplete). An object whose key or name
// is not valid UTF-8 is not read: it is prepared with ErrInvalidName.
func (in *Ingester) Prepare(ctx context.Context, obj Object) (*Prepared, error) {
	if err := checkNames(obj); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("extract %s: %w", strconv.Quote(obj.Key), ctx.Err())
		}
		return in.prepare(ctx, obj, &extract.Document{Name: obj.Name, Err: err}), nil
	}
	doc, xerr := in.ex.Extract(ctx, extract.Object{Name: obj.Name, ContentType: obj.ContentType, Reader: obj.Body, Memory: obj.Memory})
	if err := obj.Memory.Err(); err != nil {
		if !errors.Is(err, extract.ErrTooLarge) {
			return nil, fmt.Errorf("extract %s: %w", strconv.Quote(obj.Key), err)
		}
		doc, xerr = overBudget(obj, doc, err), nil
	}
	if doc == nil {
		if xerr == nil {
			xerr = errors.New("extractor returned no document")
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("extract %s: %w", obj.Key, ctx.Err())
		}
		doc = &extract.Document{Name: obj.Name, Err: xerr}
	}
	if xerr != nil && doc.Err == nil {
		doc.Err = xerr
	}
	p := in.prepare(ctx, obj, doc)
	if err := obj.Memory.Err(); err != nil {
		if !errors.Is(err, extract.ErrTooLarge) {
			return nil, fmt.Errorf("fingerprint %s: %w", strconv.Quote(obj.Key), err)
		}
		p = in.prepare(ctx, obj, overBudget(obj, doc, err))
	}
	return p, nil
}

// overBudget is the document recorded for obj, extracted as doc (nil if
// nothing was read), when it needs more memory than the whole budget:
// what was read is dropped (obj.Memory is reset) and the object recorded
// with err, for reviewers, rather than read again in vain.
func overBudget(obj Object, doc *extract.Document, err error) *extract.Document {
	rec := &extract.Document{Name: obj.Name, Err: &extract.Error{Op: "extract", Err: err}}
	if doc != nil {
		rec.MediaType, rec.Size, rec.SHA256 = doc.MediaType, doc.Size, doc.SHA256
	}
	obj.Memory.Reset()
	return rec
}

// checkNames returns ErrInvalidName, with the offending name quoted, when
// obj's key or name is not valid UTF-8.
func checkNames(obj Object) error {
	for _, s := range []string{obj.Key, obj.Name} {
		if !utf8.ValidString(s) {
			return fmt.Errorf("%w: %s", ErrInvalidName, strconv.Quote(s))
		}
	}
	return nil
}

// prepare flattens the extracted doc of obj into inputs and fingerprints
// them.
func (in *Ingester) prepare(ctx context.Context, obj Object, doc *extract.Document) *Prepared {
	in.resolveThreads(ctx, doc)
	top := index.Doc{
		Key: obj.Key, VersionID: obj.VersionID, Name: obj.Name, Source: obj.Source,
		Idempotency: obj.Idempotency, ModTime: obj.ModTime, KeepVersions: obj.KeepVersions,
		Origin: maps.Clone(obj.Meta),
	}
	if top.Origin == nil {
		top.Origin = map[string]string{}
	}
	out := &Outcome{}
	out.Err = flatten(doc, top, -1, &out.Inputs)
	var longest int
	for i := range out.Inputs {
		out.Inputs[i].KeepText = obj.KeepText
		longest = max(longest, len(out.Inputs[i].Text))
	}
	// Fingerprinting holds the normal form of one text at a time, and its
	// chunks: charged while it runs (the texts are charged already).
	fingerprinting := int64(longest) + int64(longest)/4
	if err := obj.Memory.Charge(ctx, fingerprinting); err != nil {
		return &Prepared{key: obj.Key, idem: top.IdempotencyKey(), out: out}
	}
	defer obj.Memory.Release(fingerprinting)
	return &Prepared{key: obj.Key, idem: top.IdempotencyKey(), out: out, batch: in.ix.Prepare(ctx, out.Inputs)}
}

// resolveThreads gives each e-mail message of doc's tree the thread of
// the messages it answers when the index holds them (their thread may
// have been filed under a key the reply's own headers do not give, such
// as the subject of a parent whose References were stripped), or of the
// message its quoted text comes from when it has no reply headers at all.
// Where the index does not know, the key from the message's own headers
// stays. A failed look-up keeps it too: the thread is a reviewer's aid,
// and the next delivery of the object resolves it again.
func (in *Ingester) resolveThreads(ctx context.Context, doc *extract.Document) {
	f, ok := in.ix.(mailthread.Finder)
	if !ok || doc == nil {
		return
	}
	var walk func(d *extract.Document)
	walk = func(d *extract.Document) {
		m := d.Meta
		if m.Extra[extract.ExtraThreadID] != "" {
			h := mailthread.Header{MessageID: m.MessageID, InReplyTo: m.InReplyTo, References: m.Extra[extract.ExtraReferences], Subject: m.Subject}
			if key, err := mailthread.Resolve(ctx, f, h, d.Text); err == nil && key != "" {
				d.Meta.Extra[extract.ExtraThreadID] = key
			}
		}
		for _, c := range d.Children {
			walk(c)
		}
	}
	walk(doc)
}

// Err is the object's extraction error, if any, as Outcome.Err will be: a
// caller may decide not to commit an object that failed to be read for a
// passing reason, and have it read again.
func (p *Prepared) Err() error { return p.out.Err }

// Commit commits what Prepare returned, the object with its children in
// one transaction, and waits until it is durable. Its error is non-nil
// only when nothing was committed.
func (in *Ingester) Commit(ctx context.Context, p *Prepared) (*Outcome, error) {
	res, err := in.ix.Commit(ctx, p.batch)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", p.key, err)
	}
	p.out.Results = res
	return p.out, nil
}

// flatten appends d and its descendants to inputs, depth first, and
// returns the error recorded on d: its own extraction error or, when it has
// no text of its own, the first error of the documents inside it (a
// *MemberError).
func flatten(d *extract.Document, base index.Doc, parent int, inputs *[]index.Input) error {
	doc := base
	doc.MediaType = d.MediaType
	doc.Path = d.Path
	if len(doc.Path) == 0 {
		doc.Path = []string{base.Name}
	}
	doc.Meta = metadata(d.Meta)
	in := index.Input{Doc: doc, RawSHA256: d.SHA256, RawSize: d.Size, Text: textBytes(d.Text), Parent: parent}
	if parent >= 0 {
		in.Doc.Idempotency = ""
		in.Doc.KeepVersions = false
	}
	self := len(*inputs)
	*inputs = append(*inputs, in)
	var inner *MemberError
	for i, c := range d.Children {
		loc := cmp.Or(c.Name, fmt.Sprintf("child %d", i+1))
		child := index.Doc{Key: base.Key + ChildSeparator + loc, Name: base.Name + ChildSeparator + loc,
			VersionID: base.VersionID, Source: base.Source, ModTime: base.ModTime}
		if err := flatten(c, child, self, inputs); err != nil && inner == nil {
			inner = &MemberError{Path: []string{loc}, Err: err}
			var me *MemberError
			if c.Err == nil && errors.As(err, &me) { // from a member of the member
				inner.Path, inner.Err = append(inner.Path, me.Path...), me.Err
			}
		}
	}
	err := d.Err
	if err == nil && inner != nil && strings.TrimSpace(d.Text) == "" {
		err = inner
	}
	if err != nil {
		(*inputs)[self].Doc.Error = err.Error()
	}
	return err
}

// textBytes returns the bytes of an extracted text without copying them:
// the index only reads an input's text, and a copy of every text of a
// large archive would double what ingesting it holds.
func textBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// fromExtraction are the keys extraction sets in Metadata.Extra for
// simdex's own fields (index.Reserved): the only reserved keys an Extra
// value may fill.
var fromExtraction = map[string]string{
	extract.ExtraThreadID:   index.MetaThreadID,
	extract.ExtraDraft:      index.MetaDraft,
	extract.ExtraFolder:     index.MetaFolder,
	extract.ExtraReferences: index.MetaReferences,
}

// metadata returns a document's index.Doc.Meta from what extraction found:
// its typed fields under simdex's own keys, and Extra, where a key that is
// one of simdex's own (index.Reserved) but not one extraction sets for it
// is renamed (index.MetaRenamedPrefix). Origin metadata is not part of it:
// it is index.Doc.Origin.
func metadata(m extract.Metadata) map[string]string {
	out := make(map[string]string, len(m.Extra)+8)
	for k, v := range m.Extra {
		if own, ok := fromExtraction[k]; ok {
			out[own] = v
		} else if index.Reserved(k) {
			out[index.MetaRenamedPrefix+k] = v
		} else {
			out[k] = v
		}
	}
	set := func(k, v string) {
		if v = strings.TrimSpace(v); v != "" {
			out[k] = v
		}
	}
	set(index.MetaTitle, m.Title)
	set(index.MetaAuthor, m.Author)
	set(index.MetaFrom, m.From)
	set(index.MetaTo, strings.Join(m.To, ", "))
	set(index.MetaCc, strings.Join(m.Cc, ", "))
	set(index.MetaSubject, m.Subject)
	set(index.MetaMessageID, m.MessageID)
	set(index.MetaInReplyTo, m.InReplyTo)
	for k, t := range map[string]time.Time{index.MetaCreated: m.Created, index.MetaModified: m.Modified, index.MetaDate: m.Date} {
		if !t.IsZero() {
			out[k] = t.UTC().Format(time.RFC3339)
		}
	}
	return out
}
