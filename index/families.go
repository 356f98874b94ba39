package index

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
	type shared struct{ n, small int }
	byAnchor := make(map[[2]ContentID]shared)
	err = ix.store.AnchorGroups(ctx, limit, func(ids []ContentID, counts []int) error {
		for i := 0; i < len(ids); i++ {
			for j := i + 1; j < len(ids); j++ {
				a, b, small := ids[i], ids[j], min(counts[i], counts[j])
				if a > b {
					a, b = b, a
				}
				k := [2]ContentID{a, b}
				if _, ok := cand[k]; ok {
					continue
				}
				sh := byAnchor[k]
				sh.n++
				sh.small = small
				byAnchor[k] = sh
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("find candidate pairs by anchor: %w", err)
	}
	for k, sh := range byAnchor {
		if sh.n >= 2 && float64(sh.n) >= ix.opts.AnchorShare*float64(sh.small) {
			cand[k] = struct{}{}
		}
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
	ubiq := ix.newUbiquity(ctx)
	var sc *scorer
	for _, p := range pairs {
		a, b := fps[p[0]], fps[p[1]]
		if a == nil || b == nil {
			continue // removed meanwhile
		}
		if sc == nil || sc.q != a {
			sc = ix.newScorer(a, ubiq)
		}
		s := sc.score(b)
		if ubiq.err != nil {
			return fmt.Errorf("score pairs: %w", ubiq.err)
		}
		if !s.Reported(th) || s.Exact {
			continue
		}
		if err := fn(Pair{A: p[0], B: p[1], Scores: s}); err != nil {
			return err
		}
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
