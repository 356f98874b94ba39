package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/simdex/simdex/index"
)

// Put commits entries in one transaction.
func (s *Store) Put(ctx context.Context, entries []index.Entry) ([]index.Committed, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("put documents: %w", s.mapErr(err))
	}
	var d anchorDelta
	out, released, err := s.put(ctx, tx, entries, &d)
	if err != nil {
		tx.Rollback()
		s.endBulkTx(false)
		return nil, fmt.Errorf("put documents: %w", s.mapErr(err))
	}
	if released {
		defer s.over.forget() // postings are gone once committed
		s.bulkPosts.release()
	}
	if err := s.commit(tx, &d); err != nil {
		s.endBulkTx(false)
		return nil, fmt.Errorf("put documents: commit: %w", s.mapErr(err))
	}
	s.endBulkTx(true)
	return out, nil
}

// endBulkTx keeps, when committed, or forgets what a transaction of a
// bulk load added to the store's memory (text pieces, postings); band
// shares computed before it no longer hold.
func (s *Store) endBulkTx(committed bool) {
	s.seen.end(committed)
	if !committed {
		s.bulk.discard()
		s.bulkPosts.discard()
		return
	}
	s.bulk.commit()
	s.bulkPosts.commit()
	s.bulkShares = nil
	s.dropView()
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
	if len(d.ops) == 0 || d.bumped {
		return nil
	}
	before, err := bumpAnchorsGen(ctx, stmts)
	if err != nil {
		return err
	}
	d.before, d.bumped = before, true
	return nil
}

// put stores entries in tx; released reports that replacing older
// versions deleted postings.
func (s *Store) put(ctx context.Context, tx *sql.Tx, entries []index.Entry, d *anchorDelta) (out []index.Committed, released bool, err error) {
	out = make([]index.Committed, len(entries))
	now := s.now().UnixNano()
	var body []byte
	var posts postings
	stmts := txStmts{tx: tx, pool: s.ws, anchors: d}
	if s.deferShares {
		mark, err := stmts.prepare(ctx, "INSERT OR REPLACE INTO meta (key, value) VALUES ('"+bandSharesStaleKey+"', '1')")
		if err == nil {
			_, err = mark.ExecContext(ctx)
		}
		if err != nil {
			return nil, false, fmt.Errorf("mark band shares stale: %w", err)
		}
	}
	if err := stmts.texts(ctx, s.bulk).lookUp(ctx, &stmts, entries); err != nil {
		return nil, false, err
	}
	seen, err := s.seen.begin(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	for i := range entries {
		e := &entries[i]
		d := &e.Doc
		idem := d.IdempotencyKey()
		if seen == nil || !seen.newIdem(idem) {
			var existing int64
			var cid sql.NullInt64
			lookup, err := stmts.prepare(ctx, "SELECT id, content_id FROM documents WHERE idem = ?")
			if err != nil {
				return nil, false, err
			}
			err = lookup.QueryRowContext(ctx, idem).Scan(&existing, &cid)
			if err == nil {
				out[i] = index.Committed{ID: index.DocID(existing), Content: index.ContentID(cid.Int64), Duplicate: true}
				continue
			} else if !errors.Is(err, sql.ErrNoRows) {
				return nil, false, fmt.Errorf("look up %q: %w", d.Key, err)
			}
		}
		if !d.KeepVersions && e.Parent < 0 && (seen == nil || !seen.newKey(d.Key)) {
			// Removal deletes the postings of released contents: those
			// of this transaction's contents must be in place first, but
			// only when there is something to remove, so that postings
			// stay batched in the usual case of a new key.
			flush := func() error { return posts.flush(ctx, &stmts) }
			replaced, rel, err := s.removeTx(ctx, &stmts, d.Key, "", flush, stmts.anchors)
			if err != nil {
				return nil, false, err
			}
			out[i].Replaced = replaced
			released = released || rel
		}
		parent := sql.NullInt64{Int64: int64(d.Parent), Valid: d.Parent != 0}
		if e.Parent >= 0 {
			if e.Parent >= i {
				return nil, false, fmt.Errorf("entry %d: parent %d must come before it", i, e.Parent)
			}
			parent = sql.NullInt64{Int64: int64(out[e.Parent].ID), Valid: true}
		}
		var content sql.NullInt64
		var rawSHA, textSHA []byte
		var newContent int64 // created by this put
		rawSize := e.RawSize
		if e.RawSHA256 != ([32]byte{}) {
			rawSHA = e.RawSHA256[:]
		}
		if fp := e.Fingerprint; fp != nil {
			rawSHA, rawSize, textSHA = fp.RawSHA256[:], fp.RawSize, fp.TextSHA256[:]
			c, created, err := s.putContent(ctx, &stmts, seen, fp, e.Bands, &body, &posts)
			if err != nil {
				return nil, false, fmt.Errorf("store content of %q: %w", d.Key, err)
			}
			if e.Text != nil {
				if err := s.putText(ctx, &stmts, c, created, e.Text, e.Prepared); err != nil {
					return nil, false, fmt.Errorf("store text of %q: %w", d.Key, err)
				}
			}
			content = sql.NullInt64{Int64: int64(c), Valid: true}
			if created {
				newContent = int64(c)
			}
		}
		path, _ := json.Marshal(nonNil(d.Path))
		meta, _ := json.Marshal(d.Meta)
		insert, err := stmts.prepare(ctx, `INSERT INTO documents
			(key, version_id, idem, name, source, parent_id, path, media_type, meta, mod_time, indexed_at, error, keep_versions, raw_sha256, raw_size, content_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return nil, false, err
		}
		res, err := insert.ExecContext(ctx,
			d.Key, d.VersionID, idem, d.Name, d.Source, parent, string(path), d.MediaType, string(meta),
			unixNano(d.ModTime), now, d.Error, d.KeepVersions, rawSHA, rawSize, content)
		if err != nil {
			return nil, false, fmt.Errorf("insert %q: %w", d.Key, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, false, fmt.Errorf("insert %q: %w", d.Key, err)
		}
		out[i].ID, out[i].Content = index.DocID(id), index.ContentID(content.Int64)
		if seen != nil {
			seen.stored(id, idem, d.Key, textSHA, newContent)
		}
	}
	if err := stmts.tw.flush(ctx, &stmts); err != nil {
		return nil, false, err
	}
	if err := posts.flush(ctx, &stmts); err != nil {
		return nil, false, err
	}
	if err := countAnchorChanges(ctx, &stmts, stmts.anchors); err != nil {
		return nil, false, err
	}
	return out, released, nil
}

func nonNil(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// putContent stores fp's content once and counts a reference to it; the
// postings of a new content are added to posts.
//
// seen, when not nil, tells a text certainly not stored (not asked of
// the table) from one that may be (asked by content id first).
func (s *Store) putContent(ctx context.Context, stmts *txStmts, seen *bulkSeen, fp *index.Fingerprint, bands []uint64, buf *[]byte, posts *postings) (_ index.ContentID, created bool, err error) {
	var id int64
	var known, maybe = int64(0), true
	if seen != nil {
		known, maybe = seen.text(fp.TextSHA256[:])
	}
	if known != 0 {
		bump, err := stmts.prepare(ctx, "UPDATE contents SET refs = refs + 1 WHERE id = ? AND text_sha256 = ? RETURNING id")
		if err != nil {
			return 0, false, err
		}
		err = bump.QueryRowContext(ctx, known, fp.TextSHA256[:]).Scan(&id)
		if err == nil {
			return index.ContentID(id), false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, false, err
		}
	}
	if maybe {
		bump, err := stmts.prepare(ctx, "UPDATE contents SET refs = refs + 1 WHERE text_sha256 = ? RETURNING id")
		if err != nil {
			return 0, false, err
		}
		err = bump.QueryRowContext(ctx, fp.TextSHA256[:]).Scan(&id)
		if err == nil {
			return index.ContentID(id), false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, false, err
		}
	}
	*buf = fp.AppendBody((*buf)[:0])
	keys := make([]int64, len(bands))
	bandBlob := make([]byte, 0, 4*len(bands))
	for i, b := range bands {
		keys[i] = postingKey(b)
		bandBlob = binary.LittleEndian.AppendUint32(bandBlob, uint32(keys[i]))
	}
	var shares shared
	if !s.deferShares {
		if shares, err = stmts.bands.shareOf(ctx, stmts, keys); err != nil {
			return 0, false, err
		}
	}
	anchors := fp.Anchors()
	insert, err := stmts.prepare(ctx, "INSERT INTO contents (text_sha256, text_size, simhash, body, bands, refs, anchors) VALUES (?, ?, ?, ?, ?, 1, ?) RETURNING id")
	if err != nil {
		return 0, false, err
	}
	err = insert.QueryRowContext(ctx,
		fp.TextSHA256[:], fp.TextSize, int64(fp.SimHash), *buf, bandBlob, len(anchors)).Scan(&id)
	if err != nil {
		return 0, false, err
	}
	if !s.deferShares {
		if err := stmts.bands.stored(ctx, stmts, id, keys, shares); err != nil {
			return 0, false, err
		}
	}
	if s.deferPosts {
		pend, err := stmts.prepare(ctx, "INSERT INTO pending_postings (content_id) VALUES (?)")
		if err == nil {
			_, err = pend.ExecContext(ctx, id)
		}
		if err != nil {
			return 0, false, fmt.Errorf("defer postings: %w", err)
		}
		s.bulkPosts.add(id, fp, keys)
		return index.ContentID(id), true, nil
	}
	posts.addContent(id, fp, keys)
	return index.ContentID(id), true, nil
}
