package sketch

import (
	"math/bits"
	"unsafe"
)

// buzGatherGo is what buzGather does, one byte at a time: dst[x] =
// tab[text[x]] for x < n.
func buzGatherGo(text *byte, n int, tab *[256]uint64, dst *uint64) {
	src, out := unsafe.Slice(text, n), unsafe.Slice(dst, n)
	for x, c := range src {
		out[x] = tab[c]
	}
}

// rollVecGo is what rollVec does, one shingle at a time: it rolls the
// hash h over n shingles whose outgoing bytes' table values are tv[:n]
// and incoming ones tv[w:w+n], appends the sampled values to buf from
// buf[nb] on, and writes to pend the spread hash g of each shingle whose
// value g>>32 is below its slot as read before the first shingle (it is a
// model of the assembly, which reads the slots eight shingles at a time,
// and lowers none), or with top not 0, below top. It returns the hash and
// the numbers of samples and of pending shingles.
func rollVecGo(tv *uint64, n, w int, h uint64, slots *uint64, k, mask uint64, buf *uint32, nb int, pend *uint64, top uint64) (h2 uint64, nb2, np int) {
	t := unsafe.Slice(tv, n+w)
	s := unsafe.Slice(slots, k)
	b := unsafe.Slice(buf, nb+n)
	p := unsafe.Slice(pend, n)
	for x := range n {
		h = bits.RotateLeft64(h, 1) ^ bits.RotateLeft64(t[x], w%64) ^ t[x+w]
		g := spread(h)
		v := g >> 32
		if g&mask == 0 {
			b[nb] = uint32(v)
			nb++
		}
		if j := uint64(uint32(g)) * k >> 32; top == 0 && v < s[j] || top != 0 && v < top {
			p[np] = g
			np++
		}
	}
	return h, nb, np
}

// wordVecGo is what wordVec does, one byte at a time: wordHashes over
// text[:n], whose bytes' buzTable values are tv[:n], writing to ends from
// ends[0].
func wordVecGo(text *byte, tv *uint64, n int, h, inWord uint64, ends *uint64) (h2, inWord2 uint64, ne int) {
	e, t := unsafe.Slice(ends, n), unsafe.Slice(tv, n)
	for x, c := range unsafe.Slice(text, n) {
		sep := b2u(c == ' ' || c == '\n')
		e[ne] = h
		ne += int(sep & inWord)
		inWord = sep ^ 1
		h = (bits.RotateLeft64(h, 5) ^ t[x]) & (sep - 1)
	}
	return h, inWord, ne
}

// featVecGo is what featVec does, one feature at a time: it adds the bits
// of the features of the words whose hashes are hs[0:n] to cnt, feature i
// to the byte counters of lane i%8.
func featVecGo(hs *uint64, n, words int, cnt *[8][8]uint64) {
	h := unsafe.Slice((*uint64)(unsafe.Add(unsafe.Pointer(hs), -8*(words-1))), n+words-1)
	for i := range n {
		var f uint64
		for _, wh := range h[i : i+words] {
			f = f*phi + wh
		}
		x := mix(f)
		for bit := range 64 {
			cnt[bit%8][i%8] += (x >> bit & 1) << (8 * (bit / 8))
		}
	}
}

// wordMasks are wordVec's bit masks of a group of eight bytes, by the
// bits of its separators s (bit l for byte l): the word bytes w = ^s; c1,
// c2 and c4, the lanes l whose part of the word hash prefix, after the
// steps of one, two and four lanes, holds no separator (lanes before the
// group count as words: the carried hash covers them); the separators
// that end a word when the byte before the group is not in one and when
// it is; and how many those are.
var wordMasks = func() (t [256][8]uint8) {
	for s := range 256 {
		w := ^s & 0xff
		c1 := w & (w<<1 | 1)
		c2 := c1 & (c1<<2 | 3)
		c4 := c2 & (c2<<4 | 15)
		e0, e1 := s&(w<<1)&0xff, s&(w<<1|1)&0xff
		t[s] = [8]uint8{uint8(w), uint8(c1), uint8(c2), uint8(c4), uint8(e0), uint8(e1),
			uint8(bits.OnesCount8(uint8(e0))), uint8(bits.OnesCount8(uint8(e1)))}
	}
	return t
}()
