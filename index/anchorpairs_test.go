package index

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// anchorGroups is a Store that only answers AnchorGroups.
type anchorGroups struct {
	Store
	groups  [][]ContentID
	anchors map[ContentID]int
}

func (s *anchorGroups) AnchorGroups(_ context.Context, _ int, fn func([]ContentID, []int) error) error {
	for _, g := range s.groups {
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

// TestAnchorPairsCountsAsPairMaps checks the dense counting of shared
// anchors against the per-pair map it replaced, on random groups in no
// particular order.
func TestAnchorPairsCountsAsPairMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	st := &anchorGroups{anchors: map[ContentID]int{}}
	const contents = 400
	for c := range contents {
		st.anchors[ContentID(1000+3*c)] = 2 + r.IntN(40)
	}
	for range 3000 {
		var g []ContentID
		seen := map[ContentID]bool{}
		for range 2 + r.IntN(30) {
			c := ContentID(1000 + 3*r.IntN(contents))
			if !seen[c] {
				seen[c] = true
				g = append(g, c)
			}
		}
		if len(g) >= 2 {
			st.groups = append(st.groups, g)
		}
	}
	opts := DefaultOptions()
	ix := &Index{store: st, opts: opts}

	type shared struct{ n, small int }
	byPair := map[[2]ContentID]shared{}
	for _, g := range st.groups {
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
	got := map[[2]ContentID]bool{}
	err := ix.anchorPairs(context.Background(), 1000, func(a, b ContentID) {
		if a >= b {
			t.Fatalf("pair (%d, %d) not in order", a, b)
		}
		if got[[2]ContentID{a, b}] {
			t.Fatalf("pair (%d, %d) reported twice", a, b)
		}
		got[[2]ContentID{a, b}] = true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 50 {
		t.Fatalf("only %d pairs pass the share rule: the test data proves little", len(want))
	}
	for k := range want {
		if !got[k] {
			t.Errorf("pair %v missed", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("pair %v reported, below the share rule", k)
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
	if parts := splitPairs(nil, 4); len(parts) != 0 {
		t.Errorf("no pairs: %d parts", len(parts))
	}
}
