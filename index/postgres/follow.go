package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/index"
)

// Follow implements index.Follower, in one round trip. Positions are
// transaction ids (xid8): each content records the transaction that wrote
// it, and the position returned is the oldest transaction still running
// when asked (pg_snapshot_xmin), so that a transaction that commits later
// with an older id than another is not missed. Contents of transactions
// running then are reported again by the next call.
func (s *Store) Follow(ctx context.Context, since uint64) (index.Changes, error) {
	var ch index.Changes
	if err := s.errClosed(); err != nil {
		return ch, err
	}
	b := &pgx.Batch{}
	b.Queue("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::int8, (SELECT count(*) FROM index_templates)").QueryRow(func(row pgx.Row) error {
		return row.Scan(&ch.Next, &ch.Templates)
	})
	if since > 0 {
		b.Queue("SELECT id, simhash FROM index_contents WHERE xid >= $1::int8::text::xid8", int64(since)).Query(func(rows pgx.Rows) error {
			return scanEach(rows, func() error {
				var c index.ContentSimHash
				var h int64
				err := rows.Scan(&c.ID, &h)
				c.SimHash = uint64(h)
				ch.Contents = append(ch.Contents, c)
				return err
			})
		})
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return ch, fmt.Errorf("follow index changes: %w", err)
	}
	return ch, nil
}
