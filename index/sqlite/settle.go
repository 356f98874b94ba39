package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/simdex/simdex/index"
)

// settleBatch is how many pending contents settlePostings posts at a
// time: their postings (about 50 per 7 KB text) are held in memory and
// sorted by key before they are inserted.
const settleBatch = 16384

// settleBulk does what a bulk load (Loader) deferred, if left says something is: work runs in one
// transaction of the writer, which commits with the anchor changes it
// records in its delta, and what was done is logged at level (Info when
// an open finds it left by a load that did not get to close, Debug when a
// load settles its own), with work's attributes.
func (s *Store) settleBulk(ctx context.Context, what string, left func(context.Context, querier) (bool, error),
	work func(*sql.Tx, *anchorDelta) ([]any, error), level slog.Level) error {
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
	s.logger.Log(ctx, level, "settled the "+what+" left by a bulk load", append([]any{"path", s.path, "seconds", time.Since(start).Seconds()}, attrs...)...)
	return nil
}

// settlePostings inserts the postings of the contents a bulk load left
// pending (Loader), in key order, in one transaction, and
// clears the list. Each table's B-tree is then written from one end to
// the other once, instead of a few rows on each of its pages at every
// commit of the load. A live store settles at open what a load that did
// not get to close left.
func (s *Store) settlePostings(ctx context.Context, level slog.Level) error {
	l := s.load
	err := s.settleBulk(ctx, "postings", postingsPending, func(tx *sql.Tx, d *anchorDelta) ([]any, error) {
		// Another process's anchor lists in memory learn of the change
		// from the anchor generation; this one's, if any, from the delta
		// (a scan keeps none, and tracking each posting cost it a tenth
		// of this).
		stmts := txStmts{tx: tx, pool: s.ws}
		if s.mem != nil {
			stmts.anchors = d
		}
		// What is in memory is taken once, whatever becomes of this
		// transaction: if it rolls back, the next settlement finds the
		// pending contents not in memory and reads them.
		var b *bulkPostings
		if l != nil && l.posts != nil {
			b, l.posts = l.posts, &bulkPostings{}
		}
		// The view of b's postings stays true once they are inserted
		// from memory: they are the tables' then. Otherwise the tables
		// answer once this commits.
		if v := l.loadView(); v == nil || v.load != b {
			l.dropView()
		}
		if b != nil && !b.released {
			if attrs, ok, err := s.settleFromMemory(ctx, &stmts, d, b, l); err != nil || ok {
				return attrs, err
			}
		}
		l.dropView()
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
		return []any{"contents", posted}, s.clearPending(ctx, &stmts, d, anchors)
	}, level)
	if err != nil {
		s.mu.Lock()
		l.wrote() // the band shares were computed from postings not committed
		s.mu.Unlock()
	}
	return err
}

// settleFromMemory inserts the postings a bulk load kept in memory, b,
// when they are exactly the pending contents': ok is false when they are
// not, and nothing was written. The tables are sorted at once, and the
// band shares computed while the postings are inserted: the single
// writer is all a scan does here, and another core was idle (2.2 s of a
// 50,000-file scan, 0.6 s less).
func (s *Store) settleFromMemory(ctx context.Context, stmts *txStmts, d *anchorDelta, b *bulkPostings, l *Loader) (attrs []any, ok bool, err error) {
	if same, err := pendingAre(ctx, stmts.tx, b.ids); err != nil || !same {
		return nil, false, err
	}
	sorted := b.sort()
	var wg sync.WaitGroup
	anchors := len(sorted[samplePostings])
	// Into tables with no band posting yet, these are all of them: the
	// band shares follow from them alone.
	var posted bool
	if err := stmts.tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM band_postings)").Scan(&posted); err != nil {
		return nil, false, fmt.Errorf("look for band postings: %w", err)
	}
	var shares *memShares
	if !posted {
		bands := sorted[bandPostings] // insert empties sorted, not the rows
		wg.Go(func() { shares = bandSharesOf(bands) })
	}
	err = sorted.insert(ctx, stmts)
	wg.Wait()
	if err != nil {
		return nil, false, err
	}
	if shares != nil {
		if shares.version, err = dataVersion(ctx, stmts.tx); err != nil {
			return nil, false, err
		}
		l.shares = shares
	}
	return []any{"contents", len(b.ids), "from", "memory"}, true, s.clearPending(ctx, stmts, d, anchors)
}

// pendingAre reports whether the contents pending_postings lists are ids
// (ascending): then a bulk load's postings in memory are theirs.
func pendingAre(ctx context.Context, q querier, ids []int64) (bool, error) {
	pending, err := queryIDs(ctx, q, "SELECT content_id FROM pending_postings ORDER BY content_id")
	if err != nil {
		return false, fmt.Errorf("read pending contents: %w", err)
	}
	return slices.Equal(pending, ids), nil
}

// clearPending ends a settlement of postings that inserted anchors
// anchor postings (anchors: how many): it empties pending_postings and
// records the anchor changes.
func (s *Store) clearPending(ctx context.Context, stmts *txStmts, d *anchorDelta, anchors int) error {
	if _, err := stmts.tx.ExecContext(ctx, "DELETE FROM pending_postings"); err != nil {
		return err
	}
	if stmts.anchors != nil {
		return countAnchorChanges(ctx, stmts, d)
	}
	if anchors > 0 {
		_, err := bumpAnchorsGen(ctx, stmts)
		return err
	}
	return nil
}

// bulkPostings are the postings of the contents a bulk load (Loader)
// stores, kept in memory so that settling them
// need not read and decode every stored fingerprint again (a third of
// the 50,000-file scan's 4.3 s of settling). Their pending_postings rows
// are written all the same: a crash loses the memory, and the next open
// posts them from the database. Settling takes them from memory only when
// they are exactly the pending contents' and no content was released
// meanwhile (a replacement).
type bulkPostings struct {
	// stored holds each committed transaction's postings, table by
	// table, as they were added: appended to one slice, they were copied
	// at each doubling, into memory touched afresh, 1.8 s of the single
	// writer's time in the 50,000-file scan.
	stored [3][][]posting
	added  postings // by the transaction under way
	// ids and addedIDs are the contents of stored and added, ascending
	// (contents ids are AUTOINCREMENT: never reused).
	ids, addedIDs []int64
	released      bool // a content was (or may have been) released
	sorted        bool // stored holds one block per table, sorted by key (sort)
}

// add records the postings of content id, just stored.
func (b *bulkPostings) add(id int64, fp *index.Fingerprint, bandKeys []int64) {
	if b != nil {
		b.added.addContent(id, fp, bandKeys)
		b.addedIDs = append(b.addedIDs, id)
	}
}

// commit keeps the postings of the transaction just committed.
func (b *bulkPostings) commit() {
	if b == nil {
		return
	}
	for t, rows := range b.added {
		if len(rows) > 0 {
			b.sorted = false
			b.stored[t] = append(b.stored[t], rows)
			b.added[t] = make([]posting, 0, len(rows)) // the next is likely as large
		}
	}
	b.ids = append(b.ids, b.addedIDs...)
	b.addedIDs = b.addedIDs[:0]
}

// discard forgets the postings of a transaction rolled back.
func (b *bulkPostings) discard() {
	if b == nil {
		return
	}
	for t := range b.added {
		b.added[t] = b.added[t][:0]
	}
	b.addedIDs = b.addedIDs[:0]
}

// release records that a content may have been released: settling then
// reads the pending contents from the database.
func (b *bulkPostings) release() {
	if b != nil {
		b.released = true
	}
}

// sortPostingsByKey returns the postings of blocks in one slice, sorted by
// key, stably (postings added in content order end up in (key, content)
// order), with two radix passes over the 31-bit keys: the first reads the
// blocks, the second the first's output.
func sortPostingsByKey(blocks [][]posting) []posting {
	n := 0
	var low, high [1 << 16]int
	for _, rows := range blocks {
		n += len(rows)
		for _, r := range rows {
			low[r.h&0xffff]++
			high[(r.h>>16)&0xffff]++
		}
	}
	offsets := func(count *[1 << 16]int) {
		pos := 0
		for d, k := range count {
			count[d] = pos
			pos += k
		}
	}
	offsets(&low)
	offsets(&high)
	first, out := make([]posting, n), make([]posting, n)
	for _, rows := range blocks {
		for _, r := range rows {
			d := r.h & 0xffff
			first[low[d]] = r
			low[d]++
		}
	}
	for _, r := range first {
		d := (r.h >> 16) & 0xffff
		out[high[d]] = r
		high[d]++
	}
	return out
}

// pendingPostings adds to posts the postings of up to settleBatch pending
// contents with ids above after, and returns how many and the last id.
// A pending content removed since is gone with its row.
func pendingPostings(ctx context.Context, tx *sql.Tx, after int64, posts *postings) (n int, last int64, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT c.id, c.body, c.bands FROM pending_postings p JOIN contents c ON c.id = p.content_id
		WHERE p.content_id > ? ORDER BY p.content_id LIMIT ?`, after, settleBatch)
	var fp index.Fingerprint
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var body, bands []byte
		if err := rows.Scan(&last, &body, &bands); err != nil {
			return err
		}
		if err := fp.DecodeBody(body); err != nil {
			return fmt.Errorf("content %d: %w", last, err)
		}
		posts.addContent(last, &fp, bandKeysOf(&fp, bands))
		n++
		return nil
	})
	return n, last, err
}

// postingsPending reports whether a bulk load left contents to post.
func postingsPending(ctx context.Context, q querier) (bool, error) {
	var pending bool
	if err := q.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pending_postings)").Scan(&pending); err != nil {
		return false, fmt.Errorf("look for deferred postings: %w", err)
	}
	return pending, nil
}

// nonePosted reports whether no content of the index is posted: it holds
// none, or only contents a bulk load left pending.
func nonePosted(ctx context.Context, q querier) (bool, error) {
	var posted bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM contents WHERE id NOT IN (SELECT content_id FROM pending_postings))`).Scan(&posted)
	if err != nil {
		return false, fmt.Errorf("look for posted contents: %w", err)
	}
	return !posted, nil
}

// pendingInMemory returns the postings of the contents a bulk load left
// pending, read from their fingerprints, as a load that had stored them
// itself would hold them: settling then takes them from memory, and the
// analysis reads them there (bulkview.go).
func pendingInMemory(ctx context.Context, tx *sql.Tx) (*bulkPostings, error) {
	b := &bulkPostings{}
	var err error
	if b.addedIDs, err = queryIDs(ctx, tx, "SELECT content_id FROM pending_postings ORDER BY content_id"); err != nil {
		return nil, fmt.Errorf("read pending contents: %w", err)
	}
	for after := int64(0); ; {
		n, last, err := pendingPostings(ctx, tx, after, &b.added)
		if err != nil {
			return nil, fmt.Errorf("read pending postings: %w", err)
		}
		if n == 0 {
			break
		}
		after = last
	}
	b.commit()
	return b, nil
}
