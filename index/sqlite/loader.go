package sqlite

import (
	"context"
	"fmt"
	"log/slog"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// beginBulk makes s a bulk load (Options.DeferPostings) if no content of
// the index is posted: it is empty, or holds a bulk load that did not get
// to settle (killed, or the machine lost), which s carries on, with the
// pending contents' postings and text pieces in memory as if it had stored
// them (posting them at open and loading the rest a document at a time
// made a rerun of a 50,000-file scan killed after 5 s take 71 s instead of
// 20). What it reads, it reads in one transaction of the writer, which no
// other process's write interleaves.
func (s *Store) beginBulk(ctx context.Context, path string, log *slog.Logger) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin a bulk load: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	if s.deferPosts, err = nonePosted(ctx, tx); err != nil || !s.deferPosts {
		return err
	}
	if s.bulk, err = pendingPieces(ctx, tx); err != nil {
		return err
	}
	if s.bulkPosts, err = pendingInMemory(ctx, tx); err != nil {
		return err
	}
	if s.seen, err = newBulkSeen(ctx, tx); err != nil {
		return err
	}
	if n := len(s.bulkPosts.ids); n > 0 && log != nil {
		log.Info("carrying on a bulk load that did not settle", "path", path, "contents", n)
	}
	return nil
}

// SettleDeferred does now what a bulk load (Options.DeferPostings,
// Options.DeferBandShares) leaves to Close, so that the caller can do
// other work meanwhile: the writer's connection does it, and queries go
// on. Close then finds nothing to do, unless documents were put since.
func (s *Store) SettleDeferred(ctx context.Context) error {
	if s.deferPosts {
		if err := s.settlePostings(ctx, s.logger, slog.LevelDebug); err != nil {
			return err
		}
	}
	if err := s.settlePieces(ctx); err != nil {
		return err
	}
	if s.deferShares {
		return s.settleBandShares(ctx, s.logger, slog.LevelDebug)
	}
	return nil
}

// SettlePostings makes the postings a bulk load (Options.DeferPostings)
// has deferred searchable, and nothing else: a bulk load that analyses
// its postings next calls it. When they are every posting of the index,
// they are sorted in memory, where Groups, AnchorGroups and ChunkContents
// read them, and inserted by SettleDeferred or Close (bulkview.go);
// otherwise they are inserted now. Either way the band shares are left to
// Close.
func (s *Store) SettlePostings(ctx context.Context) error {
	if !s.deferPosts {
		return nil
	}
	if kept, err := s.keepPostings(ctx); err != nil || kept {
		return err
	}
	return s.settlePostings(ctx, s.logger, slog.LevelDebug)
}
