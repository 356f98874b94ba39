package sketch

import "golang.org/x/sys/cpu"

// blocks says whether intersect compares blocks of eight values at once:
// on processors with AVX2 (x86-64 since 2013).
var blocks = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT

// intersectBlocks is in intersect_amd64.s.
//
//go:noescape
func intersectBlocks(a, b *uint32, na, nb int) (n, i, j int)

// intersect counts the common values of two sorted, distinct slices. With
// AVX2 it compares eight values of each with one another at once, and
// merges the last few: a third of the scalar merge's time on a scored
// pair's samples (BenchmarkIntersect).
func intersect(a, b []uint32) int {
	if !blocks || len(a) < 8 || len(b) < 8 {
		return intersectScalar(a, b)
	}
	n, i, j := intersectBlocks(&a[0], &b[0], len(a), len(b))
	return n + intersectMerge(a[i:], b[j:])
}
