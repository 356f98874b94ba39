package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
)

// Origin opens objects again where a connector collected them: an S3
// bucket's client, a watched folder, the bucket a NATS reference message
// named.
type Origin interface {
	// Reopen returns the body of the object version at loc and its
	// declared content type ("" when the origin declares none). A version
	// that is gone, or was changed in place, fails wrapping
	// connectors.ErrObjectMissing.
	Reopen(ctx context.Context, loc Location) (io.ReadCloser, string, error)
}

// Location is where a top-level object was collected, as the index
// recorded it.
type Location struct {
	// Name is the object's index key without its source and "/":
	// "bucket/key" for S3, the path under a watched folder.
	Name      string
	VersionID string
	// Meta is the metadata the origin delivered with the object
	// (index.Doc.OriginMeta), such as the Simdex-Ref of a NATS reference
	// message.
	Meta map[string]string
}

var (
	// ErrNoOrigin reports a document whose object cannot be read again:
	// a NATS message that carried its body, a file given to `simdex
	// scan`, a connector no longer configured.
	ErrNoOrigin = errors.New("no origin to read the object again from")
	// ErrTextChanged reports an object read again whose document no
	// longer has the text indexed: the object was overwritten in place,
	// or its extraction has changed.
	ErrTextChanged = errors.New("the text at the origin is not the one indexed")
)

// maxDepth bounds the climb from a document to its top-level object: a
// parent chain longer than extraction could nest is a damaged index.
const maxDepth = 64

// records is what a Rereader needs of the index.
type records interface {
	Get(ctx context.Context, id index.DocID) (*index.Record, error)
	TextDigest(text []byte) ([32]byte, error)
}

// Rereader reads documents' extracted texts again from their origins, for
// an index that does not keep texts (index.keep_text: false). It opens a
// document's top-level object where its connector collected it, extracts
// it again, finds the document by its key (the object itself, or an
// attachment or member inside it) and returns the text only when its
// normal form hashes to the SHA-256 indexed: a reviewer never sees a text
// other than the one that was matched. It is safe for concurrent use.
type Rereader struct {
	ex      extractor
	ix      records
	origins map[string]Origin
}

// NewRereader returns a Rereader that extracts with ex, checks against ix
// and opens objects through origins, keyed by index.Doc.Source
// ("s3:contracts", "fs:/srv/inbox").
func NewRereader(ex extractor, ix records, origins map[string]Origin) *Rereader {
	return &Rereader{ex: ex, ix: ix, origins: origins}
}

// Texts returns the extracted texts of recs read again from their
// origins, in their order. Documents of one object (two messages of a
// mailbox compared in a diff) share one read and one extraction. Errors
// wrap ErrNoOrigin, ErrTextChanged, the origin's errors
// (connectors.ErrObjectMissing for a version that is gone) or the
// extraction's.
func (r *Rereader) Texts(ctx context.Context, recs ...*index.Record) ([][]byte, error) {
	type object struct {
		top  *index.Record
		docs []int // positions in recs
	}
	var objects []*object
	for i, rec := range recs {
		top, err := r.top(ctx, rec)
		if err != nil {
			return nil, err
		}
		j := slices.IndexFunc(objects, func(o *object) bool { return o.top.ID == top.ID })
		if j < 0 {
			j = len(objects)
			objects = append(objects, &object{top: top})
		}
		objects[j].docs = append(objects[j].docs, i)
	}
	out := make([][]byte, len(recs))
	for _, o := range objects {
		inputs, err := r.extract(ctx, o.top)
		if err != nil {
			return nil, err
		}
		for _, i := range o.docs {
			if out[i], err = r.find(recs[i], inputs); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// extract reads the top-level document top again from its origin and
// returns its documents as ingest flattens them.
func (r *Rereader) extract(ctx context.Context, top *index.Record) ([]index.Input, error) {
	origin, ok := r.origins[top.Source]
	name, keyed := strings.CutPrefix(top.Key, top.Source+"/")
	if !ok || !keyed {
		return nil, fmt.Errorf("document %d from %s: %w", top.ID, top.Source, ErrNoOrigin)
	}
	body, ctype, err := origin.Reopen(ctx, Location{Name: name, VersionID: top.VersionID, Meta: top.OriginMeta()})
	if err != nil {
		return nil, fmt.Errorf("read %s version %s again: %w", top.Key, top.VersionID, err)
	}
	defer body.Close()
	doc, xerr := r.ex.Extract(ctx, extract.Object{Name: top.Name, ContentType: ctype, Reader: body})
	if doc == nil {
		return nil, fmt.Errorf("extract %s again: %w", top.Key, cmp.Or(xerr, errors.New("extractor returned no document")))
	}
	var inputs []index.Input
	flatten(doc, index.Doc{Key: top.Key, Name: top.Name}, -1, &inputs)
	return inputs, nil
}

// find returns the text of the input that is rec: the one with its key
// whose text has its digest.
func (r *Rereader) find(rec *index.Record, inputs []index.Input) ([]byte, error) {
	var failed error
	for _, in := range inputs {
		if in.Doc.Key != rec.Key {
			continue
		}
		if in.Doc.Error != "" {
			failed = fmt.Errorf("extract %s again: %s", rec.Key, in.Doc.Error)
			continue
		}
		sum, err := r.ix.TextDigest(in.Text)
		if err == nil && sum == rec.TextSHA {
			return in.Text, nil
		}
	}
	if failed != nil {
		return nil, failed
	}
	return nil, fmt.Errorf("document %d (%s): %w", rec.ID, rec.Key, ErrTextChanged)
}

// top returns the top-level document of rec: rec itself or the last of
// its parents.
func (r *Rereader) top(ctx context.Context, rec *index.Record) (*index.Record, error) {
	for range maxDepth {
		if rec.Parent == 0 {
			return rec, nil
		}
		parent, err := r.ix.Get(ctx, rec.Parent)
		if err != nil {
			return nil, fmt.Errorf("read parent %d of document %d: %w", rec.Parent, rec.ID, err)
		}
		rec = parent
	}
	return nil, fmt.Errorf("document %d: parents nested deeper than %d: the index is damaged", rec.ID, maxDepth)
}
