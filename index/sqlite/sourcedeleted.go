package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/simdex/simdex/index"
)

// MarkDeletedAtSource records that the top-level documents ids were
// deleted at their source while a legal hold kept them: their metadata
// gains index.MetaDeletedAtSource (RFC 3339, UTC) and
// index.MetaDeletedAtSourceEvent (what reported it). The documents stay
// indexed, searchable and exportable. A document marked already keeps its
// first mark. It returns how many documents were newly marked.
func (s *Store) MarkDeletedAtSource(ctx context.Context, ids []index.DocID, at time.Time, event string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("mark deleted at source: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	n := 0
	for _, id := range ids {
		res, err := tx.ExecContext(ctx, `UPDATE documents SET meta = json_set(meta, '$."`+index.MetaDeletedAtSource+`"', ?, '$."`+index.MetaDeletedAtSourceEvent+`"', ?)
			WHERE id = ? AND json_extract(meta, '$."`+index.MetaDeletedAtSource+`"') IS NULL`,
			at.UTC().Format(time.RFC3339Nano), event, int64(id))
		if err != nil {
			return 0, fmt.Errorf("mark document %d deleted at source: %w", id, s.mapErr(err))
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("mark deleted at source: commit: %w", s.mapErr(err))
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
