package index

import (
	"context"
	"fmt"
	"slices"

	"github.com/simdex/simdex/index/sketch"
)

// Watchlist holds a fixed set of stored contents in memory — the seeds of
// legal holds — so that a document can be compared with all of them
// without searching the index: Match costs the same whatever the size of
// the index, a few microseconds for a document that resembles none of
// them. Match is safe for concurrent use; Add, which extends the list in
// place, must not run concurrently with Match or Add (the caller
// serialises them), so that a list of many seeds grows by one seed at the
// cost of one.
//
// Match finds every listed content that Similar would report for the same
// document (and possibly more): a listed content is a candidate when it
// shares any LSH band key or chunk with the document, at least two anchors
// making AnchorShare of the smaller one's, or is within CandidateHamming
// bits of its SimHash — the rules of a search of the store without its
// limits on common keys, so a superset of its candidates (up to
// collisions of the store's 31-bit posting keys) — and candidates are
// scored by the same code as Similar, templates and ubiquitous chunks
// included.
type Watchlist struct {
	ix      *Index
	fps     map[ContentID]*Fingerprint
	keys    map[watchKey][]ContentID
	sims    []uint64
	ids     []ContentID
	anchors map[ContentID]int // how many anchors each content has
}

// watchKey is a candidate key of one kind: a band key, a chunk hash or an
// anchor.
type watchKey struct {
	kind uint8
	h    uint64
}

const (
	watchBand = iota
	watchChunk
	watchAnchor
)

// Watch loads the fingerprints of contents into a Watchlist. Contents not
// in the store (removed) are left out.
func (ix *Index) Watch(ctx context.Context, contents []ContentID) (*Watchlist, error) {
	w := &Watchlist{ix: ix, fps: make(map[ContentID]*Fingerprint, len(contents)), keys: make(map[watchKey][]ContentID),
		anchors: make(map[ContentID]int, len(contents))}
	if err := w.Add(ctx, contents); err != nil {
		return nil, err
	}
	return w, nil
}

// Add loads the fingerprints of the contents not listed yet into the list.
// Contents not in the store (removed) are left out. It must not run
// concurrently with Match or another Add.
func (w *Watchlist) Add(ctx context.Context, contents []ContentID) error {
	var ids []ContentID
	for _, id := range contents {
		if _, ok := w.fps[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil
	}
	fps := make(map[ContentID]*Fingerprint, len(ids))
	err := w.ix.store.Fingerprints(ctx, ids, func(id ContentID, fp *Fingerprint) error {
		fps[id] = fp
		return nil
	})
	if err != nil {
		return fmt.Errorf("watch %d contents: %w", len(ids), err)
	}
	add := func(kind uint8, h uint64, id ContentID) {
		k := watchKey{kind, h}
		if l := w.keys[k]; len(l) == 0 || l[len(l)-1] != id {
			w.keys[k] = append(l, id)
		}
	}
	for _, id := range ids {
		fp, ok := fps[id]
		if !ok {
			continue
		}
		w.fps[id] = fp
		for _, b := range sketch.Bands(w.ix.opts.Sketch, fp.MinHash, nil) {
			add(watchBand, b, id)
		}
		for _, c := range fp.Chunks {
			add(watchChunk, c.Hash, id)
		}
		anchors := fp.Anchors()
		for _, a := range anchors {
			add(watchAnchor, a, id)
		}
		w.anchors[id] = len(anchors)
		w.sims = append(w.sims, fp.SimHash)
		w.ids = append(w.ids, id)
	}
	return nil
}

// Len returns how many contents the list holds.
func (w *Watchlist) Len() int { return len(w.fps) }

// WatchMatch is a listed content within the thresholds of a document, with
// the scores comparing the document (A) with it (B).
type WatchMatch struct {
	Content ContentID
	Scores
}

// Match returns the listed contents whose scores against fp pass th, best
// first (as Similar orders them, ties by content id).
func (w *Watchlist) Match(ctx context.Context, fp *Fingerprint, th Thresholds) ([]WatchMatch, error) {
	if len(w.fps) == 0 {
		return nil, nil
	}
	if fp.Scheme != 0 && fp.Scheme != w.ix.scheme {
		return nil, fmt.Errorf("match watchlist: %w", ErrSchemeMismatch)
	}
	if err := w.ix.catchUp(ctx); err != nil { // templates another writer added
		return nil, fmt.Errorf("match watchlist: %w", err)
	}
	seen := map[ContentID]bool{}
	var cands []ContentID
	look := func(kind uint8, h uint64) {
		for _, id := range w.keys[watchKey{kind, h}] {
			if !seen[id] {
				seen[id] = true
				cands = append(cands, id)
			}
		}
	}
	for _, b := range sketch.Bands(w.ix.opts.Sketch, fp.MinHash, nil) {
		look(watchBand, b)
	}
	for _, c := range fp.Chunks {
		look(watchChunk, c.Hash)
	}
	// Anchors propose a content sharing at least two of them, making at
	// least AnchorShare of the smaller document's (template samples left
	// out of the query's, as SimilarTo does): common phrases alone propose
	// nothing.
	w.ix.templates.mu.RLock()
	tmpl := w.ix.templates.samples
	var sharedAnchors map[ContentID]int
	queried := 0
	for _, a := range fp.Anchors() {
		if _, ok := tmpl[uint32(a>>32)]; ok {
			continue
		}
		queried++
		for _, id := range w.keys[watchKey{watchAnchor, a}] {
			if sharedAnchors == nil {
				sharedAnchors = make(map[ContentID]int)
			}
			sharedAnchors[id]++
		}
	}
	w.ix.templates.mu.RUnlock()
	for id, n := range sharedAnchors {
		if smaller := min(queried, w.anchors[id]); n >= 2 && smaller > 0 && float64(n)/float64(smaller) >= w.ix.opts.AnchorShare && !seen[id] {
			seen[id] = true
			cands = append(cands, id)
		}
	}
	if w.ix.opts.CandidateHamming >= 0 {
		for _, i := range sketch.Near(w.sims, fp.SimHash, w.ix.opts.CandidateHamming, nil) {
			if id := w.ids[i]; !seen[id] {
				seen[id] = true
				cands = append(cands, id)
			}
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	slices.Sort(cands)
	ubiq := w.ix.newUbiquity(ctx)
	sc := w.ix.newScorer(fp, ubiq)
	// Ask the store once how common the chunks shared with candidates are.
	inQuery := make(map[uint64]bool, len(sc.qChunks))
	for _, c := range sc.qChunks {
		inQuery[c.Hash] = false
	}
	var shared []uint64
	for _, id := range cands {
		for _, c := range w.fps[id].Chunks {
			if listed, ok := inQuery[c.Hash]; ok && !listed {
				inQuery[c.Hash] = true
				shared = append(shared, c.Hash)
			}
		}
	}
	ubiq.prefetch(shared)
	var out []WatchMatch
	for _, id := range cands {
		if s := sc.score(w.fps[id]); s.Reported(th) {
			out = append(out, WatchMatch{Content: id, Scores: s})
		}
	}
	if ubiq.err != nil {
		return nil, fmt.Errorf("match watchlist: %w", ubiq.err)
	}
	slices.SortStableFunc(out, func(a, b WatchMatch) int {
		if c := compareDesc(a.Resemblance, b.Resemblance); c != 0 {
			return c
		}
		return compareDesc(max(a.ContainmentAB, a.ContainmentBA), max(b.ContainmentAB, b.ContainmentBA))
	})
	return out, nil
}

// FingerprintOf returns a stored document and its fingerprint; the
// fingerprint is nil when the document has no text (it was stored with an
// error).
func (ix *Index) FingerprintOf(ctx context.Context, id DocID) (*Record, *Fingerprint, error) {
	r, err := ix.store.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	fp, err := ix.fingerprintOf(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	return r, fp, nil
}

// fingerprintOf returns the fingerprint of the stored document r, nil if
// it has no text.
func (ix *Index) fingerprintOf(ctx context.Context, r *Record) (*Fingerprint, error) {
	if r.Content == 0 {
		return nil, nil
	}
	var fp *Fingerprint
	err := ix.store.Fingerprints(ctx, []ContentID{r.Content}, func(_ ContentID, f *Fingerprint) error {
		fp = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fingerprint of document %d: %w", r.ID, err)
	}
	if fp == nil {
		return nil, fmt.Errorf("fingerprint of document %d: content %d: %w", r.ID, r.Content, ErrNotFound)
	}
	fp.RawSHA256 = r.RawSHA256
	return fp, nil
}
