//go:build !amd64

package normalise

// haveFoldVec is false: only amd64 has foldRunVec's assembly.
var haveFoldVec = false

// foldRunVec is never called without haveFoldVec.
func foldRunVec(out, src *byte, n int, prev uint64) (int, uint64) { return 0, prev }
