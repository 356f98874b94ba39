package index

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/simdex/simdex/index/sketch"
)

// Scores compare a queried document A with a stored document B.
type Scores struct {
	// Resemblance estimates |A∩B| / |A∪B| over shingles.
	Resemblance float64 `json:"resemblance"`
	// ContainmentAB estimates the share of A found in B.
	ContainmentAB float64 `json:"containment_ab"`
	// ContainmentBA estimates the share of B found in A.
	ContainmentBA float64 `json:"containment_ba"`
	// BytesInCommon sums the lengths of chunks A and B share (a lower
	// bound of shared text, KDD'05), template chunks excluded.
	BytesInCommon int64 `json:"bytes_in_common"`
	// Hamming is the SimHash distance in bits.
	Hamming int `json:"hamming"`
	// Exact is true when the normalised texts are identical.
	Exact bool `json:"exact"`
}

// Reported says whether the scores pass th.
func (s Scores) Reported(th Thresholds) bool {
	return s.Exact || s.Resemblance >= th.Resemblance ||
		s.ContainmentAB >= th.Containment || s.ContainmentBA >= th.Containment ||
		(th.Hamming >= 0 && s.Hamming <= th.Hamming)
}

// Match is one near-copy of a queried document.
type Match struct {
	Scores
	// Record is the matching stored document.
	Record *Record `json:"-"`
	// SameBytes is true when the raw objects are byte-identical.
	SameBytes bool `json:"same_bytes"`
}

// templateSet holds operator-marked template chunks and samples.
type templateSet struct {
	mu      sync.RWMutex
	chunks  map[uint64]struct{}
	samples map[uint32]struct{}
}

func (ix *Index) loadTemplates(ctx context.Context) error {
	ts, err := ix.store.Templates(ctx)
	if err != nil {
		return fmt.Errorf("load templates: %w", err)
	}
	ix.templates.mu.Lock()
	defer ix.templates.mu.Unlock()
	ix.templates.chunks = make(map[uint64]struct{})
	ix.templates.samples = make(map[uint32]struct{})
	for _, t := range ts {
		for _, c := range t.Chunks {
			ix.templates.chunks[c] = struct{}{}
		}
		for _, s := range t.Samples {
			ix.templates.samples[s] = struct{}{}
		}
	}
	return nil
}

// scorer compares one query fingerprint with many stored ones; it caches
// what depends on the query alone.
type scorer struct {
	q          *Fingerprint
	tmplChunk  map[uint64]struct{}
	tmplSample map[uint32]struct{}
	qSamples   []uint32 // query samples without template samples
	qChunks    []Chunk  // sorted by hash, template chunks removed
	qUbiq      []int8   // per query chunk: 0 not asked yet, 1 ubiquitous, 2 not
	ubiq       *ubiquity
}

// ubiquitous reports whether the query's i-th chunk is ubiquitous, asking
// ubiq once per scorer: a scorer meets the same chunk in many candidates,
// and in a scan's analysis, where two cores score, the shared cache's lock
// taken at every shared chunk was a tenth of the scoring.
func (s *scorer) ubiquitous(i int) bool {
	if s.qUbiq == nil {
		s.qUbiq = make([]int8, len(s.qChunks))
	}
	if s.qUbiq[i] == 0 {
		s.qUbiq[i] = 2
		if s.ubiq.is(s.qChunks[i].Hash) {
			s.qUbiq[i] = 1
		}
	}
	return s.qUbiq[i] == 1
}

// ubiquity answers whether a chunk is held by more than TemplateShare of
// all contents (KDD'05 ubiquitous chunks), caching the store's answers.
type ubiquity struct {
	ctx   context.Context
	store Store
	limit int
	mu    sync.Mutex
	known map[uint64]bool
	err   error
}

func (ix *Index) newUbiquity(ctx context.Context) *ubiquity {
	return &ubiquity{ctx: ctx, store: ix.store, limit: ix.templateLimit(), known: make(map[uint64]bool)}
}

// templateLimit is the number of contents above which a chunk or anchor is
// ubiquitous (KDD'05): TemplateShare of all contents, but never fewer than
// TemplateMinContents.
func (ix *Index) templateLimit() int {
	return max(int(ix.opts.TemplateShare*float64(ix.sims.len())), ix.opts.TemplateMinContents)
}

// candidateLimit is the document frequency above which a chunk or anchor
// proposes no candidates: ubiquitous, or over MaxChunkContents.
func (ix *Index) candidateLimit() int {
	return min(ix.templateLimit(), ix.opts.MaxChunkContents)
}

// prefetch asks the store once how common each of hashes is.
func (u *ubiquity) prefetch(hashes []uint64) {
	if u.limit < 0 || len(hashes) == 0 {
		return
	}
	counts, err := u.store.ChunkContents(u.ctx, hashes)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		u.err = err
		return
	}
	for _, h := range hashes {
		u.known[h] = counts[h] > u.limit
	}
}

func (u *ubiquity) is(h uint64) bool {
	if u.limit < 0 {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if v, ok := u.known[h]; ok {
		return v
	}
	counts, err := u.store.ChunkContents(u.ctx, []uint64{h})
	if err != nil {
		u.err = err
		return false
	}
	v := counts[h] > u.limit
	u.known[h] = v
	return v
}

func (ix *Index) newScorer(q *Fingerprint, ubiq *ubiquity) *scorer {
	tmpl := ix.templates.snapshot()
	return newScorer(q, sortedChunks(q.Chunks, tmpl.chunks), ubiq, tmpl)
}

// templates is a snapshot of the template hashes: loadTemplates replaces
// the maps, never changes them.
type templates struct {
	chunks  map[uint64]struct{}
	samples map[uint32]struct{}
}

func (t *templateSet) snapshot() templates {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return templates{t.chunks, t.samples}
}

// newScorer returns a scorer of q, whose chunks sortedChunks has sorted
// with tmpl's chunks left out.
func newScorer(q *Fingerprint, qChunks []Chunk, ubiq *ubiquity, tmpl templates) *scorer {
	s := &scorer{q: q, qChunks: qChunks, ubiq: ubiq}
	s.tmplChunk = tmpl.chunks
	if len(tmpl.samples) > 0 {
		s.tmplSample = tmpl.samples
		for _, v := range q.Samples {
			if _, ok := s.tmplSample[v]; !ok {
				s.qSamples = append(s.qSamples, v)
			}
		}
	} else {
		s.qSamples = q.Samples
	}
	return s
}

func sortedChunks(cs []Chunk, ignore map[uint64]struct{}) []Chunk {
	out := make([]Chunk, 0, len(cs))
	for _, c := range cs {
		if _, ok := ignore[c.Hash]; !ok {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Chunk) int {
		switch {
		case a.Hash < b.Hash:
			return -1
		case a.Hash > b.Hash:
			return 1
		}
		return 0
	})
	return out
}

func (s *scorer) score(b *Fingerprint) Scores {
	return s.scoreSorted(b, nil)
}

// scoreSorted is score with b's chunks already sorted and rid of template
// chunks (by sortedChunks with the scorer's templates), or nil.
func (s *scorer) scoreSorted(b *Fingerprint, bc []Chunk) Scores {
	q := s.q
	sc := Scores{
		Exact:   q.TextSHA256 == b.TextSHA256,
		Hamming: sketch.Hamming(q.SimHash, b.SimHash),
	}
	if sc.Exact {
		sc.Resemblance, sc.ContainmentAB, sc.ContainmentBA = 1, 1, 1
		for i, c := range s.qChunks {
			if !s.ubiquitous(i) {
				sc.BytesInCommon += int64(c.Len)
			}
		}
		return sc
	}
	// Bytes in common: merge-intersect the sorted chunk lists (KDD'05
	// found merging faster than hashing), each shared chunk counted once
	// per occurrence in both.
	if bc == nil {
		bc = sortedChunks(b.Chunks, s.tmplChunk)
	}
	for i, j := 0, 0; i < len(s.qChunks) && j < len(bc); {
		switch {
		case s.qChunks[i].Hash < bc[j].Hash:
			i++
		case s.qChunks[i].Hash > bc[j].Hash:
			j++
		default:
			if !s.ubiquitous(i) {
				sc.BytesInCommon += int64(s.qChunks[i].Len)
			}
			i++
			j++
		}
	}
	bSamples := b.Samples
	if s.tmplSample != nil {
		bSamples = make([]uint32, 0, len(b.Samples))
		for _, v := range b.Samples {
			if _, ok := s.tmplSample[v]; !ok {
				bSamples = append(bSamples, v)
			}
		}
		sc.Resemblance = q.sampleResemblance(s.qSamples, b, bSamples)
	} else {
		sc.Resemblance = q.Resemblance(b)
	}
	sc.ContainmentAB, sc.ContainmentBA = q.containments(s.qSamples, b, bSamples)
	// Shared whole chunks are a lower bound of containment; it is exact
	// where samples are too few to estimate (short texts).
	if q.TextSize > 0 {
		sc.ContainmentAB = max(sc.ContainmentAB, min(1, float64(sc.BytesInCommon)/float64(q.TextSize)))
	}
	if b.TextSize > 0 {
		sc.ContainmentBA = max(sc.ContainmentBA, min(1, float64(sc.BytesInCommon)/float64(b.TextSize)))
	}
	return sc
}

// Similar returns every near-copy of the stored document id (all versions
// of this file), best first, the document itself excluded.
func (ix *Index) Similar(ctx context.Context, id DocID, th Thresholds) ([]Match, error) {
	ctx, done, err := ix.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("similar to document %d: %w", id, err)
	}
	defer done()
	r, err := ix.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return ix.similarOf(ctx, r, th)
}

// Snapshot returns a context in which the store's reads see it at one
// moment (see Snapshotter), and the function that ends that snapshot. A
// caller that reads before a search (a document, to check who may see it)
// takes one so that the search reads the same state, on the same
// connection. With a store that cannot, ctx is returned as it is.
func (ix *Index) Snapshot(ctx context.Context) (context.Context, func(), error) {
	if sn, ok := ix.store.(Snapshotter); ok {
		return sn.Snapshot(ctx)
	}
	return ctx, func() {}, nil
}

// SimilarOf is Similar for a stored document already read (a caller that
// checked who may see it need not read it again).
func (ix *Index) SimilarOf(ctx context.Context, r *Record, th Thresholds) ([]Match, error) {
	ctx, done, err := ix.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("similar to document %d: %w", r.ID, err)
	}
	defer done()
	return ix.similarOf(ctx, r, th)
}

// similarOf is SimilarOf within the caller's snapshot.
func (ix *Index) similarOf(ctx context.Context, r *Record, th Thresholds) ([]Match, error) {
	fp, err := ix.fingerprintOf(ctx, r)
	if err != nil || fp == nil {
		return nil, err // fp nil: stored with an error, no text to compare
	}
	return ix.similarTo(ctx, fp, r.Content, th, r.ID)
}

// SimilarTo returns every stored near-copy of a fingerprint, best first,
// leaving out the documents in exclude.
func (ix *Index) SimilarTo(ctx context.Context, fp *Fingerprint, th Thresholds, exclude ...DocID) ([]Match, error) {
	ctx, done, err := ix.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("similar: %w", err)
	}
	defer done()
	return ix.similarTo(ctx, fp, 0, th, exclude...)
}

// similarTo is SimilarTo of fp within the caller's snapshot; fp is
// content self's when self is not zero: the store need not load it again.
func (ix *Index) similarTo(ctx context.Context, fp *Fingerprint, self ContentID, th Thresholds, exclude ...DocID) ([]Match, error) {
	if fp.Scheme != 0 && fp.Scheme != ix.scheme {
		return nil, fmt.Errorf("similar: %w", ErrSchemeMismatch)
	}
	if err := ix.catchUp(ctx); err != nil {
		return nil, fmt.Errorf("similar: %w", err)
	}
	ubiq := ix.newUbiquity(ctx)
	sc := ix.newScorer(fp, ubiq)
	chunks := make([]uint64, 0, len(sc.qChunks))
	for _, c := range sc.qChunks {
		chunks = append(chunks, c.Hash)
	}
	limit := ix.candidateLimit()
	cands, err := ix.store.Candidates(ctx, CandidateQuery{
		TextSHA256:   fp.TextSHA256,
		Content:      self,
		Bands:        sketch.Bands(ix.opts.Sketch, fp.MinHash, nil),
		Chunks:       chunks,
		MaxChunkDocs: limit,
	})
	if err != nil {
		return nil, fmt.Errorf("similar: %w", err)
	}
	var anchors []uint64
	for _, a := range fp.Anchors() {
		if _, tmpl := sc.tmplSample[uint32(a>>32)]; !tmpl {
			anchors = append(anchors, a)
		}
	}
	more, err := ix.store.AnchorCandidates(ctx, anchors, limit, ix.opts.AnchorShare, ix.opts.AnchorCandidates)
	if err != nil {
		return nil, fmt.Errorf("similar: %w", err)
	}
	cands = append(cands, more...)
	if ix.opts.CandidateHamming >= 0 {
		cands = append(cands, ix.sims.near(fp.SimHash, ix.opts.CandidateHamming)...)
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	type hit struct {
		content ContentID
		scores  Scores
	}
	// Load first, score after: scoring asks the store how common chunks
	// are, and asking it from inside its own callback would hold two of
	// the pool's connections at once — enough concurrent queries would
	// then wait on each other for ever.
	type loaded struct {
		id ContentID
		fp *Fingerprint
	}
	var fps []loaded
	if i, ok := slices.BinarySearch(cands, self); ok && self != 0 {
		fps = append(fps, loaded{self, fp})
		cands = slices.Delete(cands, i, i+1)
	}
	if err := ix.store.Fingerprints(ctx, cands, func(id ContentID, b *Fingerprint) error {
		fps = append(fps, loaded{id, b})
		return nil
	}); err != nil {
		return nil, fmt.Errorf("similar: %w", err)
	}
	// Scoring asks how common each chunk shared with a candidate is: one
	// store call answers for all of them (none when nothing is shared).
	inQuery := make(map[uint64]bool, len(chunks)) // hash -> already listed
	for _, h := range chunks {
		inQuery[h] = false
	}
	var shared []uint64
	for _, l := range fps {
		for _, c := range l.fp.Chunks {
			if listed, ok := inQuery[c.Hash]; ok && !listed {
				inQuery[c.Hash] = true
				shared = append(shared, c.Hash)
			}
		}
	}
	ubiq.prefetch(shared)
	var hits []hit
	for _, l := range fps {
		if s := sc.score(l.fp); s.Reported(th) {
			hits = append(hits, hit{l.id, s})
		}
	}
	if ubiq.err != nil {
		return nil, fmt.Errorf("similar: %w", ubiq.err)
	}
	// The documents of every hit at once: a call per hit was a tenth of
	// an "all versions" query at 1,000,000 documents.
	scores := make(map[ContentID]Scores, len(hits))
	contents := make([]ContentID, 0, len(hits))
	for _, h := range hits {
		scores[h.content] = h.scores
		contents = append(contents, h.content)
	}
	recs, err := ix.store.ByContent(ctx, contents...)
	if err != nil {
		return nil, fmt.Errorf("similar: %w", err)
	}
	var out []Match
	for _, r := range recs {
		s, ok := scores[r.Content]
		if !ok || slices.Contains(exclude, r.ID) {
			continue
		}
		out = append(out, Match{Scores: s, Record: r, SameBytes: r.RawSHA256 == fp.RawSHA256})
	}
	slices.SortStableFunc(out, func(a, b Match) int {
		if c := compareDesc(a.Resemblance, b.Resemblance); c != 0 {
			return c
		}
		if c := compareDesc(max(a.ContainmentAB, a.ContainmentBA), max(b.ContainmentAB, b.ContainmentBA)); c != 0 {
			return c
		}
		return int(a.Record.ID - b.Record.ID)
	})
	return out, nil
}

func compareDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// MarkTemplate records the chunks and samples shared by at least half of
// the given contents (and at least two) as a template: from then on they
// are ignored when scoring, without re-fingerprinting (KDD'05 §4).
func (ix *Index) MarkTemplate(ctx context.Context, contents []ContentID, name, reason, actor string) (Template, error) {
	if len(contents) < 2 {
		return Template{}, fmt.Errorf("mark template %q: need at least two documents, got %d", name, len(contents))
	}
	chunkCount := map[uint64]int{}
	sampleCount := map[uint32]int{}
	found := 0
	err := ix.store.Fingerprints(ctx, contents, func(_ ContentID, fp *Fingerprint) error {
		found++
		seen := map[uint64]bool{}
		for _, c := range fp.Chunks {
			if !seen[c.Hash] {
				seen[c.Hash] = true
				chunkCount[c.Hash]++
			}
		}
		for _, s := range fp.Samples {
			sampleCount[s]++
		}
		return nil
	})
	if err != nil {
		return Template{}, fmt.Errorf("mark template %q: %w", name, err)
	}
	need := max(2, (found+1)/2)
	t := Template{Name: name, Reason: reason, Actor: actor}
	for h, n := range chunkCount {
		if n >= need {
			t.Chunks = append(t.Chunks, h)
		}
	}
	for s, n := range sampleCount {
		if n >= need {
			t.Samples = append(t.Samples, s)
		}
	}
	slices.Sort(t.Chunks)
	slices.Sort(t.Samples)
	id, err := ix.store.AddTemplate(ctx, t)
	if err != nil {
		return Template{}, fmt.Errorf("mark template %q: %w", name, err)
	}
	t.ID = id
	if err := ix.loadTemplates(ctx); err != nil {
		return Template{}, err
	}
	return t, nil
}
