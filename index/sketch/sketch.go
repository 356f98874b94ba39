package sketch

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// Params are the sketch parameters. They are part of an index's scheme:
// sketches made with different parameters are never compared.
type Params struct {
	// Window is the shingle width in bytes.
	Window int `mapstructure:"window"`
	// SampleN keeps the shingles whose hash is 0 mod SampleN (Mod-n).
	SampleN int `mapstructure:"sample_n"`
	// MinHashK is the number of MinHash slots.
	MinHashK int `mapstructure:"minhash_k"`
	// Bands is the number of LSH bands; it must divide MinHashK.
	Bands int `mapstructure:"bands"`
	// SimHashWords is the number of consecutive words in a SimHash feature.
	SimHashWords int `mapstructure:"simhash_words"`
}

// DefaultParams returns the defaults chosen in docs/EVALUATION.md.
func DefaultParams() Params {
	return Params{Window: 20, SampleN: 16, MinHashK: 128, Bands: 32, SimHashWords: 3}
}

// ErrInvalidParams is returned by Validate for unusable parameters.
var ErrInvalidParams = errors.New("invalid sketch parameters")

// Validate reports every unusable parameter.
func (p Params) Validate() error {
	var errs []error
	if p.Window < 4 || p.Window > 1024 {
		errs = append(errs, fmt.Errorf("%w: window %d is not in [4, 1024]", ErrInvalidParams, p.Window))
	}
	if p.SampleN < 1 || p.SampleN > 1<<16 {
		errs = append(errs, fmt.Errorf("%w: sample_n %d is not in [1, 65536]", ErrInvalidParams, p.SampleN))
	}
	if p.MinHashK < 1 || p.MinHashK > 4096 {
		errs = append(errs, fmt.Errorf("%w: minhash_k %d is not in [1, 4096]", ErrInvalidParams, p.MinHashK))
	}
	if p.Bands < 1 || (p.MinHashK > 0 && p.MinHashK%p.Bands != 0) {
		errs = append(errs, fmt.Errorf("%w: bands %d does not divide minhash_k %d", ErrInvalidParams, p.Bands, p.MinHashK))
	}
	if p.SimHashWords < 1 || p.SimHashWords > 16 {
		errs = append(errs, fmt.Errorf("%w: simhash_words %d is not in [1, 16]", ErrInvalidParams, p.SimHashWords))
	}
	return errors.Join(errs...)
}

// Sketch is the result of Compute. Its slices are reused by later calls
// to Compute with the same Sketch.
type Sketch struct {
	// Samples are the distinct sampled shingle hashes, sorted ascending.
	Samples []uint32
	// MinHash has MinHashK slots (empty when the text is empty).
	MinHash []uint32
	// SimHash is the 64-bit SimHash of the text's word features.
	SimHash uint64

	scratch []uint32
}

// radixSort sorts a in place with four 8-bit LSD passes, using and
// returning the scratch buffer; for the tens of thousands of samples of a
// large text it is several times faster than a comparison sort.
func radixSort(a, scratch []uint32) []uint32 {
	if len(a) < 256 {
		slices.Sort(a)
		return scratch
	}
	if cap(scratch) < len(a) {
		scratch = make([]uint32, len(a))
	}
	tmp := scratch[:len(a)]
	var count [256]int
	src, dst := a, tmp
	for shift := 0; shift < 32; shift += 8 {
		clear(count[:])
		for _, v := range src {
			count[v>>shift&0xff]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, v := range src {
			d := v >> shift & 0xff
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	// An even number of passes: the result is back in a.
	return scratch
}

// buzTable maps a byte to a random 64-bit value for the cyclic-polynomial
// (buzhash) rolling hash: two XORs and two rotations per byte, no
// multiplication, and every output bit equally good.
var buzTable = func() [256]uint64 {
	var t [256]uint64
	x := uint64(0x9E3779B97F4A7C15)
	for i := range t {
		// splitmix64
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		t[i] = z ^ z>>31
	}
	return t
}()

const empty = ^uint64(0)

// mix is the murmur3 64-bit finaliser.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// spread decorrelates the bits of a rolling hash cheaply (one multiply):
// enough for slot choice and sampling, whose inputs are already random.
func spread(h uint64) uint64 {
	h = (h ^ h>>29) * 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// Shingles calls fn with the 64-bit hash of every Window-byte shingle of
// text, in order. A text shorter than the window is one shingle. It is
// exported for the evaluation's peer algorithms.
func Shingles(window int, text []byte, fn func(h uint64)) {
	if len(text) == 0 {
		return
	}
	if len(text) <= window {
		fn(spread(shortHash(text)))
		return
	}
	h := uint64(0)
	for _, c := range text[:window] {
		h = bits.RotateLeft64(h, 1) ^ buzTable[c]
	}
	fn(spread(h))
	rot := window % 64
	for i := window; i < len(text); i++ {
		h = bits.RotateLeft64(h, 1) ^ bits.RotateLeft64(buzTable[text[i-window]], rot) ^ buzTable[text[i]]
		fn(spread(h))
	}
}

func shortHash(text []byte) uint64 {
	h := uint64(0)
	for _, c := range text {
		h = bits.RotateLeft64(h, 1) ^ buzTable[c]
	}
	return h
}

// Compute sketches the normalised text into s, reusing its slices.
// p must be valid.
func Compute(p Params, text []byte, s *Sketch) {
	s.Samples = s.Samples[:0]
	s.SimHash = 0
	if cap(s.MinHash) < p.MinHashK {
		s.MinHash = make([]uint32, p.MinHashK)
	}
	s.MinHash = s.MinHash[:0]
	if len(text) == 0 {
		return
	}
	k := uint64(p.MinHashK)
	n := uint64(p.SampleN)
	// Mod-n on 24 hash bits; a power-of-two n is a mask, not a division.
	var mask uint64
	if n&(n-1) == 0 {
		mask = n - 1
	}
	sampled := func(g uint64) bool {
		if mask != 0 || n == 1 {
			return g>>8&mask == 0
		}
		return (g>>8&0xffffff)%n == 0
	}
	slots := make([]uint64, k)
	for i := range slots {
		slots[i] = empty
	}
	// One-permutation hashing: bits 0-31 choose the slot (multiply-shift
	// range reduction), bits 32-63 compete for the slot's minimum, and
	// bits 8-31 decide Mod-n sampling.
	visit := func(g uint64) {
		if i := (g & 0xffffffff) * k >> 32; g>>32 < slots[i] {
			slots[i] = g >> 32
		}
		if sampled(g) {
			s.Samples = append(s.Samples, uint32(g>>32))
		}
	}
	w := p.Window
	if len(text) <= w {
		visit(spread(shortHash(text)))
	} else {
		h := shortHash(text[:w])
		visit(spread(h))
		rot := w % 64
		for i := w; i < len(text); i++ {
			h = bits.RotateLeft64(h, 1) ^ bits.RotateLeft64(buzTable[text[i-w]], rot) ^ buzTable[text[i]]
			g := spread(h)
			if j := (g & 0xffffffff) * k >> 32; g>>32 < slots[j] {
				slots[j] = g >> 32
			}
			if sampled(g) {
				s.Samples = append(s.Samples, uint32(g>>32))
			}
		}
	}
	s.scratch = radixSort(s.Samples, s.scratch)
	s.Samples = slices.Compact(s.Samples)
	densify(slots)
	s.MinHash = s.MinHash[:k]
	for i, v := range slots {
		s.MinHash[i] = uint32(v)
	}
	s.SimHash = simHash(p.SimHashWords, text)
}

// densify fills empty slots from the nearest filled slot to their right
// (circularly), salted by the distance, so that short texts still give
// unbiased resemblance estimates (Shrivastava & Li, 2014).
func densify(slots []uint64) {
	k := len(slots)
	for i := range slots {
		if slots[i] != empty {
			continue
		}
		for d := 1; d < k; d++ {
			if v := slots[(i+d)%k]; v != empty && v <= 0xffffffff {
				slots[i] = 1<<32 | (mix(v+uint64(d)*0x9E3779B97F4A7C15) & 0xffffffff)
				break
			}
		}
	}
	for i := range slots {
		slots[i] &= 0xffffffff
	}
}

// bitCounter counts, for each of 64 bit positions, how many added words
// had that bit set. It is bit-sliced: plane i holds bit i of all 64
// counters, so adding a word is a ripple carry over about two planes.
type bitCounter struct {
	planes [40]uint64
	n      int
}

func (c *bitCounter) add(x uint64) {
	c.n++
	for i := 0; x != 0; i++ {
		carry := c.planes[i] & x
		c.planes[i] ^= x
		x = carry
	}
}

// majority sets bit b when more than half the added words had bit b set:
// Charikar's SimHash with weights +1 and -1.
func (c *bitCounter) majority() uint64 {
	var out uint64
	for b := 0; b < 64; b++ {
		var cnt int
		for i := range c.planes {
			cnt |= int(c.planes[i]>>b&1) << i
		}
		if 2*cnt > c.n {
			out |= 1 << b
		}
	}
	return out
}

// simHash is Charikar's SimHash over features of `words` consecutive
// words, each weighted by its number of occurrences.
func simHash(words int, text []byte) uint64 {
	var cnt bitCounter
	// ring holds the last `words` word hashes; next is the oldest.
	var ringBuf [16]uint64
	ring := ringBuf[:words]
	next, seen := 0, 0
	push := func(h uint64) {
		ring[next] = h
		next++
		if next == words {
			next = 0
		}
		seen++
		if seen >= words {
			var f uint64
			for j := next; j < words; j++ {
				f = f*0x9E3779B97F4A7C15 + ring[j]
			}
			for j := 0; j < next; j++ {
				f = f*0x9E3779B97F4A7C15 + ring[j]
			}
			cnt.add(mix(f))
		}
	}
	var h uint64
	inWord := false
	for _, c := range text {
		if c == ' ' || c == '\n' {
			if inWord {
				push(h)
				inWord = false
			}
			continue
		}
		if !inWord {
			h = 0
			inWord = true
		}
		h = bits.RotateLeft64(h, 5) ^ buzTable[c]
	}
	if inWord {
		push(h)
	}
	if cnt.n == 0 && seen > 0 {
		// Fewer words than a feature: one feature of all of them.
		var f uint64
		for _, w := range ring[:seen] {
			f = f*0x9E3779B97F4A7C15 + w
		}
		cnt.add(mix(f))
	}
	return cnt.majority()
}

// Resemblance estimates the Jaccard resemblance of two texts from their
// MinHash slots: the share of equal slots. Sketches of different sizes
// (or empty ones) resemble nothing.
func Resemblance(a, b []uint32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	eq := 0
	for i := range a {
		if a[i] == b[i] {
			eq++
		}
	}
	return float64(eq) / float64(len(a))
}

// intersect counts the common values of two sorted, distinct slices.
func intersect(a, b []uint32) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// Containment estimates how much of text A is contained in text B from
// their sorted samples: |A ∩ B| / |A|. An empty A is contained nowhere.
func Containment(a, b []uint32) float64 {
	if len(a) == 0 {
		return 0
	}
	return float64(intersect(a, b)) / float64(len(a))
}

// SampleResemblance estimates resemblance from sorted samples:
// |A ∩ B| / |A ∪ B|.
func SampleResemblance(a, b []uint32) float64 {
	n := intersect(a, b)
	u := len(a) + len(b) - n
	if u == 0 {
		return 0
	}
	return float64(n) / float64(u)
}

// Hamming is the number of differing bits of two SimHashes.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// Bands appends to dst one 64-bit key per LSH band of the MinHash slots:
// two texts share a band key with probability r^(K/Bands) for resemblance
// r. Keys include the band number, so equal rows of different bands never
// collide.
func Bands(p Params, minHash []uint32, dst []uint64) []uint64 {
	if len(minHash) == 0 || p.Bands < 1 {
		return dst
	}
	rows := len(minHash) / p.Bands
	if rows == 0 {
		rows = 1
	}
	for b := 0; b*rows < len(minHash) && b < p.Bands; b++ {
		h := mix(uint64(b) + 1)
		for _, v := range minHash[b*rows : min((b+1)*rows, len(minHash))] {
			h = mix(h ^ uint64(v))
		}
		dst = append(dst, h)
	}
	return dst
}

// Near appends to dst the positions of hashes within maxDist bits of q.
func Near(hashes []uint64, q uint64, maxDist int, dst []int32) []int32 {
	for i, h := range hashes {
		if bits.OnesCount64(h^q) <= maxDist {
			dst = append(dst, int32(i))
		}
	}
	return dst
}
