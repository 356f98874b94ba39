package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/simdex/simdex/index"
)

// Stats counts documents and contents. A container with no text of its
// own (an archive, a message of attachments only) is stored as "empty
// text" but is no failure when its members were stored: it is not counted
// in Failed, as the pipeline's extraction-error metric does not count it.
func (s *Store) Stats(ctx context.Context) (index.Stats, error) {
	var st index.Stats
	err := s.reads(ctx).QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM documents),
		(SELECT count(*) FROM contents),
		(SELECT count(*) FROM documents d WHERE d.error != ''
			AND NOT (d.error = ? AND EXISTS (SELECT 1 FROM documents c WHERE c.parent_id = d.id)))`, index.ErrEmpty.Error()).Scan(&st.Documents, &st.Contents, &st.Failed)
	if err != nil {
		return st, fmt.Errorf("read stats: %w", s.mapErr(err))
	}
	return st, nil
}

// ErrInconsistent reports a store whose rows contradict each other.
var ErrInconsistent = errors.New("index store inconsistent")

// Check verifies the database file and the invariants a crash must never
// break: every document's content exists, every content's reference count
// matches its documents, every content has all its postings, and every
// text block's reference count matches the texts using it.
func (s *Store) Check(ctx context.Context) error {
	if err := s.checkRows(ctx); err != nil {
		return err
	}
	// Contents a bulk load (Loader) has not posted yet have
	// no postings to check.
	rows, err := s.r.QueryContext(ctx, "SELECT id, body, bands FROM contents WHERE id NOT IN (SELECT content_id FROM pending_postings)")
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	defer rows.Close()
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	defer conn.Close()
	for rows.Next() {
		var id int64
		var body, bands []byte
		if err := rows.Scan(&id, &body, &bands); err != nil {
			return fmt.Errorf("check index: %w", err)
		}
		if err := expectPostings(ctx, conn, id, body, bands); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	rows.Close()
	if err := checkBandShares(ctx, s.r); err != nil {
		return err
	}
	if err := checkTexts(ctx, s.r); err != nil {
		return err
	}
	return checkAnchorBlocks(ctx, s.r, conn)
}

// checkRows verifies the database file, that every document's content
// exists and that every content's reference count matches its documents.
func (s *Store) checkRows(ctx context.Context) error {
	var res string
	if err := s.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("check index: %w", s.mapErr(err))
	}
	if res != "ok" {
		return fmt.Errorf("check index: %w: %s", ErrInconsistent, res)
	}
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM documents d WHERE d.content_id IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM contents c WHERE c.id = d.content_id)`).Scan(&n); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("check index: %w: %d documents without their content", ErrInconsistent, n)
	}
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM contents c
		WHERE c.refs != (SELECT count(*) FROM documents d WHERE d.content_id = c.id)`).Scan(&n); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("check index: %w: %d contents with a wrong reference count", ErrInconsistent, n)
	}
	return nil
}

// expectPostings verifies that content id, of body and bands, has every
// posting.
func expectPostings(ctx context.Context, conn *sql.Conn, id int64, body, bands []byte) error {
	var fp index.Fingerprint
	if err := fp.DecodeBody(body); err != nil {
		return fmt.Errorf("check index: content %d: %w", id, err)
	}
	for _, c := range fp.Chunks {
		if err := expectPosting(ctx, conn, "chunk_postings", postingKey(c.Hash), id); err != nil {
			return err
		}
	}
	anchors := fp.Anchors()
	for _, a := range anchors {
		if err := expectAnchor(ctx, conn, postingKey(a), id, len(anchors)); err != nil {
			return err
		}
	}
	for _, k := range bandKeysOf(&fp, bands) {
		if err := expectPosting(ctx, conn, "band_postings", k, id); err != nil {
			return err
		}
	}
	return nil
}

func expectPosting(ctx context.Context, conn *sql.Conn, table string, h, c int64) error {
	var one int
	err := conn.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE h = ? AND c = ?", h, c).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check index: %w: content %d lacks a %s entry", ErrInconsistent, c, table)
	}
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	return nil
}
