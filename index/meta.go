package index

// Metadata keys ingest sets from what extraction found in a document's
// content (extract.Metadata's fields).
const (
	MetaTitle    = "title"
	MetaAuthor   = "author"
	MetaFrom     = "from"
	MetaTo       = "to"
	MetaCc       = "cc"
	MetaSubject  = "subject"
	MetaCreated  = "created"
	MetaModified = "modified"
)

// MetaRenamedPrefix prefixes a metadata key that extraction found under
// one of simdex's own names (Reserved) but that simdex did not set as that
// field: a document property named "deleted_at_source" is kept as
// "extracted:deleted_at_source", never read as the index's mark.
const MetaRenamedPrefix = "extracted:"

// reservedMeta are simdex's own metadata keys: Doc.Meta holds them only
// as simdex code sets them (ingest from extraction's typed fields, the
// index, the store). Origin metadata never enters Doc.Meta (see
// Doc.Origin), and ingest renames any other value found under one of these
// names (MetaRenamedPrefix). This is the one list: a key simdex reads back
// from Doc.Meta with a meaning must be in it.
var reservedMeta = map[string]bool{
	MetaTitle: true, MetaAuthor: true, MetaFrom: true, MetaTo: true, MetaCc: true, MetaSubject: true,
	MetaCreated: true, MetaModified: true,
	MetaThreadID: true, MetaMessageID: true, MetaInReplyTo: true, MetaReferences: true,
	MetaDate: true, MetaDraft: true, MetaFolder: true,
	MetaWords:           true,
	MetaDeletedAtSource: true, MetaDeletedAtSourceEvent: true,
	MetaSupersededAt: true, MetaSupersededBy: true,
}

// Reserved reports whether key is one of simdex's own metadata keys,
// which only simdex code sets in Doc.Meta.
func Reserved(key string) bool { return reservedMeta[key] }

// OriginMeta returns the metadata the origin delivered with d (Doc.Origin).
// A top-level document written before origin metadata was kept apart has
// none recorded there (Origin is nil): its origin metadata is among Meta,
// where older builds stored it, and Meta is returned. A value such a
// document holds under a Reserved key may have come from its uploader.
func (d *Doc) OriginMeta() map[string]string {
	if d.Origin == nil && d.Parent == 0 {
		return d.Meta
	}
	return d.Origin
}
