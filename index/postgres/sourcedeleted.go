package postgres

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
// first mark. It returns how many documents were newly marked. One
// statement: replicas marking one document at once mark it once.
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
	if err := s.errClosed(); err != nil {
		return 0, fmt.Errorf("mark %s: %w", what, err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE index_documents
		SET meta = meta || jsonb_build_object($2::text, $3::text, $4::text, $5::text)
		WHERE id = ANY($1) AND NOT meta ? $2`,
		int64s(ids), atKey, at.UTC().Format(time.RFC3339Nano), byKey, event)
	if err != nil {
		return 0, fmt.Errorf("mark %s: %w", what, err)
	}
	return int(tag.RowsAffected()), nil
}

// DeletedAtSource calls fn with every top-level document marked by
// MarkDeletedAtSource, by id.
func (s *Store) DeletedAtSource(ctx context.Context, fn func(*index.Record) error) error {
	rs, err := s.records(ctx, "list documents deleted at source",
		` WHERE d.parent_id IS NULL AND d.meta ? '`+index.MetaDeletedAtSource+`' ORDER BY d.id`)
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
