package sketch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSort checks both radix sorts, and the bucket sort below
// them, against slices.Sort, with the duplicates that repeated phrases
// make.
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var scratch []uint32
	for _, n := range []int{0, 1, 2, 3, 17, 100, 255, 256, 257, 1023, 1024, 1025, 5000, 70000} {
		for _, spread := range []uint32{0, 1 << 8, 1 << 20, ^uint32(0)} {
			a := make([]uint32, n)
			for i := range a {
				switch spread {
				case 0:
					a[i] = 7
				case ^uint32(0):
					a[i] = r.Uint32()
				default:
					a[i] = r.Uint32N(spread) << 3
				}
			}
			want := slices.Clone(a)
			slices.Sort(want)
			scratch = radixSort(a, scratch)
			if !slices.Equal(a, want) {
				t.Fatalf("%d values below %#x: not sorted", n, spread)
			}
			if got := dedupSorted(a); !slices.Equal(got, slices.Compact(want)) {
				t.Fatalf("%d values below %#x: dedupSorted differs from slices.Compact", n, spread)
			}
		}
	}
}
