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
	// MinHashBits is how many low bits of each MinHash slot are kept
	// (b-bit MinHash, Li & König): 32 (or 0) keeps them all, 16 halves
	// the sketch, 8 (the default for new indexes since issue 33; older
	// ones keep 32, see index.Options.ForScheme) quarters it. Resemblance
	// is then estimated with the correction for slots equal by chance
	// (ResemblanceBits). The LSH band keys are made from the bits kept.
	MinHashBits int `mapstructure:"minhash_bits"`
	// SampleFloor, when positive, samples long texts more sparsely
	// (hierarchical Mod-2^k sampling, see Levels): a text keeps the
	// samples that are 0 mod SampleN·2^j, j the largest in [0, MaxLevels]
	// that leaves it at least SampleFloor samples. 0 (the default) keeps
	// every Mod-SampleN sample, chosen by hash bits the samples do not
	// keep. It needs a power-of-two SampleN.
	SampleFloor int `mapstructure:"sample_floor"`
}

// MaxLevels is how many times sparser than Mod-SampleN a long text's
// samples may become with a SampleFloor: 8 times at most, so that every
// text still keeps all its Mod-(8·SampleN) samples, the anchors
// (index.AnchorEvery) that find a short text inside a long one.
const MaxLevels = 3

// FullBits is MinHashBits normalised: 32 for 0.
func (p Params) FullBits() int {
	if p.MinHashBits == 0 {
		return 32
	}
	return p.MinHashBits
}

// BaseLevel is log2(SampleN), the level of a text's densest samples when
// SampleFloor is set: its samples are 0 mod 2^level.
func (p Params) BaseLevel() int {
	return bits.TrailingZeros(uint(p.SampleN))
}

// DefaultParams returns the defaults chosen in docs/EVALUATION.md.
func DefaultParams() Params {
	return Params{Window: 20, SampleN: 16, MinHashK: 128, Bands: 32, SimHashWords: 3, MinHashBits: 8}
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
	switch p.MinHashBits {
	case 0, 8, 16, 32:
	default:
		errs = append(errs, fmt.Errorf("%w: minhash_bits %d is not 8, 16 or 32", ErrInvalidParams, p.MinHashBits))
	}
	if p.SampleFloor < 0 || p.SampleFloor > 1<<16 {
		errs = append(errs, fmt.Errorf("%w: sample_floor %d is not in [0, 65536]", ErrInvalidParams, p.SampleFloor))
	}
	if p.SampleFloor > 0 && (p.SampleN&(p.SampleN-1) != 0 || p.SampleN > 1<<12) {
		errs = append(errs, fmt.Errorf("%w: sample_floor needs a power-of-two sample_n up to 4096, not %d", ErrInvalidParams, p.SampleN))
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
	// Level is 0 without a SampleFloor; with one, every sample is 0 mod
	// 2^Level (see Params.SampleFloor and Levels).
	Level int

	scratch []uint32
	roll    *roller // Compute's other working state, allocated on first use
}

// radixSort sorts a in place with LSD radix passes, using and returning
// the scratch buffer; for the tens of thousands of samples of a large text
// it is several times faster than a comparison sort. One pass over a
// counts the digits of every pass at once.
func radixSort(a, scratch []uint32) []uint32 {
	if len(a) < 256 {
		return bucketSort(a, scratch)
	}
	if cap(scratch) < len(a) {
		scratch = make([]uint32, len(a))
	}
	tmp := scratch[:len(a)]
	if len(a) < 1024 {
		radix8(a, tmp)
	} else {
		radix11(a, tmp)
	}
	return scratch
}

// bucketSort sorts a, shorter than 256 values, through the scratch
// buffer, which it returns. Samples are the top bits of hashes, spread
// evenly: placing each value in one of len(a) buckets by its top bits
// (v*len(a)>>32), a counting sort, leaves the buckets about one value
// each, and an insertion sort finishes in about one step per value. The
// comparison sort it replaces mispredicts a branch at about every other
// comparison: 1.7 times slower on 100 to 200 values, the samples of the
// many short texts. Values bunched together, which hashes are not, would
// make the insertion sort quadratic, which the length bounds.
func bucketSort(a, scratch []uint32) []uint32 {
	n := len(a)
	if n < 2 {
		return scratch
	}
	if cap(scratch) < 2*n+1 {
		scratch = make([]uint32, 2*n+1)
	}
	tmp, cnt := scratch[:n], scratch[n:2*n+1]
	clear(cnt)
	for _, v := range a {
		cnt[uint64(v)*uint64(n)>>32+1]++
	}
	for i := 1; i < len(cnt); i++ {
		cnt[i] += cnt[i-1] // cnt[b] is where bucket b starts
	}
	for _, v := range a {
		b := uint64(v) * uint64(n) >> 32
		tmp[cnt[b]] = v
		cnt[b]++
	}
	for i := 1; i < n; i++ {
		x := tmp[i]
		j := i
		for ; j > 0 && tmp[j-1] > x; j-- {
			tmp[j] = tmp[j-1]
		}
		tmp[j] = x
	}
	copy(a, tmp)
	return scratch
}

// radix8 sorts a with four 8-bit passes, through tmp, as long as a.
func radix8(a, tmp []uint32) {
	var count [4][256]uint32
	for _, v := range a {
		count[0][v&0xff]++
		count[1][v>>8&0xff]++
		count[2][v>>16&0xff]++
		count[3][v>>24]++
	}
	src, dst := a, tmp
	for pass := range count {
		c := &count[pass]
		sum := uint32(0)
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		shift := 8 * pass
		dst = dst[:len(src)]
		for _, v := range src {
			d := v >> shift & 0xff
			dst[c[d]] = v
			c[d]++
		}
		src, dst = dst, src
	}
	// An even number of passes: the result is back in a.
}

// radix11 sorts a with three passes of 11, 11 and 10 bits, through tmp,
// as long as a, and copies the result back: for large arrays a pass costs
// more than the copy.
func radix11(a, tmp []uint32) {
	var count [3][2048]uint32
	for _, v := range a {
		count[0][v&0x7ff]++
		count[1][v>>11&0x7ff]++
		count[2][v>>22]++
	}
	src, dst := a, tmp
	for pass := range count {
		c := &count[pass]
		sum := uint32(0)
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		shift := 11 * pass
		dst = dst[:len(src)]
		for _, v := range src {
			d := v >> shift & 0x7ff
			dst[c[d]] = v
			c[d]++
		}
		src, dst = dst, src
	}
	copy(a, src)
}

// dedupSorted is slices.Compact for sorted a, without a branch per value
// (repeated phrases make duplicates common, and their pattern random):
// every value is written to the next free place, which advances only when
// the value differs from the one before it. The free place is never past
// the value being read, so no unread value is overwritten. The value
// before is kept in a register, not read back from a, so that no load
// waits for the store before it.
func dedupSorted(a []uint32) []uint32 {
	if len(a) == 0 {
		return a
	}
	n := 1
	prev := a[0]
	for _, v := range a[1:] {
		a[n] = v // n <= index of v
		n += int(b2u(v != prev))
		prev = v
	}
	return a[:n]
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

// block is how many shingles (or bytes) the inner loops of Compute and
// simHash handle between flushes of their fixed-size scratch buffers.
const block = 1024

// Compute sketches the normalised text into s, reusing its slices.
// p must be valid.
func Compute(p Params, text []byte, s *Sketch) {
	s.Samples = s.Samples[:0]
	s.SimHash, s.Level = 0, 0
	if cap(s.MinHash) < p.MinHashK {
		s.MinHash = make([]uint32, p.MinHashK)
	}
	s.MinHash = s.MinHash[:0]
	if len(text) == 0 {
		return
	}
	if s.roll == nil {
		s.roll = new(roller)
	}
	k := uint64(p.MinHashK)
	if uint64(cap(s.roll.slots)) < k {
		s.roll.slots = make([]uint64, k)
	}
	s.roll.slots = s.roll.slots[:k]
	slots := s.roll.slots
	for i := range slots {
		slots[i] = empty
	}
	w := p.Window
	n := uint64(p.SampleN)
	switch {
	case len(text) <= w:
		// One shingle: the whole text.
		visit(p, slots, spread(shortHash(text)), s)
	case n&(n-1) == 0 && haveVec:
		// rollPow2Vec hashes the words too, with the table values it
		// looks up for the shingles.
		h := shortHash(text[:w])
		visit(p, slots, spread(h), s)
		s.roll.sim.begin(p.SimHashWords)
		s.Samples = s.roll.rollPow2Vec(p, text, h, s.Samples)
		s.SimHash = s.roll.sim.sum()
	case n&(n-1) == 0:
		h := shortHash(text[:w])
		visit(p, slots, spread(h), s)
		s.Samples = s.roll.rollPow2(p, text, h, s.Samples)
	default:
		h := shortHash(text[:w])
		visit(p, slots, spread(h), s)
		s.Samples = rollMod(text, w, h, n, slots, s.Samples)
	}
	if len(text) <= w || n&(n-1) != 0 || !haveVec {
		s.SimHash = s.roll.sim.hash(p.SimHashWords, text)
	}
	s.scratch = radixSort(s.Samples, s.scratch)
	s.Samples = dedupSorted(s.Samples)
	if p.SampleFloor > 0 {
		s.Samples, s.Level = thin(p, s.Samples)
	}
	densify(slots)
	s.MinHash = s.MinHash[:k]
	mask := uint32(1<<p.FullBits() - 1)
	for i, v := range slots {
		s.MinHash[i] = uint32(v) & mask
	}
}

// One-permutation hashing: bits 0-31 of a shingle's spread hash g choose
// its MinHash slot (multiply-shift range reduction), bits 32-63 compete for
// the slot's minimum, and bits 8-31 decide Mod-n sampling, which keeps the
// high half as the sample.

// visit adds the shingle hash g to the slots and the samples.
func visit(p Params, slots []uint64, g uint64, s *Sketch) {
	if i := (g & 0xffffffff) * uint64(len(slots)) >> 32; g>>32 < slots[i] {
		slots[i] = g >> 32
	}
	n := uint64(p.SampleN)
	var keep bool
	if n&(n-1) == 0 {
		keep = g>>8&(n-1) == 0 // n == 1 gives mask 0: every shingle
	} else {
		keep = (g>>8&0xffffff)%n == 0
	}
	if keep {
		s.Samples = append(s.Samples, uint32(g>>32))
	}
}

// rollMod is rollPow2 for a SampleN that is not a power of two: Mod-n on
// 24 hash bits needs a division, so this rarely used case stays simple.
func rollMod(text []byte, w int, h, n uint64, slots []uint64, samples []uint32) []uint32 {
	k := uint64(len(slots))
	rot := w % 64
	for i := w; i < len(text); i++ {
		h = bits.RotateLeft64(h, 1) ^ bits.RotateLeft64(buzTable[text[i-w]], rot) ^ buzTable[text[i]]
		g := spread(h)
		if j := (g & 0xffffffff) * k >> 32; g>>32 < slots[j] {
			slots[j] = g >> 32
		}
		if (g>>8&0xffffff)%n == 0 {
			samples = append(samples, uint32(g>>32))
		}
	}
	return samples
}

// b2u is 1 for true and 0 for false; the compiler makes it a SETcc, not a
// branch.
func b2u(b bool) uint64 {
	var u uint64
	if b {
		u = 1
	}
	return u
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

// laneCounter counts, for each of 64 bit positions, how many added words
// had that bit set. Lane word j holds eight 8-bit counters, byte b of it
// counting bit 8b+j; a byte counter overflows after 255 additions, so the
// lanes are flushed into wide totals before that.
type laneCounter struct {
	lanes  [8]uint64
	inLane int
	total  [64]int
	n      int
}

const (
	ones8 = 0x0101010101010101
	ones4 = 0x1111111111111111
	low4  = 0x0f0f0f0f0f0f0f0f
)

// add counts the bits of xs.
//
// Words are first counted in 4-bit lanes: nib[j] holds sixteen 4-bit
// counters, nibble b counting bit 4b+j, so a word costs four
// shift-mask-adds with no carry chain and no branch (x>>j & ones4 has bit
// 4b set exactly when bit 4b+j of x is, and a nibble holding at most 14
// cannot carry into its neighbour). Every 15 words the nibbles move to the
// byte lanes: the even nibbles of nib[j] (nib[j] & low4) count bits 8b+j,
// which byte lane j counts, and the odd ones (nib[j]>>4 & low4) bits
// 8b+4+j, which byte lane j+4 counts.
func (c *laneCounter) add(xs []uint64) {
	for len(xs) > 0 {
		// At most 15 words per round, and no more than the byte lanes
		// can take before their flush.
		m := min(len(xs), 15, 255-c.inLane)
		n0, n1, n2, n3 := nibbleSums(xs[:m])
		c.lanes[0] += n0 & low4
		c.lanes[4] += n0 >> 4 & low4
		c.lanes[1] += n1 & low4
		c.lanes[5] += n1 >> 4 & low4
		c.lanes[2] += n2 & low4
		c.lanes[6] += n2 >> 4 & low4
		c.lanes[3] += n3 & low4
		c.lanes[7] += n3 >> 4 & low4
		c.n += m
		c.inLane += m
		if c.inLane == 255 {
			c.flush()
		}
		xs = xs[m:]
	}
}

// nibbleSums returns the sums of x&ones4, x>>1&ones4, x>>2&ones4 and
// x>>3&ones4 over xs, at most 15 words. It is not inlined: alone, its loop
// keeps every value in a register.
//
//go:noinline
func nibbleSums(xs []uint64) (n0, n1, n2, n3 uint64) {
	for _, x := range xs {
		n0 += x & ones4
		n1 += x >> 1 & ones4
		n2 += x >> 2 & ones4
		n3 += x >> 3 & ones4
	}
	return n0, n1, n2, n3
}

func (c *laneCounter) flush() {
	for j, l := range c.lanes {
		for b := 0; b < 8; b++ {
			c.total[8*b+j] += int(l >> (8 * b) & 0xff)
		}
	}
	c.lanes = [8]uint64{}
	c.inLane = 0
}

// majority sets bit b when more than half the added words had bit b set:
// Charikar's SimHash with weights +1 and -1.
func (c *laneCounter) majority() uint64 {
	c.flush()
	var out uint64
	for b, t := range c.total {
		if 2*t > c.n {
			out |= 1 << b
		}
	}
	return out
}

const phi = 0x9E3779B97F4A7C15

// simHash is Charikar's SimHash over features of `words` consecutive
// words, each weighted by its number of occurrences. Words are the maximal
// runs of bytes other than ' ' and '\n'; a word's hash is
// h = rotl(h, 5) ^ buzTable[c] over its bytes, from 0; a feature is
// mix(f) with f = sum of the feature's word hashes times phi^(words-1),
// ..., phi^1, phi^0, oldest first, computed mod 2^64.
//
// It works a block of text at a time, in loops that have no unpredictable
// branch: wordHashes finds the words and their hashes, simState.addWords
// turns them into features, and laneCounter.add counts their bits.
func simHash(words int, text []byte) uint64 {
	return new(simState).hash(words, text)
}

// wordTables are the tables of the word hash loops, together so that one
// register holds their base.
type wordTables struct {
	// buz is buzTable.
	buz [256]uint64
	// sep[c] is 1 for the word separators ' ' and '\n', 0 for other
	// bytes: a load instead of two comparisons, which the compiler would
	// turn into a branch.
	sep [256]uint64
	// word[c] is 1 - sep[c].
	word [256]uint64
}

// init fills the tables.
func (t *wordTables) init() {
	t.buz = buzTable
	for c := range t.word {
		t.sep[c], t.word[c] = 0, 1
	}
	t.sep[' '], t.sep['\n'] = 1, 1
	t.word[' '], t.word['\n'] = 0, 0
}

// wordHashes computes the hash of every word of text that ends in text,
// and writes them to ends from ends[ne] on, returning their number added
// to ne. h is the hash of the part of the current word before text (0 if
// none) and inWord is 1 when the byte before text belongs to a word; both
// are returned updated. tab holds the tables.
//
// It is branch-free: h is zeroed at a separator (sep-1 is all ones inside
// a word, 0 at a separator), and every byte writes h to the next free
// place of ends, which advances only when the byte is a separator right
// after a word, so that h was that word's complete hash. n bytes write
// at most n places.
//
// It is not inlined: inlined into its caller, it has fewer registers and
// spills its values in the loop.
//
//go:noinline
func wordHashes(tab *wordTables, text []byte, h, inWord uint64, ends *[block]uint64, ne int) (uint64, uint64, int) {
	for _, c := range text {
		sep := tab.sep[c]
		ends[ne] = h
		ne += int(sep & inWord)
		inWord = sep ^ 1
		h = (bits.RotateLeft64(h, 5) ^ tab.buz[c]) & (sep - 1)
	}
	return h, inWord, ne
}

// wordSplit returns where to split the text seg between wordHashes2's two
// streams: just after the first separator in its second half, so that the
// second stream starts outside a word, with hash 0. It returns 0 for a
// text too short to be worth it, or without such a separator.
func (t *wordTables) wordSplit(seg []byte) int {
	if len(seg) < 256 {
		return 0
	}
	for j := len(seg) / 2; j < len(seg)-1; j++ {
		if t.sep[seg[j]] != 0 {
			return j + 1
		}
	}
	return 0
}

// wordHashes2 is wordHashes over two texts at once, a[1:] and b[1:], of
// the same length: each byte's step waits for the step before, so two
// independent texts keep the processor's units busy during those waits.
// a[0] and b[0] are the bytes before each text, and tell whether the first
// byte continues a word; the loop reads every byte's predecessor rather
// than carry it, for want of registers. ha and hb are the hashes of the
// words under way. The hashes of the words ending in a go to
// st.hs[hist+na:], those ending in b to st.hs2[nb:].
//
//go:noinline
func (st *simState) wordHashes2(a, b []byte, ha, hb uint64, na, nb int) (uint64, uint64, int, int) {
	tab := &st.tab
	b = b[:len(a)]
	for x := 1; x < len(a); x++ {
		ca, cb := a[x], b[x]
		sa, sb := tab.sep[ca], tab.sep[cb]
		st.hs[hist+na] = ha
		st.hs2[nb] = hb
		na += int(sa & tab.word[a[x-1]])
		nb += int(sb & tab.word[b[x-1]])
		ha = (bits.RotateLeft64(ha, 5) ^ tab.buz[ca]) & (sa - 1)
		hb = (bits.RotateLeft64(hb, 5) ^ tab.buz[cb]) & (sb - 1)
	}
	return ha, hb, na, nb
}

// hist is how many word hashes simState keeps from one block to the next:
// at least the largest SimHashWords.
const hist = 16

// simState is the state of simHash. It is large, for its buffers: Compute
// keeps one with its Sketch.
type simState struct {
	cnt   laneCounter
	words int
	seen  int    // words seen so far
	f     uint64 // the polynomial of the last `words` words
	drop  uint64 // phi^words
	// hs holds the hashes of the hist words before the current block in
	// hs[:hist] (0 for words before the text), then those of the
	// current block's words.
	hs [hist + block]uint64
	// feats receives the features of a block.
	feats [block]uint64
	// hs2 receives the word hashes of wordHashes2's second stream.
	hs2 [block]uint64
	// h and inWord are addVec's word hash under way and whether the
	// last byte added is in a word; tv holds the table values of a block
	// for hash.
	h, inWord uint64
	tv        [block]uint64
	// vcnt are featVec's byte counters, flushed to cnt's totals
	// (flushVec) before vgroups groups of eight features can overflow
	// them.
	vcnt    [8][8]uint64
	vgroups int
	// tab holds the word tables, filled on first use; here, they share
	// st's register.
	tab   wordTables
	tabOK bool
}

// hash returns simHash(words, text), reusing st's buffers.
//
// It hashes the words of a block in two streams where it can (see
// wordHashes2): the first from the start of the block to just after a
// separator near its middle, the second from there to the end; the word
// hashes of the second follow those of the first.
//
// With AVX-512 (haveVec), wordVec hashes the words of a block eight bytes
// at a time instead (see addVec): buzGather looks up the bytes' table
// values and a prefix of rotations and XORs across the lanes, cut at
// separators, gives the eight hashes at once, in about half the time of
// the two streams. Compute does not call hash then: rollPow2Vec hashes
// the words with the table values it looks up for the shingles.
func (st *simState) hash(words int, text []byte) uint64 {
	st.begin(words)
	if haveVec {
		for i := 0; i < len(text); i += block {
			seg := text[i:min(i+block, len(text))]
			buzGather(&seg[0], len(seg)&^7, &st.tab.buz, &st.tv[0])
			st.addVec(seg, st.tv[:], i+len(seg) == len(text))
		}
		return st.sum()
	}
	var h, inWord uint64
	ends := (*[block]uint64)(st.hs[hist:])
	for i := 0; i < len(text); i += block {
		end := min(i+block, len(text))
		seg := text[i:end]
		var ne int
		if m := st.tab.wordSplit(seg); m > 0 && i > 0 {
			// Stream a is seg[:m], b is seg[m:]; they run together over
			// the length of b, then a finishes alone. a ends with the
			// separator before b, which ends its last word.
			n := len(seg) - m
			ha, hb, na, nb := st.wordHashes2(text[i-1:i+n], text[i+m-1:end], h, 0, 0, 0)
			_, _, na = wordHashes(&st.tab, seg[n:m], ha, st.tab.word[seg[n-1]], ends, na)
			ne = na + copy(ends[na:], st.hs2[:nb])
			h, inWord = hb, st.tab.word[seg[len(seg)-1]]
		} else {
			h, inWord, ne = wordHashes(&st.tab, seg, h, inWord, ends, 0)
		}
		if end == len(text) && inWord == 1 {
			// The text ends inside a word. ne < block: a block of n
			// bytes ends at most (n+1)/2 words.
			ends[ne] = h
			ne++
		}
		st.addWords(ne)
	}
	return st.sum()
}

// begin makes st ready for a text whose features are of `words` words.
func (st *simState) begin(words int) {
	st.cnt = laneCounter{}
	st.vcnt, st.vgroups = [8][8]uint64{}, 0
	st.words, st.seen, st.f, st.drop = words, 0, 0, 1
	for range words {
		st.drop *= phi
	}
	clear(st.hs[:hist])
	st.h, st.inWord = 0, 0
	if !st.tabOK {
		st.tab.init()
		st.tabOK = true
	}
}

// addVec counts the features of the words ending in seg, the text's
// next block bytes at most (last when it ends the text), with wordVec:
// tv holds the buzTable values of seg's bytes, which rollPow2Vec has
// already looked up for its shingles.
func (st *simState) addVec(seg []byte, tv []uint64, last bool) {
	ends := (*[block]uint64)(st.hs[hist:])
	h, inWord, ne := st.h, st.inWord, 0
	if v := len(seg) &^ 7; v > 0 {
		h, inWord, ne = wordVec(&seg[0], &tv[0], v, h, inWord, &ends[0], &wordMasks)
		seg = seg[v:]
	}
	h, inWord, ne = wordHashes(&st.tab, seg, h, inWord, ends, ne)
	if last && inWord == 1 {
		// The text ends inside a word. ne < block: a block of n bytes
		// ends at most (n+1)/2 words.
		ends[ne] = h
		ne++
	}
	st.h, st.inWord = h, inWord
	st.addWords(ne)
}

// addWords counts the features ending at the n words whose hashes are in
// st.hs[hist:], one per word once the first `words` words are seen, then
// moves the last hist hashes to the front of st.hs.
//
// f is updated in O(1) per word as a rolling polynomial: drop the term of
// the word `words` back (its hash times phi^(words-1)), shift the rest up
// one power (*phi) and add the new hash. Both are done as
// f*phi + (hash - old*phi^words), which equals it mod 2^64 and leaves one
// multiplication and one addition in the loop-carried dependency. Until
// `words` words are seen the "oldest" hash is one before the text, zero,
// so dropping it subtracts nothing. The loop has no branch: a feature is
// computed for every word, and those of the first words-1 words of the
// text are not counted.
func (st *simState) addWords(n int) {
	if haveVec {
		st.addWordsVec(n)
		return
	}
	f, drop := st.f, st.drop
	cur := st.hs[hist : hist+n]
	old := st.hs[hist-st.words:]
	old = old[:len(cur)]
	feats := st.feats[:len(cur)]
	for i, wh := range cur {
		f = f*phi + (wh - old[i]*drop)
		feats[i] = mix(f)
	}
	st.f = f
	skip := min(max(st.words-1-st.seen, 0), n)
	st.seen += n
	st.cnt.add(feats[skip:])
	copy(st.hs[:hist], st.hs[n:n+hist])
}

// addWordsVec is addWords with featVec, which computes the features
// directly as sums of the last `words` hashes (as f is, mod 2^64), eight
// at a time, and counts their bits. It reads the words-1 hashes before
// the first counted one, in st.hs (0 before the text), and up to seven
// past the n-th: a block ends at most block/2+1 words.
func (st *simState) addWordsVec(n int) {
	skip := min(max(st.words-1-st.seen, 0), n)
	st.seen += n
	if m := n - skip; m > 0 {
		groups := (m + 7) / 8
		if st.vgroups+groups > 255 {
			st.flushVec()
		}
		featVec(&st.hs[hist+skip], m, st.words, &st.vcnt)
		st.vgroups += groups
		st.cnt.n += m
	}
	copy(st.hs[:hist], st.hs[n:n+hist])
}

// flushVec adds featVec's byte counters to st.cnt's totals. Each
// counter's bytes are summed across the eight lanes two at a time, the
// even bytes and the odd ones in 16-bit fields (at most 8*255): a few
// dozen operations instead of 512 byte extractions, which matters for
// the many short texts that flush once.
func (st *simState) flushVec() {
	if st.vgroups == 0 {
		return // the counters are zero
	}
	const evens = 0x00ff00ff00ff00ff
	for x, lanes := range st.vcnt {
		var even, odd uint64
		for _, l := range lanes {
			even += l & evens
			odd += l >> 8 & evens
		}
		for q := range 4 {
			// Byte 2q of a lane counts bit 16q+x, byte 2q+1 bit 16q+8+x.
			st.cnt.total[16*q+x] += int(even >> (16 * q) & 0xffff)
			st.cnt.total[16*q+8+x] += int(odd >> (16 * q) & 0xffff)
		}
	}
	st.vcnt = [8][8]uint64{}
	st.vgroups = 0
}

// sum returns the SimHash of the words added.
func (st *simState) sum() uint64 {
	st.flushVec()
	if st.cnt.n == 0 && st.seen > 0 {
		// Fewer words than a feature (seen < words <= hist): one
		// feature of all of them, which are the last seen of hs[:hist].
		var g uint64
		for _, w := range st.hs[hist-st.seen : hist] {
			g = g*phi + w
		}
		st.cnt.add([]uint64{mix(g)})
	}
	return st.cnt.majority()
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

// intersectScalar counts the common values of two sorted, distinct
// slices, without vector instructions (see intersect).
//
// It is most of the cost of scoring a candidate pair, and samples are
// random hashes, so a merge's three-way branch is mispredicted at almost
// every step. Two branch-free merges run in one loop instead (a's halves
// against the matching parts of b) so that their dependency chains
// overlap: 3.5 times faster than the branching merge on samples of 300 to
// 600 values (BenchmarkIntersect).
func intersectScalar(a, b []uint32) int {
	if len(a) < 32 || len(b) < 32 {
		return intersectMerge(a, b)
	}
	h := len(a) / 2
	k := lowerBound(b, a[h])
	a1, b1, a2, b2 := a[:h], b[:k], a[h:], b[k:]
	var n1, i1, j1, n2, i2, j2 int
	for i1 < len(a1) && j1 < len(b1) && i2 < len(a2) && j2 < len(b2) {
		x1, y1 := a1[i1], b1[j1]
		x2, y2 := a2[i2], b2[j2]
		n1 += b2i(x1 == y1)
		i1 += b2i(x1 <= y1)
		j1 += b2i(y1 <= x1)
		n2 += b2i(x2 == y2)
		i2 += b2i(x2 <= y2)
		j2 += b2i(y2 <= x2)
	}
	return n1 + n2 + intersectMerge(a1[i1:], b1[j1:]) + intersectMerge(a2[i2:], b2[j2:])
}

// lowerBound returns the index of the first value of sorted b not below
// v. Samples are the top bits of hashes, spread evenly: its first guess
// is where v would be in evenly spread values, then it walks a few steps,
// and only then searches. A binary search's nine probes each read
// another cache line of b, fetched from memory when an analysis scores
// b against a text it has not met yet: 0.4 µs per pair.
func lowerBound(b []uint32, v uint32) int {
	k := int(uint64(v) * uint64(len(b)) >> 32)
	for range 8 {
		switch {
		case k > 0 && b[k-1] >= v:
			k--
		case k < len(b) && b[k] < v:
			k++
		default:
			return k
		}
	}
	if k > 0 && b[k-1] >= v {
		i, _ := slices.BinarySearch(b[:k], v)
		return i
	}
	i, _ := slices.BinarySearch(b[k:], v)
	return k + i
}

// intersectMerge is intersect as one branch-free merge.
func intersectMerge(a, b []uint32) int {
	var n, i, j int
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		n += b2i(x == y)
		i += b2i(x <= y)
		j += b2i(y <= x)
	}
	return n
}

// b2i is 1 for true: the compiler makes it a flag, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
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
