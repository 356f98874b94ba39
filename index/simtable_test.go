package index

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/simdex/simdex/index/sketch"
)

// TestSimTableNearIsAScan checks that the block-indexed lookup of a large
// table returns exactly what scanning it returns, at every distance.
func TestSimTableNearIsAScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab simTable
	var qs []uint64
	for i := range 3 * simScanBelow {
		h := r.Uint64()
		if i%100 == 0 {
			// Plant neighbours of a later query at every distance up to 8.
			q := r.Uint64()
			qs = append(qs, q)
			for d := range 9 {
				n := q
				for _, bit := range r.Perm(64)[:d] {
					n ^= 1 << bit
				}
				tab.add(ContentID(len(tab.hashes)+1), n)
			}
		}
		tab.add(ContentID(len(tab.hashes)+1), h)
	}
	if len(tab.hashes) < simScanBelow {
		t.Fatalf("table of %d hashes is scanned, not indexed", len(tab.hashes))
	}
	for _, q := range qs {
		for d := range 9 {
			var want []ContentID
			for _, i := range sketch.Near(tab.hashes, q, d, nil) {
				want = append(want, tab.ids[i])
			}
			got := tab.near(q, d)
			if !slices.Equal(got, want) {
				t.Fatalf("near(%x, %d) = %d contents, scan %d", q, d, len(got), len(want))
			}
			if d <= 6 && len(got) < d+1 {
				t.Fatalf("near(%x, %d) missed planted neighbours: %d found", q, d, len(got))
			}
			for _, id := range got {
				if bits.OnesCount64(tab.hashes[id-1]^q) > d {
					t.Fatalf("near(%x, %d) returned a hash %d bits away", q, d, bits.OnesCount64(tab.hashes[id-1]^q))
				}
			}
		}
	}
}
