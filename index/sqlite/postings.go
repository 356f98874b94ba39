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

// settlePostings inserts the postings of the contents a bulk load left
// pending (Options.DeferPostings), in key order, in one transaction, and
// clears the list. Each table's B-tree is then written from one end to
// the other once, instead of a few rows on each of its pages at every
// commit of the load. It logs at level what it did, as settleBandShares.
func (s *Store) settlePostings(ctx context.Context, log *slog.Logger, level slog.Level) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Read first: every open runs this, and a write transaction would wait
	// for the write lock (a load writing the same file) to find nothing.
	if pending, err := postingsPending(ctx, s.w); err != nil || !pending {
		return err
	}
	start := time.Now()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("post deferred postings: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	// Another process's anchor lists in memory learn of the change from
	// the anchor generation; this one's, if any, from the delta (a scan
	// keeps none, and tracking each posting cost it a tenth of this).
	var d anchorDelta
	stmts := txStmts{tx: tx, pool: s.ws}
	if s.mem != nil {
		stmts.anchors = &d
	}
	var posts postings // reused: grown to the size of a batch once
	posted, anchors, after := 0, 0, int64(0)
	for {
		n, last, err := pendingPostings(ctx, tx, after, &posts)
		if err != nil {
			return fmt.Errorf("post deferred postings: %w", err)
		}
		if n == 0 {
			break
		}
		anchors += len(posts[samplePostings])
		if err := posts.flush(ctx, &stmts); err != nil {
			return fmt.Errorf("post deferred postings: %w", err)
		}
		posted, after = posted+n, last
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM pending_postings"); err != nil {
		return fmt.Errorf("post deferred postings: %w", err)
	}
	if stmts.anchors != nil {
		err = countAnchorChanges(ctx, &stmts, &d)
	} else if anchors > 0 {
		_, err = bumpAnchorsGen(ctx, &stmts)
	}
	if err != nil {
		return fmt.Errorf("post deferred postings: %w", err)
	}
	if err := s.commit(tx, &d); err != nil {
		return fmt.Errorf("post deferred postings: commit: %w", s.mapErr(err))
	}
	if log != nil {
		log.Log(ctx, level, "posted the contents of a bulk load", "path", s.path, "contents", posted, "seconds", time.Since(start).Seconds())
	}
	return nil
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
