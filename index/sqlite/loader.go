package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/simdex/simdex/index"
)

// Loader is a bulk load: a Store whose commits leave work a live store
// does at each commit to be done once, when the load settles (Settle, or
// Close). Into an index with no content posted (empty, or holding only
// what a killed load left pending, which it carries on) it defers the
// chunk, band and anchor postings of its contents, inserted in key order
// when it settles, and the band shares computed from them: a commit
// rewrites the posting pages its keys land on, scattered over the tables,
// and that was 9 of the 22 s a 50,000-file scan spent indexing. Meanwhile
// the load's contents are listed in pending_postings and found by id and
// by text, not as candidates of similarity queries; a Store opened after
// a crash posts them at open, a Loader carries the load on. Into an index
// holding posted contents it defers nothing: a live index keeps every
// document findable as soon as it is committed.
//
// Its methods are the Store's, which take the load into account (Store.load).
// It is safe for concurrent use.
type Loader struct {
	*store
	deferred bool                     // postings and band shares are left to settle
	pieces   *bulkPieces              // the load's text pieces, until settled (text.go)
	posts    *bulkPostings            // the load's postings, until settled (settle.go)
	shares   *memShares               // band shares computed from them, until a write
	view     atomic.Pointer[bulkView] // posts sorted, until a write (bulkview.go)
	seen     *bulkSeen                // what the load wrote (bulkseen.go); guarded by mu
}

// store names the Store a Loader embeds, unexported so that no caller
// writes to it past the load.
type store = Store

var _ index.Store = (*Loader)(nil)

// OpenLoader opens or creates the store at path, as Open does, for a bulk
// load.
func OpenLoader(ctx context.Context, path string, opts Options) (*Loader, error) {
	l := &Loader{}
	s, err := openStore(ctx, path, opts, l)
	if err != nil {
		return nil, err
	}
	l.store = s
	return l, nil
}

// begin decides what l defers. Postings are deferred if no content of
// the index is posted: it is empty, or holds a bulk load that did not get
// to settle (killed, or the machine lost), which l carries on, with the
// pending contents' postings and text pieces in memory as if it had stored
// them (posting them at open and loading the rest a document at a time
// made a rerun of a 50,000-file scan killed after 5 s take 71 s instead of
// 20). What it reads, it reads in one transaction of the writer, which no
// other process's write interleaves.
func (l *Loader) begin(ctx context.Context, s *Store) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin a bulk load: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	if l.deferred, err = nonePosted(ctx, tx); err != nil || !l.deferred {
		return err
	}
	if l.pieces, err = pendingPieces(ctx, tx); err != nil {
		return err
	}
	if l.posts, err = pendingInMemory(ctx, tx); err != nil {
		return err
	}
	if l.seen, err = newBulkSeen(ctx, tx); err != nil {
		return err
	}
	if n := len(l.posts.ids); n > 0 {
		s.logger.Info("carrying on a bulk load that did not settle", "path", s.path, "contents", n)
	}
	return nil
}

// SettlePostings makes the postings the load has deferred searchable, and
// nothing else: a load that analyses its postings next calls it. When
// they are every posting of the index, they are sorted in memory, where
// Groups, AnchorGroups and ChunkContents read them, and inserted by Settle
// or Close (bulkview.go); otherwise they are inserted now. Either way the
// band shares are left to Settle.
func (l *Loader) SettlePostings(ctx context.Context) error {
	if !l.deferred {
		return nil
	}
	if kept, err := l.keepPostings(ctx); err != nil || kept {
		return err
	}
	return l.settlePostings(ctx, slog.LevelDebug)
}

// Settle does now what the load leaves to Close, so that the caller can
// do other work meanwhile: the writer's connection does it, and queries
// go on. Close then finds nothing to do, unless documents were put since.
func (l *Loader) Settle(ctx context.Context) error {
	if !l.deferred {
		return nil
	}
	if err := l.settlePostings(ctx, slog.LevelDebug); err != nil {
		return err
	}
	if err := l.settlePieces(ctx); err != nil {
		return err
	}
	return l.settleBandShares(ctx, slog.LevelDebug)
}

// endTx keeps, when committed, or forgets what a transaction of the load
// added to its memory (text pieces, postings); l may be nil.
func (l *Loader) endTx(committed bool) {
	if l == nil {
		return
	}
	l.seen.end(committed)
	if !committed {
		l.pieces.discard()
		l.posts.discard()
		return
	}
	l.pieces.commit()
	l.posts.commit()
	l.wrote()
}

// released records that a transaction released contents: settling then
// reads the pending contents from the database; l may be nil.
func (l *Loader) released() {
	if l != nil {
		l.posts.release()
	}
}

// wrote forgets what the load computed from the index before a write:
// band shares and the view; l may be nil.
func (l *Loader) wrote() {
	if l != nil {
		l.shares = nil
		l.dropView()
	}
}
