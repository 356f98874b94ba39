package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// overfull remembers posting keys found held by more contents than a
// lookup allowed (boilerplate chunks and anchors), so that later lookups
// skip them instead of reading the same thousand rows again. At 1,000,000
// synthetic documents a fifth of a query's anchors are such keys, and
// reading them was most of the query's store time.
//
// Adding postings only lengthens a list, so "more than n" stays true until
// postings are deleted: a write that removes a content forgets every key
// (and lookups that began before it record nothing). Entries also expire
// after overfullTTL, which bounds staleness when another process deletes
// from the same database file.
type overfull struct {
	mu    sync.Mutex
	gen   uint64              // bumped whenever entries are forgotten
	since time.Time           // when the entries were started
	over  map[overfullKey]int // key → a limit its list is known to exceed
}

type overfullKey struct {
	table string
	h     int64
}

const (
	overfullTTL = 5 * time.Minute
	overfullMax = 1 << 20 // entries; beyond, nothing more is recorded
)

// forget drops every entry: postings may have been deleted.
func (o *overfull) forget() {
	o.mu.Lock()
	o.gen++
	o.over = nil
	o.mu.Unlock()
}

// start returns the generation a lookup records its findings under, after
// expiring old entries.
func (o *overfull) start(now time.Time) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.over != nil && now.Sub(o.since) > overfullTTL {
		o.gen++
		o.over = nil
	}
	return o.gen
}

// filter returns keys without those whose list in table is known to
// exceed limit.
func (o *overfull) filter(table string, keys []int64, limit int) []int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	kept := make([]int64, 0, len(keys))
	for _, h := range keys {
		if n, ok := o.over[overfullKey{table, h}]; !ok || n < limit {
			kept = append(kept, h)
		}
	}
	return kept
}

// recordOverfull notes in o lists found longer than limit, unless entries
// were forgotten since gen (the lookup may have read deleted postings).
func recordOverfull[E any](o *overfull, gen uint64, now time.Time, table string, lists map[int64][]E, limit int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if gen != o.gen {
		return
	}
	for h, cs := range lists {
		if len(cs) <= limit || len(o.over) >= overfullMax {
			continue
		}
		if o.over == nil {
			o.over, o.since = make(map[overfullKey]int), now
		}
		k := overfullKey{table, h}
		o.over[k] = max(o.over[k], limit)
	}
}

// boundedLists is postingLists without the keys known to hold more than
// limit contents: they are left out of the result, as if they held none
// (callers ignore such lists either way). gen is s.over.start's answer,
// taken before the read transaction tx began, so that what a snapshot
// older than a deletion saw is not recorded.
func (s *Store) boundedLists(ctx context.Context, tx *sql.Tx, gen uint64, table string, keys []int64, limit int) (map[int64][]int64, error) {
	lists, err := s.postingLists(ctx, tx, table, s.over.filter(table, keys, limit), limit)
	if err != nil {
		return nil, err
	}
	recordOverfull(&s.over, gen, s.now(), table, lists, limit)
	return lists, nil
}
