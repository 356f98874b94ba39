package sketch

// Hierarchical Mod-2^k sampling (Params.SampleFloor). A shingle is a
// Mod-SampleN sample when the hash bits that choose samples are zero; its
// sample is the high half of its hash with the low BaseLevel bits cleared,
// so that the sample itself says at which levels it is kept: at level k
// (k ≥ BaseLevel) a text keeps the samples that are 0 mod 2^k, one
// shingle in 2^k, and the samples of level k+1 are a subset of those of
// level k. A long text keeps the sparsest level that leaves it SampleFloor
// samples, at most MaxLevels above the base; two texts are compared at the
// coarser of their two levels, the finer one's samples filtered to it
// (ContainmentsAt), so that every estimate compares like with like.

// thin clears the low base bits of the sorted, distinct Mod-SampleN
// samples, drops the duplicates that makes, and keeps the samples of the
// sparsest level that leaves at least p.SampleFloor of them. It returns
// the samples, in place, and their level.
func thin(p Params, samples []uint32) ([]uint32, int) {
	base := p.BaseLevel()
	low := uint32(1)<<base - 1
	for i, v := range samples {
		samples[i] = v &^ low // monotone: the order is kept
	}
	samples = dedupSorted(samples)
	level := base
	for level < base+MaxLevels && countAt(samples, level+1) >= p.SampleFloor {
		level++
	}
	return AtLevel(samples, level, samples[:0]), level
}

// countAt is the number of samples that are 0 mod 2^level.
func countAt(samples []uint32, level int) int {
	mask := uint32(1)<<level - 1
	n := 0
	for _, v := range samples {
		n += b2i(v&mask == 0)
	}
	return n
}

// AtLevel appends to dst the samples that are 0 mod 2^level, in order.
// dst may be samples[:0]: it filters in place.
func AtLevel(samples []uint32, level int, dst []uint32) []uint32 {
	if level <= 0 {
		return append(dst, samples...)
	}
	mask := uint32(1)<<level - 1
	for _, v := range samples {
		if v&mask == 0 {
			dst = append(dst, v)
		}
	}
	return dst
}

// ContainmentsAt is Containments of samples a of level la and b of level
// lb, compared at the coarser level: the finer one's samples are filtered
// to it first. Samples of level 0 (no SampleFloor) are compared as they
// are.
func ContainmentsAt(a []uint32, la int, b []uint32, lb int) (ab, ba float64) {
	a, b = coarsest(a, la, b, lb)
	return Containments(a, b)
}

// SampleResemblanceAt is SampleResemblance at the coarser of the two
// levels, as ContainmentsAt.
func SampleResemblanceAt(a []uint32, la int, b []uint32, lb int) float64 {
	a, b = coarsest(a, la, b, lb)
	return SampleResemblance(a, b)
}

// coarsest returns a and b with the finer of the two filtered to the
// coarser level, in a new slice.
func coarsest(a []uint32, la int, b []uint32, lb int) ([]uint32, []uint32) {
	switch {
	case la == lb:
	case la < lb:
		a = AtLevel(a, lb, make([]uint32, 0, len(a)>>(lb-la)+8))
	default:
		b = AtLevel(b, la, make([]uint32, 0, len(b)>>(la-lb)+8))
	}
	return a, b
}

// ResemblanceBits estimates resemblance from b-bit MinHash slots (the low
// `bits` bits of each minimum, Params.MinHashBits): two slots are equal
// when the minima are, and by chance with probability C ≈ 2^-bits
// otherwise (Li & König 2010, for sets much smaller than the hash
// space), so the share P of equal slots estimates R + C(1 − R) and
// R̂ = (P − C)/(1 − C), at least 0. With 32 bits it is Resemblance.
func ResemblanceBits(a, b []uint32, bits int) float64 {
	p := Resemblance(a, b)
	if bits <= 0 || bits >= 32 {
		return p
	}
	c := 1 / float64(uint64(1)<<bits)
	return max(0, (p-c)/(1-c))
}
