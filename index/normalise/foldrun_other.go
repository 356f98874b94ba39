//go:build !amd64

package normalise

// haveFoldVec is false: only amd64 has foldVec's assembly.
var haveFoldVec = false

// foldVec is never called without haveFoldVec.
func foldVec(out, src *byte, n int, prev uint64) (i, o int, last uint64) { return 0, 0, prev }
