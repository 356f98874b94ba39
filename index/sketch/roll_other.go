//go:build !amd64

package sketch

// haveRollVec is false: only amd64 has rollPow2Vec's assembly.
var haveRollVec = false

func buzGather(text *byte, n int, tab *[256]uint64, dst *uint64) {
	buzGatherGo(text, n, tab, dst)
}

func rollVec(tv *uint64, n, w int, h uint64, slots *uint64, k, mask uint64, buf *uint32, nb int, pend *uint64) (h2 uint64, nb2, np int) {
	return rollVecGo(tv, n, w, h, slots, k, mask, buf, nb, pend)
}
