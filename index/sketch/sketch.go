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
}

const (
	rollMul = 0x9E3779B97F4A7C15 // odd, so multiplication mod 2^64 is invertible
	empty   = ^uint64(0)
)

// mix is the murmur3 64-bit finaliser: it spreads the bits of a rolling
// hash whose low bits are weak.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Shingles calls fn with the mixed 64-bit hash of every Window-byte
// shingle of text, in order. A text shorter than the window is one
// shingle. It is exported for the evaluation's peer algorithms.
func Shingles(window int, text []byte, fn func(h uint64)) {
	if len(text) == 0 {
		return
	}
	if len(text) <= window {
		var h uint64
		for _, c := range text {
			h = h*rollMul + uint64(c) + 1
		}
		fn(mix(h))
		return
	}
	// pow = rollMul^(window-1), to remove the outgoing byte.
	pow := uint64(1)
	for i := 1; i < window; i++ {
		pow *= rollMul
	}
	var h uint64
	for i := 0; i < window; i++ {
		h = h*rollMul + uint64(text[i]) + 1
	}
	fn(mix(h))
	for i := window; i < len(text); i++ {
		h -= (uint64(text[i-window]) + 1) * pow
		h = h*rollMul + uint64(text[i]) + 1
		fn(mix(h))
	}
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
	slots := make([]uint64, k)
	for i := range slots {
		slots[i] = empty
	}
	Shingles(p.Window, text, func(h uint64) {
		// One-permutation hashing: the low bits choose the slot, the high
		// bits compete for the minimum.
		if i := (h & 0xffffffff) % k; h>>32 < slots[i] {
			slots[i] = h >> 32
		}
		if g := mix(h ^ 0x5bd1e995); g%n == 0 {
			s.Samples = append(s.Samples, uint32(g>>32))
		}
	})
	slices.Sort(s.Samples)
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

// simHash is Charikar's SimHash over features of `words` consecutive
// words, each weighted by its number of occurrences.
func simHash(words int, text []byte) uint64 {
	var v [64]int32
	// Ring of word hashes for the current feature.
	ring := make([]uint64, words)
	seen := 0
	start := -1
	add := func(f uint64) {
		for b := 0; b < 64; b++ {
			v[b] += int32(f>>b&1)*2 - 1
		}
	}
	features := 0
	flush := func(end int) {
		if start < 0 {
			return
		}
		var h uint64 = 14695981039346656037
		for _, c := range text[start:end] {
			h = (h ^ uint64(c)) * 1099511628211
		}
		ring[seen%words] = h
		seen++
		start = -1
		if seen >= words {
			var f uint64
			for j := 0; j < words; j++ {
				f = f*0x9E3779B97F4A7C15 + ring[(seen-words+j)%words]
			}
			add(mix(f))
			features++
		}
	}
	for i, c := range text {
		if c == ' ' || c == '\n' {
			flush(i)
		} else if start < 0 {
			start = i
		}
	}
	flush(len(text))
	if features == 0 && seen > 0 {
		// Fewer words than a feature: one feature of all of them.
		var f uint64
		for j := 0; j < seen; j++ {
			f = f*0x9E3779B97F4A7C15 + ring[j]
		}
		add(mix(f))
	}
	var out uint64
	for b := 0; b < 64; b++ {
		if v[b] > 0 {
			out |= 1 << b
		}
	}
	return out
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
