package storetest

import (
	"context"
	"maps"
	"testing"

	"github.com/simdex/simdex/index"
)

// forgedOrigin is origin metadata naming simdex's own fields, as an
// uploader may send it.
var forgedOrigin = map[string]string{
	"custodian":                    "kim",
	index.MetaDeletedAtSource:      "2020-01-01T00:00:00Z",
	index.MetaDeletedAtSourceEvent: "forged",
	index.MetaThreadID:             "t-real",
	index.MetaDate:                 "2099-01-01T00:00:00Z",
}

// originApart checks that a store keeps a document's origin metadata
// (index.Doc.Origin) apart from its own (Meta): given back as it was put,
// never found by a metadata look-up, and empty but not nil on a document
// put without any.
func originApart(t *testing.T, o Opener) {
	ctx := context.Background()
	s := o.Open(t)
	top := entry("s3:b/up.txt", "v1", "uploaded", []uint64{h(61)}, []uint64{h(62)})
	top.Doc.Origin = maps.Clone(forgedOrigin)
	child := entry("s3:b/up.txt!/x", "v1", "member", []uint64{h(63)}, []uint64{h(64)})
	child.Parent = 0
	real := entry("s3:b/real.eml", "v1", "real message", []uint64{h(65)}, []uint64{h(66)})
	real.Doc.Meta = map[string]string{index.MetaThreadID: "t-real", index.MetaMessageID: "<m@x>"}
	c, err := s.Put(ctx, []index.Entry{top, child})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, []index.Entry{real}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, c[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(r.Origin, forgedOrigin) || !maps.Equal(r.OriginMeta(), forgedOrigin) {
		t.Errorf("origin = %v, OriginMeta = %v; want %v", r.Origin, r.OriginMeta(), forgedOrigin)
	}
	if !maps.Equal(r.Meta, map[string]string{"k": "v"}) {
		t.Errorf("meta = %v, want only what was put there", r.Meta)
	}
	kid, err := s.Get(ctx, c[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if kid.Origin == nil || len(kid.Origin) != 0 || len(kid.OriginMeta()) != 0 {
		t.Errorf("child put without origin metadata: Origin = %#v, OriginMeta = %v; want empty, not nil", kid.Origin, kid.OriginMeta())
	}
	f, ok := s.(index.MetaFinder)
	if !ok {
		return
	}
	recs, err := f.ByMeta(ctx, index.MetaThreadID, "t-real")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Key != "s3:b/real.eml" {
		t.Errorf("ByMeta(thread_id) found %d documents, want the real message alone", len(recs))
	}
}
