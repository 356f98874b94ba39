package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/simdex/simdex/index"
)

// A bulk load into an empty index (Loader) keeps its
// contents' postings in memory until it settles them. The analysis that
// follows a load reads every posting list once, in key order, and counts
// the contents of shared chunks: SettlePostings sorts the postings where
// they are and leaves them there, for Groups, AnchorGroups and
// ChunkContents to read, and their insertion to Settle or Close,
// which a scan runs beside its analysis: inserted from memory, they are
// the tables' too, and the view stays. Inserted before the analysis and
// read back by it, they took 2.8 s of a 50,000-file scan, on one core.

// bulkView is a bulk load's postings, sorted by key and then content,
// when they are every posting of the index: the posting tables empty and
// the pending contents exactly the load's.
type bulkView struct {
	load   *bulkPostings // whose postings these are
	sorted postings
	// seq is the documents' and contents' AUTOINCREMENT sequences
	// (seqsQuery) when the view was taken: another process's new
	// content moves them. This process's writes drop the view.
	seq [2]int64
}

// keepPostings sorts the postings of the load in memory and makes them
// the view the grouping reads use, if they are every posting of the
// index: ok reports whether it did. Nothing is written.
func (l *Loader) keepPostings(ctx context.Context) (ok bool, err error) {
	s := l.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.view.Load() != nil {
		return true, nil // nothing written since
	}
	b := l.posts
	if b == nil || b.released || len(b.ids) == 0 {
		return false, nil
	}
	start := time.Now()
	// A transaction of the writer's: the checks below see one state, which
	// no other process changes meanwhile.
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("keep postings in memory: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	if same, err := pendingAre(ctx, tx, b.ids); err != nil || !same {
		return false, s.mapErr(err)
	}
	var posted bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM band_postings) OR EXISTS (SELECT 1 FROM chunk_postings)
		OR EXISTS (SELECT 1 FROM anchor_blocks)`).Scan(&posted); err != nil {
		return false, fmt.Errorf("look for postings: %w", s.mapErr(err))
	}
	if posted {
		return false, nil
	}
	v := &bulkView{load: b}
	if err := tx.QueryRowContext(ctx, seqsQuery).Scan(&v.seq[0], &v.seq[1]); err != nil {
		return false, fmt.Errorf("read the sequences: %w", s.mapErr(err))
	}
	v.sorted = b.sort()
	l.view.Store(v)
	s.logger.Debug("kept the postings of a bulk load in memory", "path", s.path, "seconds", time.Since(start).Seconds(), "contents", len(b.ids))
	return true, nil
}

// postingsView returns the view of the load's postings if there is one
// and it holds for ctx's reads; l may be nil. When another process has added contents
// since it was taken, the postings are inserted, and the tables answer
// from then on.
func (l *Loader) postingsView(ctx context.Context) (*bulkView, error) {
	v := l.loadView()
	if v == nil {
		return nil, nil
	}
	var seq [2]int64
	if err := l.reads(ctx).QueryRowContext(ctx, seqsQuery).Scan(&seq[0], &seq[1]); err != nil {
		return nil, fmt.Errorf("read the sequences: %w", l.mapErr(err))
	}
	if seq == v.seq {
		return v, nil
	}
	l.view.CompareAndSwap(v, nil)
	return nil, l.settlePostings(ctx, slog.LevelDebug)
}

// settleView inserts the postings of the view, if there is one, for a read
// that only the posting tables answer; l may be nil.
func (l *Loader) settleView(ctx context.Context) error {
	if l.loadView() == nil {
		return nil
	}
	return l.settlePostings(ctx, slog.LevelDebug)
}

// loadView returns the view, if l is not nil.
func (l *Loader) loadView() *bulkView {
	if l == nil {
		return nil
	}
	return l.view.Load()
}

// dropView forgets the view, if l is not nil: the store is about to
// change.
func (l *Loader) dropView() {
	if l != nil {
		l.view.Store(nil)
	}
}

// sort sorts b's postings by key, table by table, and keeps them so (one
// sorted block per table, which later commits append to), so that
// sorting them again is not needed until then.
func (b *bulkPostings) sort() postings {
	var sorted postings
	if b.sorted {
		for t, blocks := range b.stored {
			if len(blocks) > 0 {
				sorted[t] = blocks[0]
			}
		}
		return sorted
	}
	var wg sync.WaitGroup
	for t := range b.stored {
		wg.Go(func() { sorted[t] = sortPostingsByKey(b.stored[t]) })
	}
	wg.Wait()
	for t, rows := range sorted {
		b.stored[t] = nil
		if len(rows) > 0 {
			b.stored[t] = [][]posting{rows}
		}
	}
	b.sorted = true
	return sorted
}

// runs calls fn with each key's distinct contents in rows (sorted by key
// and then content), and the n of each one's first posting, in key order.
func runs(rows []posting, fn func(group []index.ContentID, ns []int) error) error {
	var (
		group []index.ContentID
		ns    []int
	)
	for len(rows) > 0 {
		end := 1
		for end < len(rows) && rows[end].h == rows[0].h {
			end++
		}
		group, ns = group[:0], ns[:0]
		for i, r := range rows[:end] {
			if i == 0 || r.c != rows[i-1].c {
				group = append(group, index.ContentID(r.c))
				ns = append(ns, int(r.n))
			}
		}
		if err := fn(group, ns); err != nil {
			return err
		}
		rows = rows[end:]
	}
	return nil
}

// involves reports whether group holds one of of (any, when of is nil).
func involves(group []index.ContentID, of map[index.ContentID]bool) bool {
	if of == nil {
		return true
	}
	return slices.ContainsFunc(group, func(c index.ContentID) bool { return of[c] })
}

// contentSet returns of as a set, or nil for nil.
func contentSet(of []index.ContentID) map[index.ContentID]bool {
	if of == nil {
		return nil
	}
	set := make(map[index.ContentID]bool, len(of))
	for _, c := range of {
		set[c] = true
	}
	return set
}

// groups is Groups answered by the view.
func (v *bulkView) groups(maxChunkDocs int, of []index.ContentID, fn func([]index.ContentID) error) error {
	want := contentSet(of)
	for _, t := range []int{bandPostings, chunkPostings} {
		limit := int(^uint(0) >> 1)
		if t == chunkPostings {
			limit = maxChunkDocs
		}
		err := runs(v.sorted[t], func(group []index.ContentID, _ []int) error {
			if len(group) >= 2 && len(group) <= limit && involves(group, want) {
				return fn(group)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// anchorGroups is AnchorGroups answered by the view.
func (v *bulkView) anchorGroups(maxDocs int, of []index.ContentID, fn func([]index.ContentID, []int) error) error {
	want := contentSet(of)
	return runs(v.sorted[samplePostings], func(group []index.ContentID, ns []int) error {
		if len(group) < 2 || len(group) > maxDocs || !involves(group, want) {
			return nil
		}
		return fn(group, ns)
	})
}

// chunkContents is ChunkContents answered by the view.
func (v *bulkView) chunkContents(hashes []uint64) map[uint64]int {
	rows := v.sorted[chunkPostings]
	out := make(map[uint64]int, len(hashes))
	for _, h := range hashes {
		k := postingKey(h)
		i, _ := slices.BinarySearchFunc(rows, k, func(p posting, k int64) int {
			switch {
			case p.h < k:
				return -1
			case p.h > k:
				return 1
			}
			return 0
		})
		n := 0
		for j := i; j < len(rows) && rows[j].h == k; j++ {
			if j == i || rows[j].c != rows[j-1].c {
				n++
			}
		}
		out[h] = n
	}
	return out
}
