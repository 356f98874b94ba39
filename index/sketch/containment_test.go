package sketch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestContainmentsAgreesWithContainment(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sample := func(n int) []uint32 {
		s := make([]uint32, 0, n)
		for range n {
			s = append(s, r.Uint32N(400))
		}
		slices.Sort(s)
		return slices.Compact(s)
	}
	for i := range 1000 {
		a, b := sample(i%50), sample(i%37)
		ab, ba := Containments(a, b)
		if ab != Containment(a, b) || ba != Containment(b, a) {
			t.Fatalf("Containments(%v, %v) = %v, %v; Containment gives %v, %v", a, b, ab, ba, Containment(a, b), Containment(b, a))
		}
	}
}
