package sketch

import (
	"math/bits"
	"slices"
)

// computeRef is the original, straightforward Compute, kept as the
// reference that the optimised Compute must match bit for bit
// (TestComputeMatchesReference, FuzzComputeMatchesReference).
func computeRef(p Params, text []byte, s *Sketch) {
	s.Samples = s.Samples[:0]
	s.SimHash = 0
	if cap(s.MinHash) < p.MinHashK {
		s.MinHash = make([]uint32, p.MinHashK)
	}
	s.MinHash = s.MinHash[:0]
	if len(text) == 0 {
		return
	}
	k := uint64(p.MinHashK)
	n := uint64(p.SampleN)
	// Mod-n on 24 hash bits; a power-of-two n is a mask, not a division.
	var mask uint64
	if n&(n-1) == 0 {
		mask = n - 1
	}
	sampled := func(g uint64) bool {
		if mask != 0 || n == 1 {
			return g>>8&mask == 0
		}
		return (g>>8&0xffffff)%n == 0
	}
	slots := make([]uint64, k)
	for i := range slots {
		slots[i] = empty
	}
	// One-permutation hashing: bits 0-31 choose the slot (multiply-shift
	// range reduction), bits 32-63 compete for the slot's minimum, and
	// bits 8-31 decide Mod-n sampling.
	visit := func(g uint64) {
		if i := (g & 0xffffffff) * k >> 32; g>>32 < slots[i] {
			slots[i] = g >> 32
		}
		if sampled(g) {
			s.Samples = append(s.Samples, uint32(g>>32))
		}
	}
	w := p.Window
	if len(text) <= w {
		visit(spread(shortHash(text)))
	} else {
		h := shortHash(text[:w])
		visit(spread(h))
		rot := w % 64
		for i := w; i < len(text); i++ {
			h = bits.RotateLeft64(h, 1) ^ bits.RotateLeft64(buzTable[text[i-w]], rot) ^ buzTable[text[i]]
			g := spread(h)
			if j := (g & 0xffffffff) * k >> 32; g>>32 < slots[j] {
				slots[j] = g >> 32
			}
			if sampled(g) {
				s.Samples = append(s.Samples, uint32(g>>32))
			}
		}
	}
	s.scratch = radixSort(s.Samples, s.scratch)
	s.Samples = slices.Compact(s.Samples)
	s.Level = 0
	if p.SampleFloor > 0 {
		s.Samples, s.Level = thinRef(p, s.Samples)
	}
	densify(slots)
	s.MinHash = s.MinHash[:k]
	for i, v := range slots {
		s.MinHash[i] = uint32(v)
		if b := p.FullBits(); b < 32 {
			s.MinHash[i] = uint32(v % (1 << b)) // b-bit: the low bits
		}
	}
	s.SimHash = simHashRef(p.SimHashWords, text)
}

// thinRef is thin as the format describes it: each sample with its low
// log2(SampleN) bits cleared, then the sparsest level up to MaxLevels
// above that keeps at least SampleFloor of them.
func thinRef(p Params, samples []uint32) ([]uint32, int) {
	base := p.BaseLevel()
	var cleared []uint32
	for _, v := range samples {
		cleared = append(cleared, v>>base<<base)
	}
	slices.Sort(cleared)
	cleared = slices.Compact(cleared)
	at := func(level int) []uint32 {
		var out []uint32
		for _, v := range cleared {
			if v%(1<<level) == 0 {
				out = append(out, v)
			}
		}
		return out
	}
	level := base
	for level < base+MaxLevels && len(at(level+1)) >= p.SampleFloor {
		level++
	}
	return at(level), level
}

// refCounter counts, for each of 64 bit positions, how many added words
// had that bit set. It is bit-sliced: plane i holds bit i of all 64
// counters, so adding a word is a ripple carry over about two planes.
type refCounter struct {
	planes [40]uint64
	n      int
}

func (c *refCounter) add(x uint64) {
	c.n++
	for i := 0; x != 0; i++ {
		carry := c.planes[i] & x
		c.planes[i] ^= x
		x = carry
	}
}

// majority sets bit b when more than half the added words had bit b set:
// Charikar's SimHash with weights +1 and -1.
func (c *refCounter) majority() uint64 {
	var out uint64
	for b := 0; b < 64; b++ {
		var cnt int
		for i := range c.planes {
			cnt |= int(c.planes[i]>>b&1) << i
		}
		if 2*cnt > c.n {
			out |= 1 << b
		}
	}
	return out
}

// simHashRef is the reference simHash: Charikar's SimHash over features of
// `words` consecutive words, each weighted by its number of occurrences.
func simHashRef(words int, text []byte) uint64 {
	var cnt refCounter
	// ring holds the last `words` word hashes; next is the oldest.
	var ringBuf [16]uint64
	ring := ringBuf[:words]
	next, seen := 0, 0
	push := func(h uint64) {
		ring[next] = h
		next++
		if next == words {
			next = 0
		}
		seen++
		if seen >= words {
			var f uint64
			for j := next; j < words; j++ {
				f = f*0x9E3779B97F4A7C15 + ring[j]
			}
			for j := 0; j < next; j++ {
				f = f*0x9E3779B97F4A7C15 + ring[j]
			}
			cnt.add(mix(f))
		}
	}
	var h uint64
	inWord := false
	for _, c := range text {
		if c == ' ' || c == '\n' {
			if inWord {
				push(h)
				inWord = false
			}
			continue
		}
		if !inWord {
			h = 0
			inWord = true
		}
		h = bits.RotateLeft64(h, 5) ^ buzTable[c]
	}
	if inWord {
		push(h)
	}
	if cnt.n == 0 && seen > 0 {
		// Fewer words than a feature: one feature of all of them.
		var f uint64
		for _, w := range ring[:seen] {
			f = f*0x9E3779B97F4A7C15 + w
		}
		cnt.add(mix(f))
	}
	return cnt.majority()
}
