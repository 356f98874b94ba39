package index

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors that callers branch on with errors.Is.
var (
	// ErrNotFound reports that no document matches the id or key.
	ErrNotFound = errors.New("document not found")
	// ErrClosed reports use of a closed index or store.
	ErrClosed = errors.New("index closed")
	// ErrSchemeMismatch reports a fingerprint made with other parameters or
	// another normalisation version than the index uses.
	ErrSchemeMismatch = errors.New("fingerprint scheme mismatch")
	// ErrSchemaVersion reports a store written by a newer simdex.
	ErrSchemaVersion = errors.New("unsupported store schema version")
	// ErrNotIndex reports a file that is not a simdex index: another
	// application's database, another of simdex's databases, or no
	// database. It is left as it was.
	ErrNotIndex = errors.New("not a simdex index")
	// ErrNoText reports a content whose extracted text was not kept (see
	// Options.KeepText).
	ErrNoText = errors.New("extracted text not kept")
)

// DocID identifies one stored document version. IDs are never reused.
type DocID int64

// ContentID identifies one distinct normalised text. Exact duplicates share
// a ContentID, so their fingerprints are stored and compared once (KDD'05).
type ContentID int64

// Doc describes one document version: where it came from and where it sits.
type Doc struct {
	// Key is the stable name of the object across versions, unique per
	// origin: "s3:bucket/key", "fs:/srv/inbox/a.txt", or a child's
	// parent key plus its location ("…!/attachment 2/contract.docx").
	Key string
	// VersionID distinguishes versions of Key (S3 version id, stream
	// sequence, file modification stamp). It may be empty.
	VersionID string
	// Name is the key or path as its owner knows it, for display.
	Name string
	// Source names the origin ("s3:contracts", "fs:inbox", "scan").
	Source string
	// Idempotency is the permanent key of the event that produced this
	// version; adding a document whose Idempotency is already stored is a
	// no-op. Empty means Key+"\x00"+VersionID.
	Idempotency string
	// Parent is the containing document (archive, message) or 0.
	Parent DocID
	// Path is the location from the top-level object, e.g.
	// ["box.zip", "inbox.mbox", "message 3", "contract.docx"].
	Path []string
	// MediaType is the sniffed content type.
	MediaType string
	// Meta holds simdex's own metadata: what extraction found in the
	// content (title, author, e-mail headers, thread) and what the index
	// records (Reserved lists the keys simdex reads back). Nothing an
	// origin delivers is stored here.
	Meta map[string]string
	// Origin holds the metadata the origin delivered with a top-level
	// object (S3 user metadata and tags, NATS Simdex-Meta-* headers, the
	// NATS reference), whatever its uploader chose: it is shown and
	// exported, and policy selectors match it, but it is never read as
	// one of simdex's fields. Stores return it non-nil, except for a
	// document written before it was kept apart (see OriginMeta).
	Origin map[string]string
	// ModTime is the object's modification time at the origin.
	ModTime time.Time
	// Error records why the document has no usable text (too large,
	// encrypted, malformed…): such documents are stored for reviewers
	// with no fingerprint content and never match anything.
	Error string
	// KeepVersions keeps older versions of Key (a versioned bucket keeps
	// them and holds must reach them); when false a new version replaces
	// the older ones.
	KeepVersions bool
}

// IdempotencyKey returns d.Idempotency or its default.
func (d *Doc) IdempotencyKey() string {
	if d.Idempotency != "" {
		return d.Idempotency
	}
	return d.Key + "\x00" + d.VersionID
}

// Metadata keys the index itself sets on a top-level document deleted at
// its source while a legal hold keeps it (see the daemon's pipeline): when,
// in RFC 3339, and which event reported it.
const (
	MetaDeletedAtSource      = "deleted_at_source"
	MetaDeletedAtSourceEvent = "deleted_at_source_event"
)

// Metadata keys the index itself sets on a top-level document a legal hold
// keeps after its source overwrote it (an edit in place, an unversioned
// object written again): when, in RFC 3339, and which event wrote the
// version that superseded it.
const (
	MetaSupersededAt = "superseded_at"
	MetaSupersededBy = "superseded_by"
)

// Record is a stored document version.
type Record struct {
	Doc
	ID        DocID
	Content   ContentID // 0 when the document has no text (see Doc.Error)
	RawSHA256 [32]byte
	RawSize   int64
	TextSHA   [32]byte
	TextSize  int64
	IndexedAt time.Time
}

// Entry is one document to commit with its fingerprint. Parent, when
// non-negative, is the index of the parent entry in the same batch.
type Entry struct {
	Doc         Doc
	Fingerprint *Fingerprint // nil when Doc.Error is set
	// Bands are the LSH band keys of Fingerprint.MinHash.
	Bands  []uint64
	Parent int
	// Text is the extracted text, kept for reviewers (diffs) when not nil.
	Text []byte
	// RawSHA256 and RawSize describe the raw object, recorded even when it
	// has no fingerprint (a file that could not be extracted still needs
	// its hash and size in a review or a load file). Zero when unknown.
	RawSHA256 [32]byte
	RawSize   int64
	// Prepared is work done for this entry before its commit by the
	// store's Prepare (see Preparer), which only that store interprets.
	Prepared any
}

// Committed reports what a Put did for one entry.
type Committed struct {
	ID        DocID
	Content   ContentID
	Duplicate bool    // the idempotency key was already stored: nothing written
	Replaced  []DocID // older versions of the key that this version replaced
}

// Writer commits documents. Implementations must make each call atomic: all
// entries are durably committed or none is, even across a crash.
type Writer interface {
	// Put commits entries in one transaction. It is safe for concurrent
	// use; the store serialises writers.
	Put(ctx context.Context, entries []Entry) ([]Committed, error)
	// Remove deletes a document version and its children; versionID ""
	// removes every version of key. It returns the removed ids; removing
	// what is absent is not an error.
	Remove(ctx context.Context, key, versionID string) ([]DocID, error)
}

// Preparer is a Store that can do part of a Put's work before the
// commit: the Index calls Prepare on the goroutine of each Add, so that
// concurrent Adds do that work in parallel rather than in the single writer
// that commits them.
type Preparer interface {
	// Prepare sets Entry.Prepared of entries. It cannot fail: Put does any
	// work it finds undone.
	Prepare(ctx context.Context, entries []Entry)
}

// Snapshotter is a Store that can serve a series of reads from one
// snapshot: the several calls of a near-copy search then see the store at
// one moment and, in a store with a pool of connections, share one
// connection and its page cache. The Index takes one for each search.
type Snapshotter interface {
	// Snapshot returns a context in which this store's reads share one read
	// transaction, and the function that ends it, to be called once the
	// reads are done. A context that holds one already is returned as it
	// is, with a function that does nothing. Writes are not part of it.
	Snapshot(ctx context.Context) (context.Context, func(), error)
}

// Reader looks documents up.
type Reader interface {
	// Get returns the document with id, or ErrNotFound.
	Get(ctx context.Context, id DocID) (*Record, error)
	// Lookup returns the current versions of key (newest first), the
	// document whose idempotency key equals key, or ErrNotFound.
	Lookup(ctx context.Context, key string) ([]*Record, error)
	// ByContent returns every document version whose text is one of
	// contents, by id.
	ByContent(ctx context.Context, contents ...ContentID) ([]*Record, error)
	// Seen reports whether a document with this idempotency key is stored.
	Seen(ctx context.Context, idempotencyKey string) (bool, error)
	// Documents calls fn with every stored document version, by id.
	Documents(ctx context.Context, fn func(*Record) error) error
	// Find returns up to limit documents, newest first, whose name or key
	// contains query (ignoring ASCII case), or whose id is query.
	Find(ctx context.Context, query string, limit int) ([]*Record, error)
	// Children returns the documents directly inside id (attachments,
	// archive members), by id.
	Children(ctx context.Context, id DocID) ([]*Record, error)
	// Text returns the extracted text kept for content, or ErrNoText.
	Text(ctx context.Context, content ContentID) ([]byte, error)
}

// Searcher finds and loads candidates for comparison. Callbacks must not
// call the store: an implementation may hold a connection while it calls
// fn.
type Searcher interface {
	// Candidates returns contents sharing at least one LSH band key or one
	// non-template chunk whose document frequency is at most
	// q.MaxChunkDocs. When the query's text is stored, its content is among
	// them. Contents no longer stored may be returned too (loading their
	// fingerprints finds nothing).
	Candidates(ctx context.Context, q CandidateQuery) ([]ContentID, error)
	// AnchorCandidates returns up to limit contents sharing with the query
	// at least minShare of the anchors of the smaller of the two (and at
	// least two anchors), best share first, ignoring anchors held by more
	// than maxDocs contents. anchors are Fingerprint.Anchors of the query.
	AnchorCandidates(ctx context.Context, anchors []uint64, maxDocs int, minShare float64, limit int) ([]ContentID, error)
	// Fingerprints loads the fingerprints of contents; fn is called once
	// per found content.
	Fingerprints(ctx context.Context, ids []ContentID, fn func(ContentID, *Fingerprint) error) error
	// SimHashes calls fn with every stored content's SimHash.
	SimHashes(ctx context.Context, fn func(ContentID, uint64) error) error
}

// CandidateQuery is what Searcher.Candidates looks up.
type CandidateQuery struct {
	// TextSHA256 is the query's Fingerprint.TextSHA256. When that text is
	// stored, a store may skip the band keys it knows no other content
	// holds: most of a stored document's keys are its own.
	TextSHA256 [32]byte
	// Content is the query's stored content when the caller knows it (a
	// stored document's search), which a store may read directly instead
	// of looking TextSHA256 up; zero when unknown.
	Content ContentID
	// Bands are the query's LSH band keys (sketch.Bands), in band order.
	Bands []uint64
	// Chunks are the hashes of the query's non-template chunks.
	Chunks []uint64
	// MaxChunkDocs: a chunk held by more contents is boilerplate and
	// contributes no candidates.
	MaxChunkDocs int
}

// Store is what the index keeps its state in: the embedded SQLite store, or
// a shared database for several replicas. Every implementation must pass
// index/storetest.
type Store interface {
	Writer
	Reader
	Searcher
	Templates
	Grouper
	// Stats returns counts of documents, contents and chunk documents.
	Stats(ctx context.Context) (Stats, error)
	Close() error
}

// Stats summarises a store.
type Stats struct {
	Documents int64 `json:"documents"` // document versions, children included
	Contents  int64 `json:"contents"`  // distinct texts
	Failed    int64 `json:"failed"`    // documents stored with an extraction error
}

// Template is a set of chunk and sample hashes marked as boilerplate by an
// operator: they are ignored when scoring, without re-fingerprinting.
type Template struct {
	ID      int64
	Name    string
	Reason  string
	Actor   string
	At      time.Time
	Chunks  []uint64
	Samples []uint32
}

// Templates keeps operator-marked templates and chunk frequencies.
type Templates interface {
	// AddTemplate stores t and returns its id.
	AddTemplate(ctx context.Context, t Template) (int64, error)
	// Templates returns every stored template.
	Templates(ctx context.Context) ([]Template, error)
	// ChunkContents returns, for each hash, how many distinct contents
	// contain the chunk.
	ChunkContents(ctx context.Context, hashes []uint64) (map[uint64]int, error)
}

// Grouper enumerates candidate groups for all-pairs analysis, in the
// manner of KDD'05's sorted file–chunk graph.
type Grouper interface {
	// Groups calls fn with every set of two or more contents that share an
	// LSH band key or a chunk held by at most maxChunkDocs contents; when
	// of is not nil, only with the sets holding one of of, whole. The ids
	// slice is only valid during the call.
	Groups(ctx context.Context, maxChunkDocs int, of []ContentID, fn func(ids []ContentID) error) error
	// AnchorGroups calls fn with every set of two or more contents that
	// share an anchor (Fingerprint.Anchors) held by at most maxDocs
	// contents, and each content's anchor count; when of is not nil, only
	// with the sets holding one of of, whole. The slices are only valid
	// during the call.
	AnchorGroups(ctx context.Context, maxDocs int, of []ContentID, fn func(ids []ContentID, anchors []int) error) error
}
