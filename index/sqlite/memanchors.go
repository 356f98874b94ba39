package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"
)

// Anchor lists in memory (Options.AnchorsInMemory).
//
// Reading anchor blocks was the largest part of an "all versions" query at
// 1,000,000 documents: 45 % of its CPU, mostly B-tree descents and page
// cache misses, since each reader connection caches pages of its own. A
// long-running process can keep the lists in memory instead, about six
// bytes per posting, and let its writer update them after each commit.
//
// The lists are loaded in the background after Open; until they are,
// queries read the blocks, and commits meanwhile are queued and applied
// once the load is done.
//
// The store file can be written by other processes too (a `simdex scan`
// into the daemon's index, say). Every transaction that changes anchor
// postings, from any process, adds one to the meta row anchors_gen. The
// lists are tagged with the generation they reflect. A query reads the
// generation in its own read transaction first, then uses the lists only
// if they are at least that new: newer lists hold contents committed since
// (extra candidates, which scoring reads anyway) and lack contents deleted
// since (gone anyway). A writer that finds the generation moved by someone
// else loads the lists again.

// anchorsGenKey is the meta row counting the transactions that changed
// anchor postings.
const anchorsGenKey = "anchors_gen"

// errAnchorsTooLarge reports a content id that the lists cannot hold.
var errAnchorsTooLarge = errors.New("content id too large for in-memory anchor lists")

// anchorDelta collects the anchor postings one write transaction adds and
// removes, in order, to apply to the lists once it commits.
type anchorDelta struct {
	ops    []anchorOp
	bumped bool  // the transaction counted its change
	before int64 // the generation it changed
}

type anchorOp struct {
	h, c int64
	n    int32 // anchor count; 0 removes
}

func (d *anchorDelta) add(h, c int64, n int32) {
	if d != nil {
		d.ops = append(d.ops, anchorOp{h, c, n})
	}
}

func (d *anchorDelta) remove(h, c int64) {
	if d != nil {
		d.ops = append(d.ops, anchorOp{h, c, 0})
	}
}

// bumpAnchorsGen adds one to the anchor generation in tx (whose postings
// changed) and returns the generation it had before.
func bumpAnchorsGen(ctx context.Context, stmts *txStmts) (int64, error) {
	var before int64
	query := "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = '" + anchorsGenKey + "' RETURNING CAST(value AS INTEGER) - 1"
	if err := stmts.queryRow(ctx, query).Scan(&before); err != nil {
		return 0, fmt.Errorf("count anchor changes: %w", err)
	}
	return before, nil
}

// readAnchorsGen returns the anchor generation that tx sees.
func (s *Store) readAnchorsGen(ctx context.Context, tx *sql.Tx) (int64, error) {
	var gen int64
	st, err := s.rs.in(ctx, tx, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = '"+anchorsGenKey+"'")
	if err == nil {
		err = st.QueryRowContext(ctx).Scan(&gen)
	}
	if err != nil {
		return 0, fmt.Errorf("read anchor generation: %w", err)
	}
	return gen, nil
}

// memAnchors holds every anchor posting list in memory: a base in key
// order, as loaded (three arrays, about 6 bytes per posting and 8 per key:
// a map of 5.9 million small lists cost five times that and took most of
// the load), and the lists changed since, whole, in a map; the two are
// merged when the changes grow large.
type memAnchors struct {
	mu    sync.RWMutex
	state memState
	gen   int64          // generation of the lists, when ready
	queue []*anchorDelta // commits during a load, in order
	anchorArrays
	changed  map[uint32][]uint32
	nChanged int // postings in changed
}

// anchorArrays is the base of the lists, as loaded or last merged, and
// every content's anchor count.
type anchorArrays struct {
	keys   []uint32 // posting keys, ascending
	offs   []uint32 // keys[i]'s ids are ids[offs[i]:offs[i+1]]
	ids    []uint32 // content ids, ascending within a key
	counts []int32  // anchor count by content id
}

type memState int

const (
	memLoading memState = iota // queries read the blocks; commits queue
	memReady
	memOff // loading failed: the blocks are read from then on
)

// The changed lists are merged into the base when they hold more than
// mergeChangedMin postings and more than 1/mergeChangedAt of the base's
// (about 0.1 s at 1,000,000 documents, every few million postings added).
const mergeChangedAt = 8

var mergeChangedMin = 1 << 16 // a variable for tests

// anchorsRead runs when a load has read the lists, before it installs
// them: tests commit there.
var anchorsRead = func() {}

// list returns key k's postings. The caller holds m.mu.
func (m *memAnchors) list(k uint32) []uint32 {
	if l, ok := m.changed[k]; ok {
		return l
	}
	i, found := slices.BinarySearch(m.keys, k)
	if !found {
		return nil
	}
	return m.ids[m.offs[i]:m.offs[i+1]]
}

// held returns the keys of keys whose list is not empty, if the lists are
// ready at generation gen; ok is false otherwise. A key is looked up by
// its low 32 bits, so the answer may hold keys without postings, never
// leave out one with postings.
func (m *memAnchors) held(keys []int64, gen int64) (held []int64, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.state != memReady || m.gen != gen {
		return nil, false
	}
	for _, h := range keys {
		if len(m.list(uint32(h))) > 0 {
			held = append(held, h)
		}
	}
	return held, true
}

// sharesScratch holds the buffers shares sorts postings in.
var sharesScratch = sync.Pool{New: func() any { return new([]uint32) }}

// shares returns the contents on two or more of the lists of keys,
// ascending, leaving out lists longer than maxDocs, if the lists are at
// least generation gen. It counts from the lists where they are: copying
// them out as read does was two thirds of the memory an "all versions"
// query allocated.
func (m *memAnchors) shares(keys []int64, maxDocs int, gen int64) ([]anchorShare, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.state != memReady || m.gen < gen {
		return nil, false
	}
	lists := make([][]uint32, 0, len(keys))
	total := 0
	var most uint32
	for _, k := range keys {
		if l := m.list(uint32(k)); len(l) > 0 && len(l) <= maxDocs {
			lists = append(lists, l)
			total += len(l)
			most = max(most, l[len(l)-1]) // lists ascend
		}
	}
	bufp := sharesScratch.Get().(*[]uint32)
	defer sharesScratch.Put(bufp)
	buf := slices.Grow((*bufp)[:0], 2*total)[:2*total]
	*bufp = buf
	ids := buf[:0:total]
	for _, l := range lists {
		ids = append(ids, l...)
	}
	ids = radixSortAbove(ids, buf[total:], 0, bits.Len32(most))
	var out []anchorShare
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		if j-i >= 2 {
			out = append(out, anchorShare{int64(ids[i]), int32(j - i), m.counts[ids[i]]})
		}
		i = j
	}
	return out, true
}

// loaded is the lists as read from the store at generation gen.
type loaded struct {
	gen int64
	anchorArrays
}

// readAnchors reads every anchor block in one read transaction.
func (s *Store) readAnchors(ctx context.Context) (*loaded, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var l loaded
	if l.gen, err = s.readAnchorsGen(ctx, tx); err != nil {
		return nil, err
	}
	// Sized first: growing arrays of a hundred megabytes copied them again
	// and again, and the collector spun waiting for each copy to end (half
	// of the load's CPU at 1,000,000 documents).
	var blocks, postings, maxID int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(n), 0), (SELECT coalesce(max(id), 0) FROM contents) FROM anchor_blocks").Scan(&blocks, &postings, &maxID); err != nil {
		return nil, err
	}
	if postings > math.MaxUint32 || maxID > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d postings, content ids up to %d", errAnchorsTooLarge, postings, maxID)
	}
	l.keys = make([]uint32, 0, blocks)
	l.offs = make([]uint32, 0, blocks+1)
	l.ids = make([]uint32, 0, postings)
	l.counts = make([]int32, maxID+1)
	var ps []anchorPosting
	rows, err := tx.QueryContext(ctx, "SELECT h, first, n, ids FROM anchor_blocks ORDER BY h, first")
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var h, first int64
		var n int
		var data sql.RawBytes
		if err := rows.Scan(&h, &first, &n, &data); err != nil {
			return err
		}
		var err error
		if ps, err = decodeBlock(ps[:0], first, n, data); err != nil {
			return fmt.Errorf("key %d: %w", h, err)
		}
		if h < 0 || h > math.MaxUint32 {
			return fmt.Errorf("%w: key %d", errBadBlock, h)
		}
		if k := uint32(h); len(l.keys) == 0 || l.keys[len(l.keys)-1] != k {
			l.keys = append(l.keys, k)
			l.offs = append(l.offs, uint32(len(l.ids)))
		}
		for _, p := range ps {
			if p.c < 0 || p.c > math.MaxUint32 || uint64(len(l.ids)) == math.MaxUint32 {
				return fmt.Errorf("%w: %d", errAnchorsTooLarge, p.c)
			}
			l.ids = append(l.ids, uint32(p.c))
			l.counts = setCount(l.counts, p.c, p.n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.offs = append(l.offs, uint32(len(l.ids)))
	return &l, nil
}

func setCount(counts []int32, c int64, n int32) []int32 {
	if int(c) >= len(counts) {
		counts = slices.Grow(counts, int(c)+1-len(counts))
		counts = counts[:int(c)+1]
	}
	counts[c] = n
	return counts
}

// install makes l the lists and applies the commits queued since it was
// read; it reports false when a commit of another process came between
// (the queue skips a generation), and the load must start over.
func (m *memAnchors) install(l *loaded) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.anchorArrays, m.gen = l.anchorArrays, l.gen
	m.changed, m.nChanged = nil, 0
	queue := m.queue
	m.queue = nil
	for _, d := range queue {
		switch {
		case d.before < m.gen: // in what was read
		case d.before == m.gen:
			m.applyLocked(d)
		default:
			m.clearLocked()
			return false
		}
	}
	if m.state == memLoading {
		m.state = memReady
	}
	return true
}

func (m *memAnchors) clearLocked() {
	m.anchorArrays, m.changed, m.nChanged = anchorArrays{}, nil, 0
}

// offLocked makes queries read the blocks for good.
func (m *memAnchors) offLocked() {
	m.state, m.queue = memOff, nil
	m.clearLocked()
}

// committed takes the changes of one committed transaction, which moved
// the generation from before to before+1: it applies them, queues them
// while the lists load, or reports false when the lists missed a commit of
// another process and must load again.
func (m *memAnchors) committed(d *anchorDelta) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.state {
	case memOff:
		return true
	case memLoading:
		m.queue = append(m.queue, d)
		return true
	}
	if m.gen != d.before {
		m.state = memLoading
		m.queue = append(m.queue[:0], d)
		m.clearLocked()
		return false
	}
	m.applyLocked(d)
	return true
}

// applyLocked applies d to ready lists at generation d.before.
func (m *memAnchors) applyLocked(d *anchorDelta) {
	for _, op := range d.ops {
		if op.c < 0 || op.c > math.MaxUint32 {
			m.offLocked()
			return
		}
		if op.n != 0 {
			m.counts = setCount(m.counts, op.c, op.n)
		}
		k, c := uint32(op.h), uint32(op.c)
		l, own := m.changed[k]
		if !own {
			l = m.list(k)
		}
		i, found := slices.BinarySearch(l, c)
		if found == (op.n != 0) {
			continue // there already, or gone already
		}
		if !own {
			// A list of the base shares its array with the next keys'.
			l = slices.Clone(l)
		} else {
			m.nChanged -= len(l)
		}
		if op.n != 0 {
			l = slices.Insert(l, i, c)
		} else {
			l = slices.Delete(l, i, i+1)
		}
		if m.changed == nil {
			m.changed = make(map[uint32][]uint32)
		}
		m.changed[k] = l // an empty list stands for a removed key
		m.nChanged += len(l)
	}
	m.gen = d.before + 1
	if m.nChanged > mergeChangedMin && m.nChanged > len(m.ids)/mergeChangedAt {
		m.mergeLocked()
	}
}

// mergeLocked folds the changed lists into the base.
func (m *memAnchors) mergeLocked() {
	changedKeys := make([]uint32, 0, len(m.changed))
	for k := range m.changed {
		changedKeys = append(changedKeys, k)
	}
	slices.Sort(changedKeys)
	keys := make([]uint32, 0, len(m.keys)+len(changedKeys))
	offs := make([]uint32, 0, len(m.keys)+len(changedKeys)+1)
	ids := make([]uint32, 0, len(m.ids)+m.nChanged)
	put := func(k uint32, l []uint32) {
		if len(l) > 0 {
			keys = append(keys, k)
			offs = append(offs, uint32(len(ids)))
			ids = append(ids, l...)
		}
	}
	i := 0
	for _, k := range changedKeys {
		for ; i < len(m.keys) && m.keys[i] < k; i++ {
			put(m.keys[i], m.ids[m.offs[i]:m.offs[i+1]])
		}
		if i < len(m.keys) && m.keys[i] == k {
			i++
		}
		put(k, m.changed[k])
	}
	for ; i < len(m.keys); i++ {
		put(m.keys[i], m.ids[m.offs[i]:m.offs[i+1]])
	}
	m.keys, m.offs, m.ids = keys, append(offs, uint32(len(ids))), ids
	m.changed, m.nChanged = nil, 0
}

// loadAnchors loads the lists in the background, again as long as another
// process's commits come in between, until it succeeds, fails (the lists
// are then turned off) or the store closes.
func (s *Store) loadAnchors(done chan struct{}) {
	defer close(done)
	log := s.logger
	for {
		start := time.Now()
		l, err := s.readAnchors(s.memCtx)
		if err == nil {
			anchorsRead()
		}
		if err != nil {
			if s.memCtx.Err() == nil {
				log.Warn("load anchor lists into memory: reading them from disk instead", "path", s.path, "err", err)
			}
			s.mem.mu.Lock()
			s.mem.offLocked()
			s.mem.mu.Unlock()
			return
		}
		if s.mem.install(l) {
			log.Debug("loaded anchor lists into memory", "path", s.path, "keys", len(l.keys), "postings", len(l.ids), "seconds", time.Since(start).Seconds())
			return
		}
		log.Info("anchor lists changed by another process while loading: loading them again", "path", s.path)
	}
}

// committedAnchors hands the anchor changes of a committed transaction to
// the in-memory lists, and loads them again when another process wrote in
// between. The caller holds s.mu.
func (s *Store) committedAnchors(d *anchorDelta) {
	if s.mem == nil || s.mem.committed(d) {
		return
	}
	s.logger.Info("anchor lists changed by another process: loading them into memory again", "path", s.path)
	<-s.memDone // the previous load has ended
	s.memDone = make(chan struct{})
	go s.loadAnchors(s.memDone)
}

// AnchorsInMemory reports whether queries read the anchor lists from
// memory (Options.AnchorsInMemory, once loaded) rather than from disk.
func (s *Store) AnchorsInMemory() bool {
	if s.mem == nil {
		return false
	}
	s.mem.mu.RLock()
	defer s.mem.mu.RUnlock()
	return s.mem.state == memReady
}

// startAnchors starts loading the lists into memory.
func (s *Store) startAnchors() {
	s.mem = &memAnchors{}
	s.memCtx, s.memStop = context.WithCancel(context.Background())
	s.memDone = make(chan struct{})
	go s.loadAnchors(s.memDone)
}

// stopAnchors stops a load under way and waits for it to end.
func (s *Store) stopAnchors() {
	if s.mem == nil {
		return
	}
	s.memStop()
	s.mu.Lock()
	done := s.memDone
	s.mu.Unlock()
	<-done
}
