package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/simdex/simdex/index"
)

// holdCache is the in-memory view of active holds the ingest check
// intersects near-copies with. It is rebuilt from the store whenever the
// store's HoldsVersion differs from version, except that seeds the ingest
// check itself adds (a hold's selector matching a new upload) extend it in
// place (Engine.addSeeds): a custodian hold gaining thousands of seeds
// would otherwise reload every seed, and its fingerprint, for each.
type holdCache struct {
	version int64 // guarded by Engine.mu
	// mu guards the seeds (holds[i].contents, holds[i].seeds) and watch,
	// which addSeeds extends.
	mu    sync.RWMutex
	holds []cachedHold
	// widest is the loosest scope over every hold and the duplicate
	// check: without a watchlist, one Similar call at that scope serves
	// them all.
	widest index.Scope
	// watch holds the seeds of every hold in memory, when the index can
	// (see watcher): a document is then compared with the seeds alone,
	// at a cost that does not grow with the index, and searched with
	// Similar only for duplicate detection. holdScope is the loosest
	// scope over the holds.
	watch     *index.Watchlist
	holdScope index.Scope
}

// watcher is an Index that can compare a document with a fixed set of
// contents in memory (index.Watchlist). IndexOf's adapter is one; another
// Index is checked with Similar alone.
//
// Why: with one Similar per document, the hold check cost what a search
// of the whole index costs — at 1,000,000 documents more than the 2 ms
// the check may add at ingest (the SimHash scan alone is a million
// comparisons). A document is held when it is a near-copy of a seed, so
// comparing it with the seeds is enough; the watchlist proposes every
// seed a search of the index would (and more) and scores them with the
// same code.
type watcher interface {
	Watch(ctx context.Context, contents []index.ContentID) (*index.Watchlist, error)
	FingerprintOf(ctx context.Context, id index.DocID) (*index.Record, *index.Fingerprint, error)
	// SimilarTo is Similar for a fingerprint already loaded.
	SimilarTo(ctx context.Context, fp *index.Fingerprint, th index.Thresholds, exclude ...index.DocID) ([]index.Match, error)
}

type cachedHold struct {
	Hold
	contents map[index.ContentID]index.DocID // seed content → a seed with it
	seeds    map[index.DocID]bool
}

func (e *Engine) invalidate() {
	e.mu.Lock()
	e.cache = nil
	e.mu.Unlock()
}

// holds returns the current cache, rebuilding it when the store changed.
func (e *Engine) holds(ctx context.Context) (*holdCache, error) {
	v, err := e.st.HoldsVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("read holds version: %w", err)
	}
	e.mu.Lock()
	c := e.cache
	fresh := c != nil && c.version == v
	e.mu.Unlock()
	if fresh {
		return c, nil
	}
	if c != nil {
		ok, err := e.catchUp(ctx, c)
		if err != nil {
			e.logger.Warn("catching up with hold changes, reloading every hold instead", "err", err)
		}
		if ok {
			return c, nil
		}
	}
	e.rebuilds.Add(1)
	hs, err := e.st.Holds(ctx, HoldActive)
	if err != nil {
		return nil, fmt.Errorf("load holds: %w", err)
	}
	c = &holdCache{version: v, widest: index.Scope{Resemblance: 1, Containment: 1}, holdScope: index.Scope{Resemblance: 1, Containment: 1}}
	if d := e.cfg.Duplicates; d.Enabled && !d.ExactOnly {
		c.widest = d.Scope
	}
	for _, h := range hs {
		ch := c.addHold(h)
		err := e.st.HeldDocs(ctx, h.Matter, true, func(d HeldDoc) error {
			ch.addSeed(d)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("load seeds of hold %s: %w", h.Matter, err)
		}
	}
	if w, ok := e.ix.(watcher); ok && len(c.holds) > 0 {
		var contents []index.ContentID
		for _, h := range c.holds {
			for content := range h.contents {
				contents = append(contents, content)
			}
		}
		if c.watch, err = w.Watch(ctx, contents); err != nil {
			return nil, fmt.Errorf("load seeds of holds: %w", err)
		}
	}
	e.mu.Lock()
	e.cache = c
	e.mu.Unlock()
	return c, nil
}

// addHold adds an active hold, without seeds, and widens the scopes to
// its own. The caller holds c.mu or owns c alone.
func (c *holdCache) addHold(h Hold) *cachedHold {
	c.widest.Resemblance = min(c.widest.Resemblance, h.Scope.Resemblance)
	c.widest.Containment = min(c.widest.Containment, h.Scope.Containment)
	c.holdScope.Resemblance = min(c.holdScope.Resemblance, h.Scope.Resemblance)
	c.holdScope.Containment = min(c.holdScope.Containment, h.Scope.Containment)
	c.holds = append(c.holds, cachedHold{Hold: h, contents: map[index.ContentID]index.DocID{}, seeds: map[index.DocID]bool{}})
	return &c.holds[len(c.holds)-1]
}

// addSeed records a seed of h.
func (h *cachedHold) addSeed(d HeldDoc) {
	h.seeds[d.Document.ID] = true
	if d.Content != 0 {
		h.contents[d.Content] = d.Document.ID
	}
}

// catchUp brings c to the store's holds version by applying what changed
// since c's, when the store can tell (HoldChanges) and the changes only
// add: holds created and seeds recorded, through any replica. It costs
// one snapshot query and the fingerprints of the new seeds, where a
// rebuild reloads every seed of every hold. It reports false when c must
// be rebuilt instead: a hold was released, or the store cannot tell.
func (e *Engine) catchUp(ctx context.Context, c *holdCache) (bool, error) {
	hc, ok := e.st.(HoldChanges)
	if !ok {
		return false, nil
	}
	e.mu.Lock()
	since := c.version
	e.mu.Unlock()
	d, err := hc.HoldsSince(ctx, since)
	if err != nil {
		return false, err
	}
	for _, h := range d.Holds {
		if h.Status != HoldActive {
			return false, nil
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.cache != c:
		return false, nil
	case c.version >= d.Version: // caught up meanwhile
		return true, nil
	case c.version != since:
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.apply(d) {
		return false, nil
	}
	if err := e.watchSeeds(ctx, c, d.Seeds); err != nil {
		e.cache = nil
		return false, err
	}
	e.catchUps.Add(1)
	c.version = d.Version
	return true, nil
}

// apply adds the holds and seeds of d to c, under c.mu. It reports false,
// leaving c to be dropped, when a seed belongs to no cached hold.
func (c *holdCache) apply(d HoldDelta) bool {
	for _, h := range d.Holds {
		if !slices.ContainsFunc(c.holds, func(ch cachedHold) bool { return ch.Matter == h.Matter }) {
			c.addHold(h)
		}
	}
	for _, s := range d.Seeds {
		i := slices.IndexFunc(c.holds, func(ch cachedHold) bool { return ch.Matter == s.Matter })
		if i < 0 {
			return false
		}
		c.holds[i].addSeed(s)
	}
	return true
}

// watchSeeds puts the contents of seeds in c's watchlist, starting one
// when c had no hold before, under c.mu.
func (e *Engine) watchSeeds(ctx context.Context, c *holdCache, seeds []HeldDoc) error {
	w, ok := e.ix.(watcher)
	if !ok || len(c.holds) == 0 {
		return nil
	}
	var contents []index.ContentID
	for _, s := range seeds {
		if s.Content != 0 {
			contents = append(contents, s.Content)
		}
	}
	if c.watch != nil {
		return c.watch.Add(ctx, contents)
	}
	watch, err := w.Watch(ctx, contents)
	if err != nil {
		return fmt.Errorf("load seeds of holds: %w", err)
	}
	c.watch = watch
	return nil
}

// Check reports what the ingest-time check of one document did.
type Check struct {
	Document index.DocID
	// Matters hold the document now (new or already).
	Matters []string
	// Flags are the flags newly raised.
	Flags []Flag
}

// CheckIngested checks newly committed documents: each is held and
// flagged hold-match when it is a near-copy of a seed of an active hold
// (or matches a hold's seed selector), with its S3 legal hold turned on
// in mode hold, and flagged duplicate-upload when it copies an existing
// document within the configured scope. A document is compared with the
// seeds of every hold at once, in memory when the index allows it (see
// watcher), and searched in the whole index only for duplicates. It is
// idempotent: calling it again (a redelivered event) raises nothing new.
func (e *Engine) CheckIngested(ctx context.Context, ids []index.DocID) ([]Check, error) {
	c, err := e.holds(ctx)
	if err != nil {
		return nil, err
	}
	dup := e.cfg.Duplicates
	c.mu.RLock()
	none := len(c.holds) == 0
	c.mu.RUnlock()
	if none && !dup.Enabled {
		return nil, nil
	}
	out := make([]Check, 0, len(ids))
	var errs []error
	for _, id := range ids {
		ch, err := e.checkOne(ctx, c, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("check document %d: %w", id, err))
			continue
		}
		out = append(out, ch)
	}
	return out, errors.Join(errs...)
}

// checkOne checks one document: it finds its near-copies, matches them
// with the holds and the duplicate rule (matchHolds, outcome: no I/O), and
// commits what they found (commitIngest).
func (e *Engine) checkOne(ctx context.Context, c *holdCache, id index.DocID) (Check, error) {
	r, ws, ms, err := e.candidates(ctx, c, id)
	if err != nil {
		return Check{Document: id}, err
	}
	c.mu.RLock()
	hits := matchHolds(r, c.holds, ws, ms, c.watch != nil)
	c.mu.RUnlock()
	for i := range hits {
		if sid := hits[i].sourceID; sid != 0 {
			if sr, err := e.ix.Get(ctx, sid); err == nil {
				hits[i].source = sr
			}
		}
	}
	return e.commitIngest(ctx, r, e.outcome(r, hits, ms, e.now()))
}

// candidates loads document id and finds its near-copies among the seeds
// of the holds (ws, when c has a watchlist) and in the whole index (ms,
// when duplicates are looked for, or without a watchlist).
func (e *Engine) candidates(ctx context.Context, c *holdCache, id index.DocID) (r *index.Record, ws []index.WatchMatch, ms []index.Match, err error) {
	var fp *index.Fingerprint
	c.mu.RLock()
	watch, widest := c.watch, c.widest
	c.mu.RUnlock()
	w, watching := e.ix.(watcher)
	if watching && watch != nil {
		r, fp, err = w.FingerprintOf(ctx, id)
	} else {
		r, err = e.ix.Get(ctx, id)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("load document: %w", err)
	}
	if fp != nil {
		c.mu.RLock()
		ws, err = c.watch.Match(ctx, fp, thresholds(c.holdScope))
		c.mu.RUnlock()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("compare with hold seeds: %w", err)
		}
	}
	if r.Content == 0 {
		return r, ws, nil, nil
	}
	scope := widest
	if watch != nil {
		scope = e.duplicateScope(r)
	}
	switch {
	case scope == (index.Scope{}):
	case fp != nil: // loaded already: search with it
		ms, err = e.bounded(ctx, func() ([]index.Match, error) { return w.SimilarTo(ctx, fp, thresholds(scope), id) })
	default:
		ms, err = e.similar(ctx, id, thresholds(scope))
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("search near-copies: %w", err)
	}
	return r, ws, ms, nil
}

// commitIngest turns on the legal holds res calls for, then records the
// held documents, the flags and the audit entries of the legal holds in
// one transaction, so that the check waits for the disk once, and
// publishes the new flags. A crash before the commit leaves the event
// unsettled: it is checked again, and the legal holds, already on, are
// turned on again (S3 accepts that). A legal hold that could not be
// turned on fails the check after the commit: the document is recorded
// held, so nothing deletes it meanwhile, and the redelivered event tries
// again.
func (e *Engine) commitIngest(ctx context.Context, r *index.Record, res ingestResult) (Check, error) {
	ch := Check{Document: r.ID, Matters: res.matters}
	if len(res.held) == 0 && len(res.flags) == 0 {
		return ch, nil
	}
	self, obj := RefOf(r), ObjectOf(r)
	var (
		audit   []AuditEntry
		failure error
	)
	for _, h := range res.enforce {
		var p Placement
		a, ok, never := e.turnOn(ctx, h.Matter, []Object{obj}, "ingest", &p)
		if ok {
			audit = append(audit, a)
		}
		if note, ok := never[objectKey(obj)]; ok {
			res.flags = append(res.flags, unenforcedFlag(h.Matter, self, obj, heldRole(res.held, h.Matter), note))
		}
		if len(p.EnforceErrors) > 0 && failure == nil {
			failure = fmt.Errorf("hold %s: turn legal hold on: %s", h.Matter, p.EnforceErrors[0])
		}
	}
	v, added, err := e.st.AddHeldAndFlags(ctx, res.held, res.flags, audit, "ingest", e.now())
	if err != nil {
		return ch, fmt.Errorf("record held and flags: %w", err)
	}
	ch.Flags = added
	e.publish(ctx, ch.Flags)
	if v != 0 {
		e.addSeeds(ctx, res.held, v)
	}
	return ch, failure
}

// heldRole is "seed" when matter holds the document as a seed, else
// "near-copy".
func heldRole(held []HeldDoc, matter string) string {
	for _, d := range held {
		if d.Matter == matter && d.Seed {
			return "seed"
		}
	}
	return "near-copy"
}

// addSeeds extends the hold cache with seeds the ingest check has just
// recorded, in the commit that moved the holds version to v. The cache is
// extended only when it was built at v-1, so that the commit is the one
// change it misses; a cache at v or later has the seeds already, and any
// other is dropped, to be rebuilt by the next check.
func (e *Engine) addSeeds(ctx context.Context, held []HeldDoc, v int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.cache
	switch {
	case c == nil || c.version >= v:
		return
	case c.version != v-1:
		e.cache = nil
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var contents []index.ContentID
	for _, d := range held {
		if !d.Seed {
			continue
		}
		for i := range c.holds {
			if h := &c.holds[i]; h.Matter == d.Matter {
				h.seeds[d.Document.ID] = true
				if d.Content != 0 {
					h.contents[d.Content] = d.Document.ID
					contents = append(contents, d.Content)
				}
			}
		}
	}
	if c.watch != nil {
		if err := c.watch.Add(ctx, contents); err != nil {
			// The seeds are recorded; without their fingerprints the
			// list is incomplete: rebuild it from the store instead.
			e.logger.Warn("extend hold seeds in memory", "err", err)
			e.cache = nil
			return
		}
	}
	c.version = v
}

// duplicateScope is the scope duplicates of r are looked for in, or the
// zero scope when r is not checked for duplicates.
func (e *Engine) duplicateScope(r *index.Record) index.Scope {
	d := e.cfg.Duplicates
	switch {
	case !d.Enabled || (r.Parent != 0 && !d.Children) || !d.Selector.Match(r):
		return index.Scope{}
	case d.ExactOnly:
		return index.Scope{Resemblance: 1, Containment: 1}
	}
	return d.Scope
}

// duplicate returns the duplicate-upload flag of r, if it copies an
// older document of another object within the configured scope.
func (e *Engine) duplicate(r *index.Record, ms []index.Match) (Flag, bool) {
	d := e.cfg.Duplicates
	if e.duplicateScope(r) == (index.Scope{}) {
		return Flag{}, false
	}
	if isSeedFile(r) {
		return Flag{}, false
	}
	top := ObjectOf(r).IndexKey
	for i := range ms {
		m := &ms[i]
		o := m.Record
		if o.ID >= r.ID || ObjectOf(o).IndexKey == top || isSeedFile(o) {
			continue // newer, another version of the same object, or a matter's evidence
		}
		if d.ExactOnly && !m.Exact || !d.ExactOnly && !inScope(m.Scores, d.Scope) {
			continue
		}
		src := RefOf(o)
		sc := m.Scores
		return Flag{Kind: KindDuplicateUpload, Document: RefOf(r), Object: ObjectOf(r), Source: &src,
			Evidence: Evidence{Scores: &sc, Role: "duplicate", Note: "new upload duplicates existing content"}}, true
	}
	return Flag{}, false
}

// Indexed is the ingest pipeline's observer hook: it runs CheckIngested
// over the documents an event committed, before the event is settled. It
// is idempotent (a flag is never raised twice), so a redelivered event is
// simply checked again; an error leaves the event to be redelivered (the
// pipeline names the event in it).
func (e *Engine) Indexed(ctx context.Context, ids []index.DocID) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := e.CheckIngested(ctx, ids); err != nil {
		return fmt.Errorf("check against holds and duplicates: %w", err)
	}
	return nil
}

// Removed is the ingest pipeline's observer hook for removals. Flags and
// held records of removed documents are kept for the record.
func (e *Engine) Removed(_ context.Context, ids []index.DocID) {
	if len(ids) > 0 {
		e.logger.Debug("documents removed from the index; their flags and holds are kept", "documents", len(ids))
	}
}
