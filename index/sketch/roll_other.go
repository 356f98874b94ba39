//go:build !amd64

package sketch

// haveVec is false: only amd64 has the assembly of Compute's vector
// kernels; the functions below are their Go models, never called.
var haveVec = false

func buzGather(text *byte, n int, tab *[256]uint64, dst *uint64) {
	buzGatherGo(text, n, tab, dst)
}

func rollVec(tv *uint64, n, w int, h uint64, slots *uint64, k, mask uint64, buf *uint32, nb int, pend *uint64, top uint64) (h2 uint64, nb2, np int) {
	return rollVecGo(tv, n, w, h, slots, k, mask, buf, nb, pend, top)
}

func wordVec(text *byte, tv *uint64, n int, h, inWord uint64, ends *uint64, masks *[256][8]uint8) (h2, inWord2 uint64, ne int) {
	return wordVecGo(text, tv, n, h, inWord, ends)
}

func featVec(hs *uint64, n, words int, cnt *[8][8]uint64) { featVecGo(hs, n, words, cnt) }
