package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/simdex/simdex/index"
)

// settleBatch is how many pending contents settlePostings posts at a
// time: their postings (about 50 per 7 KB text) are held in memory and
// sorted by key before they are inserted.
const settleBatch = 16384

// settleBulk does what a bulk load deferred (Options.DeferPostings,
// Options.DeferBandShares), if left says something is: work runs in one
// transaction of the writer, which commits with the anchor changes it
// records in its delta, and what was done is logged at level (Info when
// an open finds it left by a load that did not get to close, Debug when a
// load settles its own), with work's attributes.
func (s *Store) settleBulk(ctx context.Context, what string, left func(context.Context, querier) (bool, error),
	work func(*sql.Tx, *anchorDelta) ([]any, error), log *slog.Logger, level slog.Level) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Read first: every open runs this, and a write transaction would wait
	// for the write lock (a load writing the same file) to find nothing.
	if some, err := left(ctx, s.w); err != nil || !some {
		return err
	}
	start := time.Now()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("settle %s: %w", what, s.mapErr(err))
	}
	defer tx.Rollback()
	if some, err := left(ctx, tx); err != nil || !some {
		return err // settled by another process meanwhile
	}
	var d anchorDelta
	attrs, err := work(tx, &d)
	if err != nil {
		return fmt.Errorf("settle %s: %w", what, err)
	}
	if err := s.commit(tx, &d); err != nil {
		return fmt.Errorf("settle %s: commit: %w", what, s.mapErr(err))
	}
	if log != nil {
		log.Log(ctx, level, "settled the "+what+" left by a bulk load", append([]any{"path", s.path, "seconds", time.Since(start).Seconds()}, attrs...)...)
	}
	return nil
}

// settlePostings inserts the postings of the contents a bulk load left
// pending (Options.DeferPostings), in key order, in one transaction, and
// clears the list. Each table's B-tree is then written from one end to
// the other once, instead of a few rows on each of its pages at every
// commit of the load.
func (s *Store) settlePostings(ctx context.Context, log *slog.Logger, level slog.Level) error {
	return s.settleBulk(ctx, "postings", postingsPending, func(tx *sql.Tx, d *anchorDelta) ([]any, error) {
		// Another process's anchor lists in memory learn of the change
		// from the anchor generation; this one's, if any, from the delta
		// (a scan keeps none, and tracking each posting cost it a tenth
		// of this).
		stmts := txStmts{tx: tx, pool: s.ws}
		if s.mem != nil {
			stmts.anchors = d
		}
		var posts postings // reused: grown to the size of a batch once
		posted, anchors, after := 0, 0, int64(0)
		for {
			n, last, err := pendingPostings(ctx, tx, after, &posts)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				break
			}
			anchors += len(posts[samplePostings])
			if err := posts.flush(ctx, &stmts); err != nil {
				return nil, err
			}
			posted, after = posted+n, last
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM pending_postings"); err != nil {
			return nil, err
		}
		var err error
		if stmts.anchors != nil {
			err = countAnchorChanges(ctx, &stmts, d)
		} else if anchors > 0 {
			_, err = bumpAnchorsGen(ctx, &stmts)
		}
		return []any{"contents", posted}, err
	}, log, level)
}

// pendingPostings adds to posts the postings of up to settleBatch pending
// contents with ids above after, and returns how many and the last id.
// A pending content removed since is gone with its row.
func pendingPostings(ctx context.Context, tx *sql.Tx, after int64, posts *postings) (n int, last int64, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT c.id, c.body, c.bands FROM pending_postings p JOIN contents c ON c.id = p.content_id
		WHERE p.content_id > ? ORDER BY p.content_id LIMIT ?`, after, settleBatch)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var fp index.Fingerprint
	for rows.Next() {
		var body, bands []byte
		if err := rows.Scan(&last, &body, &bands); err != nil {
			return 0, 0, err
		}
		if err := fp.DecodeBody(body); err != nil {
			return 0, 0, fmt.Errorf("content %d: %w", last, err)
		}
		posts.addContent(last, &fp, bandKeys(bands))
		n++
	}
	return n, last, rows.Err()
}

// postingsPending reports whether a bulk load left contents to post.
func postingsPending(ctx context.Context, q querier) (bool, error) {
	var pending bool
	if err := q.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pending_postings)").Scan(&pending); err != nil {
		return false, fmt.Errorf("look for deferred postings: %w", err)
	}
	return pending, nil
}

// noContents reports whether the index holds no content.
func noContents(ctx context.Context, q querier) (bool, error) {
	var some bool
	if err := q.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM contents)").Scan(&some); err != nil {
		return false, fmt.Errorf("look for contents: %w", err)
	}
	return !some, nil
}
