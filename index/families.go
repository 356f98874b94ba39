package index

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// Pair is a reported near-copy pair of contents, A < B.
type Pair struct {
	A, B ContentID
	Scores
}

// Pairs calls fn with every pair of stored contents whose scores pass th.
// Candidates come from the sorted postings (contents sharing an LSH band
// key or a non-ubiquitous chunk), as KDD'05 finds pairs from the sorted
// file–chunk graph; each candidate pair is scored once.
func (ix *Index) Pairs(ctx context.Context, th Thresholds, fn func(Pair) error) error {
	limit := ix.candidateLimit()
	cand := make(map[[2]ContentID]struct{})
	err := ix.store.Groups(ctx, limit, func(ids []ContentID) error {
		for i := 0; i < len(ids); i++ {
			for j := i + 1; j < len(ids); j++ {
				a, b := ids[i], ids[j]
				if a > b {
					a, b = b, a
				}
				cand[[2]ContentID{a, b}] = struct{}{}
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("find candidate pairs: %w", err)
	}
	// Contained documents share few bands and often no whole chunk: pairs
	// sharing at least AnchorShare of the smaller one's anchors (and two
	// anchors) are candidates too.
	if err := ix.anchorPairs(ctx, limit, func(a, b ContentID) { cand[[2]ContentID{a, b}] = struct{}{} }); err != nil {
		return err
	}
	pairs := make([][2]ContentID, 0, len(cand))
	need := make(map[ContentID]struct{})
	for p := range cand {
		pairs = append(pairs, p)
		need[p[0]] = struct{}{}
		need[p[1]] = struct{}{}
	}
	slices.SortFunc(pairs, func(x, y [2]ContentID) int {
		if c := cmp.Compare(x[0], y[0]); c != 0 {
			return c
		}
		return cmp.Compare(x[1], y[1])
	})
	ids := make([]ContentID, 0, len(need))
	for id := range need {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fps := make(map[ContentID]*Fingerprint, len(ids))
	if err := ix.store.Fingerprints(ctx, ids, func(id ContentID, fp *Fingerprint) error {
		fps[id] = fp
		return nil
	}); err != nil {
		return fmt.Errorf("load fingerprints for pairs: %w", err)
	}
	// Score on every core: the pairs are split where their first content
	// changes, so each part keeps one scorer per query content, and the
	// reports are passed to fn in order.
	ubiq := ix.newUbiquity(ctx)
	// Each content is scored against many: its chunks are sorted once.
	tmpl := ix.templates.snapshot()
	sorted := make(map[ContentID][]Chunk, len(fps))
	for id, fp := range fps {
		sorted[id] = sortedChunks(fp.Chunks, tmpl.chunks)
	}
	parts := splitPairs(pairs, runtime.GOMAXPROCS(0))
	found := make([][]Pair, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	for i, part := range parts {
		g.Go(func() error {
			var sc *scorer
			for k, p := range part {
				if k%4096 == 0 && gctx.Err() != nil {
					return gctx.Err()
				}
				a, b := fps[p[0]], fps[p[1]]
				if a == nil || b == nil {
					continue // removed meanwhile
				}
				if sc == nil || sc.q != a {
					sc = newScorer(a, sorted[p[0]], ubiq, tmpl)
				}
				s := sc.scoreSorted(b, sorted[p[1]])
				if s.Reported(th) && !s.Exact {
					found[i] = append(found[i], Pair{A: p[0], B: p[1], Scores: s})
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ubiq.err != nil {
		return fmt.Errorf("score pairs: %w", ubiq.err)
	}
	for _, part := range found {
		for _, p := range part {
			if err := fn(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// splitPairs cuts sorted pairs into at most n parts of similar size, each
// cut where the first content changes.
func splitPairs(pairs [][2]ContentID, n int) [][][2]ContentID {
	var parts [][][2]ContentID
	for len(pairs) > 0 {
		size := max(len(pairs)/max(n-len(parts), 1), 1)
		end := min(size, len(pairs))
		for end < len(pairs) && pairs[end][0] == pairs[end-1][0] {
			end++
		}
		parts = append(parts, pairs[:end])
		pairs = pairs[end:]
	}
	return parts
}

// anchorPairs calls add(a, b), a < b, with every pair of contents that
// share at least two anchors held by at most limit contents, and at least
// AnchorShare of the anchors of the one with fewer.
//
// It counts shared anchors content by content with a dense counter rather
// than per pair in a map: the work is the same (every pair inside every
// anchor group is visited once), but a map operation per visit cost three
// quarters of a 50,000-file scan's analysis on a corpus of overlapping
// excerpts, where anchor groups hold hundreds of contents.
func (ix *Index) anchorPairs(ctx context.Context, limit int, add func(a, b ContentID)) error {
	var (
		dense   = make(map[ContentID]int32)
		ids     []ContentID // dense index → content
		anchors []int       // dense index → the content's anchor count
		members []int32     // every group's members, group after group
		starts  = []int{0}  // group g is members[starts[g]:starts[g+1]]
	)
	err := ix.store.AnchorGroups(ctx, limit, func(group []ContentID, counts []int) error {
		for i, id := range group {
			d, ok := dense[id]
			if !ok {
				d = int32(len(ids))
				dense[id] = d
				ids = append(ids, id)
				anchors = append(anchors, counts[i])
			}
			members = append(members, d)
		}
		starts = append(starts, len(members))
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("find candidate pairs by anchor: %w", err)
	}
	// Renumber in content order, and sort each group, so that the members
	// after a content in a group are exactly its pairs a < b there.
	order := make([]int32, len(ids))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return cmp.Compare(ids[x], ids[y]) })
	rank := make([]int32, len(ids))
	sortedIDs := make([]ContentID, len(ids))
	sortedAnchors := make([]int, len(ids))
	for r, d := range order {
		rank[d] = int32(r)
		sortedIDs[r], sortedAnchors[r] = ids[d], anchors[d]
	}
	ids, anchors = sortedIDs, sortedAnchors
	for i, d := range members {
		members[i] = rank[d]
	}
	// end[i] is where the group of members[i] ends; at[c] lists the
	// positions in members of content c (compressed rows).
	end := make([]int32, len(members))
	at := make([]int32, len(members))
	first := make([]int32, len(ids)+1)
	for g := 0; g+1 < len(starts); g++ {
		m := members[starts[g]:starts[g+1]]
		slices.Sort(m)
		for i := starts[g]; i < starts[g+1]; i++ {
			end[i] = int32(starts[g+1])
			first[members[i]+1]++
		}
	}
	for c := range ids {
		first[c+1] += first[c]
	}
	fill := slices.Clone(first[:len(ids)])
	for i, c := range members {
		at[fill[c]] = int32(i)
		fill[c]++
	}
	shared := make([]int32, len(ids))
	var touched []int32
	for a := range ids {
		if a%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		for _, i := range at[first[a]:first[a+1]] {
			for _, b := range members[i+1 : end[i]] {
				if shared[b] == 0 {
					touched = append(touched, b)
				}
				shared[b]++
			}
		}
		for _, b := range touched {
			n := shared[b]
			shared[b] = 0
			if n >= 2 && float64(n) >= ix.opts.AnchorShare*float64(min(anchors[a], anchors[b])) {
				add(ids[a], ids[b])
			}
		}
		touched = touched[:0]
	}
	return nil
}

// Family is a set of near-copies: the connected component of the
// near-copy graph (union-find over reported pairs).
type Family struct {
	// Pivot is the representative document: the one most linked to the
	// others, ties broken by the longest text.
	Pivot DocID
	// Members are every document of the family, pivot included, by id.
	Members []DocID
	// Links is the number of reported content pairs in the family.
	Links int
	// AvgResemblance is the mean resemblance over those pairs.
	AvgResemblance float64
}

// Analysis is the all-pairs report of an index.
type Analysis struct {
	// Documents are every stored document by id.
	Documents map[DocID]*Record
	// Identical are sets of two or more documents with identical text,
	// reported apart from near-copies (KDD'05 §2.4).
	Identical [][]DocID
	// Pairs are the reported near-copy pairs of contents.
	Pairs []Pair
	// Families are near-copy families, largest first.
	Families []Family
	// ByContent lists each content's documents.
	ByContent map[ContentID][]DocID
}

// Analyse reports identical sets, near-copy pairs and families over the
// whole index.
func (ix *Index) Analyse(ctx context.Context, th Thresholds) (*Analysis, error) {
	an := &Analysis{Documents: make(map[DocID]*Record), ByContent: make(map[ContentID][]DocID)}
	if err := ix.store.Documents(ctx, func(r *Record) error {
		an.Documents[r.ID] = r
		if r.Content != 0 {
			an.ByContent[r.Content] = append(an.ByContent[r.Content], r.ID)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	for _, docs := range an.ByContent {
		if len(docs) > 1 {
			an.Identical = append(an.Identical, slices.Clone(docs))
		}
	}
	slices.SortFunc(an.Identical, func(a, b []DocID) int { return cmp.Compare(a[0], b[0]) })
	if err := ix.Pairs(ctx, th, func(p Pair) error {
		an.Pairs = append(an.Pairs, p)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	an.Families = families(an)
	return an, nil
}

func families(an *Analysis) []Family {
	uf := newUnionFind()
	for _, p := range an.Pairs {
		uf.union(p.A, p.B)
	}
	type acc struct {
		contents []ContentID
		links    int
		sumRes   float64
	}
	comps := map[ContentID]*acc{}
	degree := map[ContentID]float64{}
	for _, p := range an.Pairs {
		root := uf.find(p.A)
		a := comps[root]
		if a == nil {
			a = &acc{}
			comps[root] = a
		}
		a.links++
		a.sumRes += p.Resemblance
		degree[p.A] += p.Resemblance
		degree[p.B] += p.Resemblance
	}
	for c := range uf.parent {
		a := comps[uf.find(c)]
		a.contents = append(a.contents, c)
	}
	var out []Family
	for _, a := range comps {
		f := Family{Links: a.links, AvgResemblance: a.sumRes / float64(a.links)}
		var pivot ContentID
		for _, c := range a.contents {
			f.Members = append(f.Members, an.ByContent[c]...)
			if pivot == 0 || better(an, degree, c, pivot) {
				pivot = c
			}
		}
		slices.Sort(f.Members)
		if docs := an.ByContent[pivot]; len(docs) > 0 {
			f.Pivot = slices.Min(docs)
		}
		if len(f.Members) > 0 {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b Family) int {
		if c := cmp.Compare(len(b.Members), len(a.Members)); c != 0 {
			return c
		}
		return cmp.Compare(a.Pivot, b.Pivot)
	})
	return out
}

// better reports whether content c makes a better pivot than p.
func better(an *Analysis, degree map[ContentID]float64, c, p ContentID) bool {
	if degree[c] != degree[p] {
		return degree[c] > degree[p]
	}
	sc, sp := textSize(an, c), textSize(an, p)
	if sc != sp {
		return sc > sp
	}
	return c < p
}

func textSize(an *Analysis, c ContentID) int64 {
	if docs := an.ByContent[c]; len(docs) > 0 {
		return an.Documents[docs[0]].TextSize
	}
	return 0
}

type unionFind struct{ parent map[ContentID]ContentID }

func newUnionFind() *unionFind { return &unionFind{parent: make(map[ContentID]ContentID)} }

func (u *unionFind) find(x ContentID) ContentID {
	p, ok := u.parent[x]
	if !ok {
		u.parent[x] = x
		return x
	}
	if p == x {
		return x
	}
	r := u.find(p)
	u.parent[x] = r
	return r
}

func (u *unionFind) union(a, b ContentID) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		if ra < rb {
			u.parent[rb] = ra
		} else {
			u.parent[ra] = rb
		}
	}
}
