package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/simdex/simdex/index"
)

var _ index.Snapshotter = (*Store)(nil)

// snapshotKey holds a store's *snapshot in a context: each store its
// own, so that one's snapshot does not hide another's.
type snapshotKey struct{ s *Store }

// snapshot is a read transaction that a series of reads share.
type snapshot struct {
	tx *sql.Tx
}

// Snapshot implements index.Snapshotter: the reads of this store given the
// returned context run in one read transaction, on one of the readers'
// connections, held until done is called. A near-copy search reads a
// document, its fingerprint, its candidates' and then their documents:
// each on a connection of its own missed the pages the one before had
// read into its connection's cache.
//
// Every read method honours the snapshot: one that took another connection
// while the snapshot holds one could wait for ever once every connection
// is held by a snapshot.
func (s *Store) Snapshot(ctx context.Context) (context.Context, func(), error) {
	if s.snapshotIn(ctx) != nil {
		return ctx, func() {}, nil
	}
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return ctx, nil, fmt.Errorf("begin read snapshot: %w", s.mapErr(err))
	}
	return context.WithValue(ctx, snapshotKey{s}, &snapshot{tx: tx}), func() { _ = tx.Rollback() }, nil
}

// snapshotIn returns this store's snapshot in ctx, or nil.
func (s *Store) snapshotIn(ctx context.Context) *snapshot {
	sn, _ := ctx.Value(snapshotKey{s}).(*snapshot)
	return sn
}

// readTx returns the read transaction of ctx's snapshot, or a new one; end
// ends it (and does nothing for a snapshot's, which its owner ends).
func (s *Store) readTx(ctx context.Context) (tx *sql.Tx, end func(), err error) {
	if sn := s.snapshotIn(ctx); sn != nil {
		return sn.tx, func() {}, nil
	}
	if tx, err = s.r.BeginTx(ctx, nil); err != nil {
		return nil, nil, s.mapErr(err)
	}
	return tx, func() { _ = tx.Rollback() }, nil
}

// readStmt returns the readers' statement for query, bound to ctx's
// snapshot if it has one.
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if sn := s.snapshotIn(ctx); sn != nil {
		return s.rs.in(ctx, sn.tx, query)
	}
	return s.rs.get(ctx, query)
}

// reads returns what ctx's reads of unprepared statements run on: the
// readers' pool, or ctx's snapshot.
func (s *Store) reads(ctx context.Context) querier {
	if sn := s.snapshotIn(ctx); sn != nil {
		return sn.tx
	}
	return s.r
}
