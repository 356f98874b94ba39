package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/simdex/simdex/index"
)

func (s *Store) migrate(ctx context.Context, log *slog.Logger) error {
	var v int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("%w: store has version %d, this simdex knows up to %d", index.ErrSchemaVersion, v, schemaVersion)
	}
	if log == nil || v == 0 { // a new store: nothing to report
		log = slog.New(slog.DiscardHandler)
	}
	for ; v < schemaVersion; v++ {
		// Each step is one transaction: a crash leaves the previous version,
		// and the next open carries on from there.
		start := time.Now()
		log.Info("migrating index schema", "path", s.path, "from", v, "to", v+1)
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if fill := backfills[v+1]; fill != nil {
			if err := fill(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		log.Info("migrated index schema", "path", s.path, "to", v+1, "seconds", time.Since(start).Seconds())
	}
	return nil
}

// backfills run after the SQL of a migration, in its transaction, keyed by
// the version they migrate to.
var backfills = map[int]func(context.Context, *sql.Tx) error{
	2: backfillAnchors,
	4: blockAnchors,
	6: backfillBandShares,
}

// backfillAnchors posts the anchors of contents stored before version 2.
func backfillAnchors(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, body FROM contents")
	if err != nil {
		return fmt.Errorf("post anchors: %w", err)
	}
	type content struct {
		id      int64
		anchors []uint64
	}
	var all []content
	for rows.Next() {
		var id int64
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			rows.Close()
			return fmt.Errorf("post anchors: %w", err)
		}
		var fp index.Fingerprint
		if err := fp.DecodeBody(body); err != nil {
			rows.Close()
			return fmt.Errorf("post anchors: content %d: %w", id, err)
		}
		all = append(all, content{id, fp.Anchors()})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("post anchors: %w", err)
	}
	for _, c := range all {
		if err := insertPostings(ctx, tx, "sample_postings", c.id, c.anchors); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE contents SET anchors = ? WHERE id = ?", len(c.anchors), c.id); err != nil {
			return fmt.Errorf("post anchors: %w", err)
		}
	}
	return nil
}
