package normalise

import "golang.org/x/sys/cpu"

// haveFoldVec says whether foldASCII folds 64 bytes at a time with
// AVX-512 (foldVec): byte compares into mask registers find the letters,
// digits and upper-case letters of 64 bytes at once, a masked add and move
// make the letters lower case and the separators spaces, and VPCOMPRESSB
// (AVX512_VBMI2) drops every separator that follows another. Tests turn
// it off to compare with the byte at a time loop.
var haveFoldVec = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI2 && cpu.X86.HasPOPCNT

// foldVec is in foldrun_amd64.s.
//
//go:noescape
func foldVec(out, src *byte, n int, prev uint64) (i, o int, last uint64)
