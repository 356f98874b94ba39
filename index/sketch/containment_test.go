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

// refIntersect is the plain merge intersect replaced, kept as the oracle
// the optimised one is checked against.
func refIntersect(a, b []uint32) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// sortedSet makes a sorted, distinct slice from raw bytes, 4 per value,
// values kept small by mask so that two sets overlap.
func sortedSet(raw []byte, mask uint32) []uint32 {
	var s []uint32
	for len(raw) >= 4 {
		s = append(s, (uint32(raw[0])|uint32(raw[1])<<8|uint32(raw[2])<<16|uint32(raw[3])<<24)&mask)
		raw = raw[4:]
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// intersections are the ways of counting common samples that must agree
// with refIntersect: intersect, which uses vector instructions where the
// processor has them, and the scalar version used elsewhere.
var intersections = []struct {
	name string
	fn   func(a, b []uint32) int
}{{"intersect", intersect}, {"intersectScalar", intersectScalar}}

func TestIntersectAgreesWithMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		raw := func(n int) []byte {
			b := make([]byte, 4*n)
			for k := range b {
				b[k] = byte(r.Uint32())
			}
			return b
		}
		mask := uint32(1)<<(4+i%24) - 1
		a, b := sortedSet(raw(r.IntN(200)), mask), sortedSet(raw(r.IntN(200)), mask)
		for _, f := range intersections {
			if got, want := f.fn(a, b), refIntersect(a, b); got != want {
				t.Fatalf("%s(%v, %v) = %d, want %d", f.name, a, b, got, want)
			}
			if got, want := f.fn(b, a), refIntersect(b, a); got != want {
				t.Fatalf("%s(%v, %v) = %d, want %d", f.name, b, a, got, want)
			}
		}
	}
	// Edge values: 0 and the largest, at both ends of each half.
	edge := []uint32{0, 1, 2, 1 << 31, 1<<32 - 2, 1<<32 - 1}
	for k := range 64 {
		edge = append(edge, uint32(k)*1000+7)
	}
	slices.Sort(edge)
	for _, b := range [][]uint32{edge, edge[:40], edge[30:], edge[8:16], edge[7:17], {0}, {1<<32 - 1}, nil} {
		for _, f := range intersections {
			if got, want := f.fn(edge, b), refIntersect(edge, b); got != want {
				t.Errorf("%s(edge, %v) = %d, want %d", f.name, b, got, want)
			}
			if got, want := f.fn(b, edge), refIntersect(b, edge); got != want {
				t.Errorf("%s(%v, edge) = %d, want %d", f.name, b, got, want)
			}
		}
	}
}

func FuzzIntersect(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{5, 6, 7, 8}, uint8(8))
	f.Fuzz(func(t *testing.T, x, y []byte, bits uint8) {
		mask := uint32(1)<<(bits%33) - 1
		if bits%33 == 32 {
			mask = 1<<32 - 1
		}
		a, b := sortedSet(x, mask), sortedSet(y, mask)
		for _, f := range intersections {
			if got, want := f.fn(a, b), refIntersect(a, b); got != want {
				t.Fatalf("%s(%v, %v) = %d, want %d", f.name, a, b, got, want)
			}
		}
	})
}

// BenchmarkIntersect compares intersect with the plain merge on samples
// like a scored pair's: 300 to 600 values sharing a random share.
func BenchmarkIntersect(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func(base []uint32, share float64, n int) []uint32 {
		var s []uint32
		for _, v := range base {
			if r.Float64() < share {
				s = append(s, v)
			}
		}
		for len(s) < n {
			s = append(s, r.Uint32())
		}
		slices.Sort(s)
		return slices.Compact(s)
	}
	q := gen(nil, 0, 440)
	var others [][]uint32
	for range 256 {
		others = append(others, gen(q, r.Float64(), 300+r.IntN(300)))
	}
	for _, c := range []struct {
		name string
		fn   func(a, b []uint32) int
	}{{"intersect", intersect}, {"two-way", intersectScalar}, {"merge", refIntersect}} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for i := 0; b.Loop(); i++ {
				n += c.fn(q, others[i%len(others)])
			}
			_ = n
		})
	}
}

func TestLowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		n := r.IntN(300)
		b := make([]uint32, n)
		for k := range b {
			b[k] = r.Uint32()
			if i%3 == 0 {
				b[k] %= 1000 // crowded at the bottom: the guess is far off
			}
		}
		slices.Sort(b)
		b = slices.Compact(b)
		probes := []uint32{0, 1, 1<<32 - 1, r.Uint32(), r.Uint32() % 1000}
		for _, x := range b {
			probes = append(probes, x, x+1, x-1)
		}
		for _, v := range probes {
			want, _ := slices.BinarySearch(b, v)
			if got := lowerBound(b, v); got != want {
				t.Fatalf("lowerBound(%v, %d) = %d, want %d", b, v, got, want)
			}
		}
	}
}
