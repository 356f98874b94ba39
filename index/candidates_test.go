package index

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// groupStore is a Store that only answers Groups and AnchorGroups.
type groupStore struct {
	Store
	near, anchor [][]ContentID
	anchors      map[ContentID]int
}

// holds reports whether g holds one of of, or of is nil.
func holds(g, of []ContentID) bool {
	return of == nil || slices.ContainsFunc(g, func(c ContentID) bool { return slices.Contains(of, c) })
}

func (s *groupStore) Groups(_ context.Context, _ int, of []ContentID, fn func([]ContentID) error) error {
	for _, g := range s.near {
		if !holds(g, of) {
			continue
		}
		if err := fn(slices.Clone(g)); err != nil {
			return err
		}
	}
	return nil
}

func (s *groupStore) AnchorGroups(_ context.Context, _ int, of []ContentID, fn func([]ContentID, []int) error) error {
	for _, g := range s.anchor {
		if !holds(g, of) {
			continue
		}
		counts := make([]int, len(g))
		for i, c := range g {
			counts[i] = s.anchors[c]
		}
		if err := fn(slices.Clone(g), counts); err != nil {
			return err
		}
	}
	return nil
}

// randomGroups returns n groups of distinct contents in no particular order.
func randomGroups(r *rand.Rand, n, contents, size int) [][]ContentID {
	var groups [][]ContentID
	for range n {
		var g []ContentID
		seen := map[ContentID]bool{}
		for range 2 + r.IntN(size) {
			c := ContentID(1000 + 3*r.IntN(contents))
			if !seen[c] {
				seen[c] = true
				g = append(g, c)
			}
		}
		if len(g) >= 2 {
			groups = append(groups, g)
		}
	}
	return groups
}

// TestCandidatePairsAsPairMaps checks the candidate graph's pairs against
// per-pair maps: every pair sharing a near group, and every pair passing
// the anchor share rule, each once and in order, on several cores.
func TestCandidatePairsAsPairMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	const contents = 400
	st := &groupStore{anchors: map[ContentID]int{}}
	for c := range contents {
		st.anchors[ContentID(1000+3*c)] = 2 + r.IntN(40)
	}
	st.near = randomGroups(r, 150, contents, 6)
	st.anchor = randomGroups(r, 3000, contents, 30)
	opts := DefaultOptions()
	ix := &Index{store: st, opts: opts}

	type shared struct{ n, small int }
	byPair := map[[2]ContentID]shared{}
	for _, g := range st.anchor {
		for i := range g {
			for j := i + 1; j < len(g); j++ {
				a, b := min(g[i], g[j]), max(g[i], g[j])
				sh := byPair[[2]ContentID{a, b}]
				sh.n++
				sh.small = min(st.anchors[a], st.anchors[b])
				byPair[[2]ContentID{a, b}] = sh
			}
		}
	}
	want := map[[2]ContentID]bool{}
	for k, sh := range byPair {
		if sh.n >= 2 && float64(sh.n) >= opts.AnchorShare*float64(sh.small) {
			want[k] = true
		}
	}
	byAnchor := len(want)
	for _, g := range st.near {
		for i := range g {
			for j := i + 1; j < len(g); j++ {
				want[[2]ContentID{min(g[i], g[j]), max(g[i], g[j])}] = true
			}
		}
	}
	if byAnchor < 50 || len(want)-byAnchor < 50 {
		t.Fatalf("%d pairs pass the share rule, %d more share a near group: the test data proves little", byAnchor, len(want)-byAnchor)
	}
	g, err := ix.loadCandidateGraph(context.Background(), 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		pairs, err := g.pairs(context.Background(), opts.AnchorShare, workers, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make([][2]ContentID, len(pairs))
		for i, p := range pairs {
			got[i] = [2]ContentID{g.ids[p[0]], g.ids[p[1]]}
			if got[i][0] >= got[i][1] {
				t.Fatalf("pair %v not in order", got[i])
			}
			if i > 0 && (got[i-1][0] > got[i][0] || got[i-1][0] == got[i][0] && got[i-1][1] >= got[i][1]) {
				t.Fatalf("pairs %v, %v out of order or repeated", got[i-1], got[i])
			}
		}
		for _, p := range got {
			if !want[p] {
				t.Errorf("workers=%d: pair %v reported, shares no near group and is below the share rule", workers, p)
			}
		}
		if len(got) != len(want) {
			t.Errorf("workers=%d: %d pairs, want %d", workers, len(got), len(want))
		}
		// Restricted to every third content: the same pairs, less those
		// with none of them.
		wanted := make([]bool, len(g.ids))
		for c := range wanted {
			wanted[c] = c%3 == 0
		}
		some, err := g.pairs(context.Background(), opts.AnchorShare, workers, wanted)
		if err != nil {
			t.Fatal(err)
		}
		var kept [][2]int32
		for _, p := range pairs {
			if wanted[p[0]] || wanted[p[1]] {
				kept = append(kept, p)
			}
		}
		if !slices.Equal(some, kept) || len(kept) == len(pairs) || len(kept) == 0 {
			t.Errorf("workers=%d: %d pairs with a wanted content, want %d of %d", workers, len(some), len(kept), len(pairs))
		}
	}
}

// splitPairs keeps every pair, in order, in at most n parts, and never
// splits the pairs of one first content.
func TestSplitPairs(t *testing.T) {
	var pairs [][2]ContentID
	for a := ContentID(1); a < 40; a++ {
		for b := a + 1; b < a+ContentID(a%7); b++ {
			pairs = append(pairs, [2]ContentID{a, b})
		}
	}
	for _, n := range []int{1, 2, 3, 8, 100} {
		parts := splitPairs(pairs, n)
		if len(parts) > n {
			t.Errorf("n=%d: %d parts", n, len(parts))
		}
		var all [][2]ContentID
		for i, part := range parts {
			if len(part) == 0 {
				t.Errorf("n=%d: part %d empty", n, i)
			}
			if i > 0 && parts[i-1][len(parts[i-1])-1][0] == part[0][0] {
				t.Errorf("n=%d: content %d split between parts", n, part[0][0])
			}
			all = append(all, part...)
		}
		if !slices.Equal(all, pairs) {
			t.Errorf("n=%d: parts do not hold the pairs in order", n)
		}
	}
	if parts := splitPairs[ContentID](nil, 4); len(parts) != 0 {
		t.Errorf("no pairs: %d parts", len(parts))
	}
}
