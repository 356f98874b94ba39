package sketch

import "golang.org/x/sys/cpu"

// haveVec says whether Compute uses its AVX-512 kernels: rollPow2Vec
// rolls the shingle hash over eight shingles at a time (buzGather,
// rollVec), and the SimHash hashes words eight bytes at a time (wordVec)
// and counts the bits of eight features at a time (featVec). AVX-512
// (Intel since Skylake-SP, AMD since Zen 4) has the 64-bit lane multiply
// and rotates, the gathers, the mask registers and the compressing stores
// they need. Tests turn it off to compare them with the scalar loops.
var haveVec = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasPOPCNT

// buzGather is in roll_amd64.s.
//
//go:noescape
func buzGather(text *byte, n int, tab *[256]uint64, dst *uint64)

// rollVec is in roll_amd64.s.
//
//go:noescape
func rollVec(tv *uint64, n, w int, h uint64, slots *uint64, k, mask uint64, buf *uint32, nb int, pend *uint64, top uint64) (h2 uint64, nb2, np int)

// wordVec is in roll_amd64.s.
//
//go:noescape
func wordVec(text *byte, tv *uint64, n int, h, inWord uint64, ends *uint64, masks *[256][8]uint8) (h2, inWord2 uint64, ne int)

// featVec is in roll_amd64.s.
//
//go:noescape
func featVec(hs *uint64, n, words int, cnt *[8][8]uint64)
