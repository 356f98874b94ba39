package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/simdex/simdex/index"
)

// Put commits entries in one transaction, leaving what a bulk load defers.
func (s *Store) Put(ctx context.Context, entries []index.Entry) ([]index.Committed, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	l := s.load
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("put documents: %w", s.mapErr(err))
	}
	var d anchorDelta
	out, released, err := s.put(ctx, tx, entries, &d, l)
	if err != nil {
		tx.Rollback()
		l.endTx(false)
		s.dirs.end(false)
		return nil, fmt.Errorf("put documents: %w", s.mapErr(err))
	}
	if released {
		defer s.over.forget() // postings are gone once committed
		l.released()
	}
	if err := s.commit(tx, &d); err != nil {
		l.endTx(false)
		s.dirs.end(false)
		return nil, fmt.Errorf("put documents: commit: %w", s.mapErr(err))
	}
	l.endTx(true)
	s.dirs.end(true)
	return out, nil
}

// commit commits a write transaction whose anchor changes are d, and
// brings the in-memory anchor lists up to it.
func (s *Store) commit(tx *sql.Tx, d *anchorDelta) error {
	// A failed commit changed nothing; had it changed the store after all,
	// the next commit would find the generation moved and load the lists.
	if err := tx.Commit(); err != nil {
		return err
	}
	s.committed()
	if d.bumped {
		s.committedAnchors(d)
	}
	return nil
}

// countAnchorChanges counts tx's changes to anchor postings, if any, in
// the anchor generation.
func countAnchorChanges(ctx context.Context, stmts *txStmts, d *anchorDelta) error {
	if len(d.ops) == 0 {
		return nil
	}
	return d.bump(ctx, stmts)
}

// bump counts the transaction's change in the anchor generation, once, and
// records the generation it changed.
func (d *anchorDelta) bump(ctx context.Context, stmts *txStmts) error {
	if d.bumped {
		return nil
	}
	before, err := bumpAnchorsGen(ctx, stmts)
	if err != nil {
		return err
	}
	d.before, d.bumped = before, true
	return nil
}

// putTx is one Put's transaction: its statements and what it collects.
type putTx struct {
	stmts    txStmts
	l        *Loader   // the load under way, nil in a live store
	seen     *bulkSeen // what the load has seen stored, while that holds
	dirs     *dirCache // the store's key prefixes
	now      int64
	out      []index.Committed
	released bool     // replacing older versions deleted postings
	body     []byte   // a fingerprint's encoding, reused
	posts    postings // the postings of the contents created
}

// put stores entries in tx; released reports that replacing older
// versions deleted postings.
func (s *Store) put(ctx context.Context, tx *sql.Tx, entries []index.Entry, d *anchorDelta, l *Loader) (out []index.Committed, released bool, err error) {
	p := &putTx{stmts: txStmts{tx: tx, pool: s.ws, anchors: d, mem: s.mem}, l: l, dirs: &s.dirs, now: s.now().UnixNano(), out: make([]index.Committed, len(entries))}
	if err := p.begin(ctx, entries); err != nil {
		return nil, false, err
	}
	for i := range entries {
		if err := s.putEntry(ctx, p, entries, i); err != nil {
			return nil, false, err
		}
	}
	if err := p.stmts.tw.flush(ctx, &p.stmts); err != nil {
		return nil, false, err
	}
	if err := p.posts.flush(ctx, &p.stmts); err != nil {
		return nil, false, err
	}
	if err := countAnchorChanges(ctx, &p.stmts, p.stmts.anchors); err != nil {
		return nil, false, err
	}
	return p.out, p.released, nil
}

// begin marks the band shares stale if the load defers them, looks the
// pieces of the entries' texts up, and takes what the load has seen
// stored.
func (p *putTx) begin(ctx context.Context, entries []index.Entry) error {
	var pieces *bulkPieces
	var seen *bulkSeen
	if p.l != nil {
		pieces, seen = p.l.pieces, p.l.seen
	}
	if p.l != nil && p.l.deferred {
		if err := p.stmts.exec(ctx, "INSERT OR REPLACE INTO meta (key, value) VALUES ('"+bandSharesStaleKey+"', '1')"); err != nil {
			return fmt.Errorf("mark band shares stale: %w", err)
		}
	}
	if err := p.stmts.texts(ctx, pieces).lookUp(ctx, &p.stmts, entries); err != nil {
		return err
	}
	var err error
	p.seen, err = seen.begin(ctx, p.stmts.tx)
	return err
}

// putEntry stores entries[i]: nothing if its idempotency key is stored,
// else its document, replacing the older versions of its key unless it
// keeps them, and its content.
func (s *Store) putEntry(ctx context.Context, p *putTx, entries []index.Entry, i int) error {
	e := &entries[i]
	d := &e.Doc
	idem := d.IdempotencyKey()
	if p.seen == nil || !p.seen.newIdem(idem) {
		if dup, err := p.stored(ctx, idem, d.Key); err != nil || dup != nil {
			if dup != nil {
				p.out[i] = *dup
			}
			return err
		}
	}
	if !d.KeepVersions && e.Parent < 0 && (p.seen == nil || !p.seen.newKey(d.Key)) {
		// Removal deletes the postings of released contents: those
		// of this transaction's contents must be in place first, but
		// only when there is something to remove, so that postings
		// stay batched in the usual case of a new key.
		flush := func() error { return p.posts.flush(ctx, &p.stmts) }
		replaced, rel, err := s.removeTx(ctx, &p.stmts, d.Key, "", flush, p.stmts.anchors)
		if err != nil {
			return err
		}
		p.out[i].Replaced = replaced
		p.released = p.released || rel
	}
	parent := sql.NullInt64{Int64: int64(d.Parent), Valid: d.Parent != 0}
	if e.Parent >= 0 {
		if e.Parent >= i {
			return fmt.Errorf("entry %d: parent %d must come before it", i, e.Parent)
		}
		parent = sql.NullInt64{Int64: int64(p.out[e.Parent].ID), Valid: true}
	}
	content, created, err := s.putEntryContent(ctx, p, e)
	if err != nil {
		return err
	}
	id, err := p.insertDocument(ctx, e, idem, parent, content)
	if err != nil {
		return err
	}
	p.out[i].ID, p.out[i].Content = index.DocID(id), index.ContentID(content.Int64)
	if p.seen != nil {
		var sha []byte
		if e.Fingerprint != nil {
			sha = e.Fingerprint.TextSHA256[:]
		}
		p.seen.stored(id, idem, d.Key, sha, created)
	}
	return nil
}

// stored returns the document stored under idem as a duplicate, or nil.
func (p *putTx) stored(ctx context.Context, idem, key string) (*index.Committed, error) {
	var existing int64
	var cid sql.NullInt64
	err := p.stmts.queryRow(ctx, "SELECT id, content_id FROM document_view WHERE idem_hash = ? AND idem = ?", strHash(idem), idem).Scan(&existing, &cid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up %q: %w", key, err)
	}
	return &index.Committed{ID: index.DocID(existing), Content: index.ContentID(cid.Int64), Duplicate: true}, nil
}

// putEntryContent stores e's content and text, if it has them: created is
// the content's id when this put created it, else 0.
func (s *Store) putEntryContent(ctx context.Context, p *putTx, e *index.Entry) (content sql.NullInt64, created int64, err error) {
	fp := e.Fingerprint
	if fp == nil {
		return content, 0, nil
	}
	c, isNew, err := s.putContent(ctx, p, fp, e.Bands)
	if err != nil {
		return content, 0, fmt.Errorf("store content of %q: %w", e.Doc.Key, err)
	}
	if e.Text != nil {
		if err := s.putText(ctx, &p.stmts, c, isNew, e.Text, e.Prepared); err != nil {
			return content, 0, fmt.Errorf("store text of %q: %w", e.Doc.Key, err)
		}
	}
	if isNew {
		created = int64(c)
	}
	return sql.NullInt64{Int64: int64(c), Valid: true}, created, nil
}

// insertDocument inserts e's document row and returns its id.
func (p *putTx) insertDocument(ctx context.Context, e *index.Entry, idem string, parent, content sql.NullInt64) (int64, error) {
	d := &e.Doc
	var rawSHA []byte
	rawSize := e.RawSize
	if e.RawSHA256 != ([32]byte{}) {
		rawSHA = e.RawSHA256[:]
	}
	if fp := e.Fingerprint; fp != nil {
		rawSHA, rawSize = fp.RawSHA256[:], fp.RawSize
	}
	path := []byte("[]") // not null, as a nil Path would marshal
	if d.Path != nil {
		path, _ = json.Marshal(d.Path)
	}
	meta, _ := json.Marshal(d.Meta)
	var modTime int64
	if !d.ModTime.IsZero() {
		modTime = d.ModTime.UnixNano()
	}
	r := encodeDoc(docRow{source: d.Source, parent: parent, mediaType: d.MediaType, modTime: modTime, indexedAt: p.now,
		err: d.Error, keep: d.KeepVersions, rawSHA: rawSHA, rawSize: rawSize, content: content},
		d.Key, d.VersionID, idem, d.Name, string(path), string(meta))
	r.origin = encodeOrigin(d.Origin)
	id, err := insertDocRow(ctx, p.stmts.queryRow, p.dirs, "documents", 0, r)
	if err != nil {
		return 0, fmt.Errorf("insert %q: %w", d.Key, err)
	}
	return id, nil
}

// putContent stores fp's content once and counts a reference to it; the
// postings of a new content are added to p's, or to the load's when it
// defers them.
func (s *Store) putContent(ctx context.Context, p *putTx, fp *index.Fingerprint, bands []uint64) (_ index.ContentID, created bool, err error) {
	if id, err := p.countReference(ctx, fp); err != nil || id != 0 {
		return index.ContentID(id), false, err
	}
	stmts := &p.stmts
	deferred := p.l != nil && p.l.deferred
	p.body = fp.AppendBody(p.body[:0])
	keys := make([]int64, len(bands))
	for i, b := range bands {
		keys[i] = postingKey(b)
	}
	bandBlob := encodeBands(fp, bands, keys)
	var shares shared
	if !deferred {
		if shares, err = stmts.bands.shareOf(ctx, stmts, keys); err != nil {
			return 0, false, err
		}
	}
	anchors := fp.Anchors()
	var id int64
	err = stmts.queryRow(ctx, "INSERT INTO contents (text_sha256, text_size, simhash, body, bands, refs, anchors) VALUES (?, ?, ?, ?, ?, 1, ?) RETURNING id",
		fp.TextSHA256[:], fp.TextSize, int64(fp.SimHash), p.body, bandBlob, len(anchors)).Scan(&id)
	if err != nil {
		return 0, false, err
	}
	if !deferred {
		if err := stmts.bands.stored(ctx, stmts, id, keys, shares); err != nil {
			return 0, false, err
		}
	}
	if deferred {
		if err := stmts.exec(ctx, "INSERT INTO pending_postings (content_id) VALUES (?)", id); err != nil {
			return 0, false, fmt.Errorf("defer postings: %w", err)
		}
		p.l.posts.add(id, fp, keys)
		return index.ContentID(id), true, nil
	}
	p.posts.addContent(id, fp, keys)
	return index.ContentID(id), true, nil
}

// countReference counts a reference to the stored content holding fp's
// text and returns its id, or 0 when none holds it. p.seen, when not nil,
// tells a text certainly not stored (not asked of the table) from one
// that may be (asked by content id first).
func (p *putTx) countReference(ctx context.Context, fp *index.Fingerprint) (int64, error) {
	known, maybe := int64(0), true
	if p.seen != nil {
		known, maybe = p.seen.text(fp.TextSHA256[:])
	}
	if known != 0 {
		id, err := p.bump(ctx, "UPDATE contents SET refs = refs + 1 WHERE id = ? AND text_sha256 = ? RETURNING id", known, fp.TextSHA256[:])
		if err != nil || id != 0 {
			return id, err
		}
	}
	if !maybe {
		return 0, nil
	}
	return p.bump(ctx, "UPDATE contents SET refs = refs + 1 WHERE text_sha256 = ? RETURNING id", fp.TextSHA256[:])
}

// bump runs query, which counts a reference to a content, and returns
// the content's id, or 0 when it counted none.
func (p *putTx) bump(ctx context.Context, query string, args ...any) (int64, error) {
	var id int64
	if err := p.stmts.queryRow(ctx, query, args...).Scan(&id); !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	return 0, nil
}
