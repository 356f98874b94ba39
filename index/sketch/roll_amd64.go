package sketch

import "golang.org/x/sys/cpu"

// haveRollVec says whether rollPow2 rolls the shingle hash over eight
// shingles at a time (rollPow2Vec): on processors with AVX-512 (Intel
// since Skylake-SP, AMD since Zen 4), whose 64-bit lane multiply, rotates
// and compressing store the scalar loop has no match for. Tests turn it
// off to compare the two paths.
var haveRollVec = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL && cpu.X86.HasPOPCNT

// buzGather is in roll_amd64.s.
//
//go:noescape
func buzGather(text *byte, n int, tab *[256]uint64, dst *uint64)

// rollVec is in roll_amd64.s.
//
//go:noescape
func rollVec(tv *uint64, n, w int, h uint64, slots *uint64, k, mask uint64, buf *uint32, nb int, pend *uint64) (h2 uint64, nb2, np int)
