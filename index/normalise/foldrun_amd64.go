package normalise

import "golang.org/x/sys/cpu"

// haveFoldVec says whether foldRun folds 64 bytes at a time with AVX-512
// (foldRunVec): byte compares into mask registers find the non-ASCII
// bytes, the spaces and the upper-case letters of 64 bytes at once, and
// masked adds and moves fold them, where the word-at-a-time loop takes
// about thirty instructions per sixteen bytes. Tests turn it off to
// compare the two.
var haveFoldVec = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// foldRunVec is in foldrun_amd64.s.
//
//go:noescape
func foldRunVec(out, src *byte, n int, prev uint64) (int, uint64)
