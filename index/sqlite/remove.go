package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/simdex/simdex/index"
)

// Remove deletes a document version (or every version of key) and its
// children.
func (s *Store) Remove(ctx context.Context, key, versionID string) ([]index.DocID, error) {
	l := s.load
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("remove %q: %w", key, s.mapErr(err))
	}
	var d anchorDelta
	stmts := &txStmts{tx: tx, pool: s.ws}
	ids, released, err := s.removeTx(ctx, stmts, key, versionID, nil, &d)
	if err == nil {
		err = countAnchorChanges(ctx, stmts, &d)
	}
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("remove %q: %w", key, s.mapErr(err))
	}
	if released {
		defer s.over.forget() // postings are gone once committed
		l.released()
	}
	if err := s.commit(tx, &d); err != nil {
		return nil, fmt.Errorf("remove %q: commit: %w", key, s.mapErr(err))
	}
	l.wrote()
	return ids, nil
}

// removeTx deletes the versions of key (or versionID alone) and their
// children; released reports that contents, and so postings, were
// deleted. before, if not nil, runs once there is something to remove; d
// collects the anchor postings removed.
//
// Its lookups are prepared statements: every document a scan or the
// daemon puts runs the first, and parsing it took a tenth of the single
// writer's time.
func (s *Store) removeTx(ctx context.Context, stmts *txStmts, key, versionID string, before func() error, d *anchorDelta) (removed []index.DocID, released bool, err error) {
	tx := stmts.tx
	q := "SELECT id FROM document_view WHERE key_hash = ? AND key = ? AND parent_id IS NULL"
	args := []any{strHash(key), key}
	if versionID != "" {
		q += " AND version_id = ?"
		args = append(args, versionID)
	}
	roots, err := stmtIDs(ctx, stmts, q, args...)
	if err != nil {
		return nil, false, fmt.Errorf("find versions of %q: %w", key, err)
	}
	if len(roots) == 0 {
		return nil, false, nil
	}
	if before != nil {
		if err := before(); err != nil {
			return nil, false, err
		}
	}
	// The whole family: roots and every descendant.
	var all []int64
	frontier := roots
	for len(frontier) > 0 {
		all = append(all, frontier...)
		var next []int64
		for _, id := range frontier {
			kids, err := stmtIDs(ctx, stmts, "SELECT id FROM documents WHERE parent_id = ?", id)
			if err != nil {
				return nil, false, fmt.Errorf("find children of %d: %w", id, err)
			}
			next = append(next, kids...)
		}
		frontier = next
	}
	removed = make([]index.DocID, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- { // children first
		id := all[i]
		var cid sql.NullInt64
		if err := tx.QueryRowContext(ctx, "DELETE FROM documents WHERE id = ? RETURNING content_id", id).Scan(&cid); err != nil {
			return nil, false, fmt.Errorf("delete document %d: %w", id, err)
		}
		removed = append(removed, index.DocID(id))
		if cid.Valid {
			gone, err := releaseContent(ctx, stmts, cid.Int64, d)
			if err != nil {
				return nil, false, err
			}
			released = released || gone
		}
	}
	return removed, released, nil
}

// releaseContent drops one reference and deletes the content with its
// text and postings when none is left, which it reports; d collects the
// anchor postings removed.
func releaseContent(ctx context.Context, stmts *txStmts, cid int64, d *anchorDelta) (deleted bool, err error) {
	tx := stmts.tx
	var refs int64
	var body, bands []byte
	if err := tx.QueryRowContext(ctx, "UPDATE contents SET refs = refs - 1 WHERE id = ? RETURNING refs, body, bands", cid).Scan(&refs, &body, &bands); err != nil {
		return false, fmt.Errorf("release content %d: %w", cid, err)
	}
	if refs > 0 {
		return false, nil
	}
	// Its text goes with it (ON DELETE CASCADE), once it has let go of
	// its pieces.
	if err := releaseText(ctx, stmts, cid); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM contents WHERE id = ?", cid); err != nil {
		return false, fmt.Errorf("delete content %d: %w", cid, err)
	}
	var fp index.Fingerprint
	if err := fp.DecodeBody(body); err != nil {
		return false, fmt.Errorf("release content %d: %w", cid, err)
	}
	var keys []int64
	for _, c := range fp.Chunks {
		keys = append(keys, postingKey(c.Hash))
	}
	if err := deletePostings(ctx, tx, "chunk_postings", cid, keys); err != nil {
		return false, err
	}
	for _, a := range fp.Anchors() {
		if err := removeAnchor(ctx, tx, postingKey(a), cid); err != nil {
			return false, fmt.Errorf("delete anchors of content %d: %w", cid, err)
		}
		d.remove(postingKey(a), cid)
	}
	keys = bandKeysOf(&fp, bands)
	if err := stmts.bands.unshare(ctx, stmts, cid, keys); err != nil {
		return false, fmt.Errorf("release content %d: %w", cid, err)
	}
	return true, deletePostings(ctx, tx, "band_postings", cid, keys)
}

func deletePostings(ctx context.Context, tx *sql.Tx, table string, cid int64, keys []int64) error {
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE h = ? AND c = ?", k, cid); err != nil {
			return fmt.Errorf("delete %s of content %d: %w", table, cid, err)
		}
	}
	return nil
}

// MarkDeletedAtSource records that the top-level documents ids were
// deleted at their source while a legal hold kept them: their metadata
// gains index.MetaDeletedAtSource (RFC 3339, UTC) and
// index.MetaDeletedAtSourceEvent (what reported it). The documents stay
// indexed, searchable and exportable. A document marked already keeps its
// first mark. It returns how many documents were newly marked. A document
// stored without metadata holds the JSON null, which json_set leaves as it
// is: it is marked as an empty object.
func (s *Store) MarkDeletedAtSource(ctx context.Context, ids []index.DocID, at time.Time, event string) (int, error) {
	return s.mark(ctx, "deleted at source", index.MetaDeletedAtSource, index.MetaDeletedAtSourceEvent, ids, at, event)
}

// MarkSuperseded records that the top-level documents ids were
// overwritten at their source (by event) while a legal hold kept them:
// their metadata gains index.MetaSupersededAt (RFC 3339, UTC) and
// index.MetaSupersededBy. They stay indexed beside the new version. A
// document marked already keeps its first mark. It returns how many
// documents were newly marked.
func (s *Store) MarkSuperseded(ctx context.Context, ids []index.DocID, at time.Time, event string) (int, error) {
	return s.mark(ctx, "superseded", index.MetaSupersededAt, index.MetaSupersededBy, ids, at, event)
}

// mark sets the metadata atKey to at and byKey to event on the documents
// ids that have no atKey yet, and returns how many it set.
func (s *Store) mark(ctx context.Context, what, atKey, byKey string, ids []index.DocID, at time.Time, event string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("mark %s: %w", what, s.mapErr(err))
	}
	defer tx.Rollback()
	n := 0
	for _, id := range ids {
		res, err := tx.ExecContext(ctx, `UPDATE documents SET meta = json_set(coalesce(nullif(meta, 'null'), '{}'), '$."`+atKey+`"', ?, '$."`+byKey+`"', ?)
			WHERE id = ? AND json_extract(meta, '$."`+atKey+`"') IS NULL`,
			at.UTC().Format(time.RFC3339Nano), event, int64(id))
		if err != nil {
			return 0, fmt.Errorf("mark document %d %s: %w", id, what, s.mapErr(err))
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("mark %s: commit: %w", what, s.mapErr(err))
	}
	return n, nil
}

// DeletedAtSource calls fn with every top-level document marked by
// MarkDeletedAtSource.
func (s *Store) DeletedAtSource(ctx context.Context, fn func(*index.Record) error) error {
	rs, err := s.records(ctx, "list documents deleted at source",
		`WHERE d.parent_id IS NULL AND json_extract(d.meta, '$."`+index.MetaDeletedAtSource+`"') IS NOT NULL ORDER BY d.id`)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
