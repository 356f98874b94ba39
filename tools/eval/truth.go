package eval

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// ShingleWords is the number of words in a true-similarity shingle: "true"
// similarity is computed over word 5-grams (words as TruthWords defines
// them).
const ShingleWords = 5

// Class thresholds on true similarity, from the goal.
const (
	// NearResemblance is the true resemblance from which a pair is a
	// near-duplicate.
	NearResemblance = 0.8
	// ContainedShare is the true containment (of either document in the
	// other) from which a pair is a containment.
	ContainedShare = 0.9
	// UnrelatedBelow is the true similarity under which (resemblance and
	// both containments) a reported pair is a false alarm.
	UnrelatedBelow = 0.3
)

// MaxTruthDocs bounds the documents of one all-pairs truth table, whose
// pair counts take 4 bytes per pair (200 MB at the bound).
const MaxTruthDocs = 10000

// ErrTooManyDocs is returned when a corpus exceeds MaxTruthDocs.
var ErrTooManyDocs = errors.New("too many documents for an all-pairs truth table")

// WordShingles returns the sorted, distinct hashes of the k-word shingles of
// a text, whose words are those of TruthWords: maximal runs of letters and
// digits after case folding, each letter of a script written without
// spaces (Han, kana…) a word of its own, anything else a separator. A text
// of fewer than k words is one shingle of all its words; a text without
// words has none.
func WordShingles(text []byte, k int) []uint64 {
	if k < 1 {
		return nil
	}
	var buf []byte
	var ends []int // word w is buf[ends[w-1]:ends[w]]
	TruthWords(text, func(w []byte) {
		buf = append(buf, w...)
		ends = append(ends, len(buf))
	})
	if len(ends) == 0 {
		return nil
	}
	d := xxhash.New()
	hash := func(from, to int) uint64 {
		d.Reset()
		for w := from; w < to; w++ {
			if w > from {
				d.Write([]byte{' '})
			}
			lo := 0
			if w > 0 {
				lo = ends[w-1]
			}
			d.Write(buf[lo:ends[w]])
		}
		return d.Sum64()
	}
	if len(ends) < k {
		return []uint64{hash(0, len(ends))}
	}
	out := make([]uint64, 0, len(ends)-k+1)
	for i := 0; i+k <= len(ends); i++ {
		out = append(out, hash(i, i+k))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// WordsHash returns a hash of the word sequence of text (see TruthWords):
// two texts are identical for the truth when their hashes are equal.
func WordsHash(text []byte) [32]byte {
	h := sha256.New()
	TruthWords(text, func(w []byte) {
		h.Write(w)
		h.Write([]byte{' '})
	})
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Similarity is the true similarity of a pair of texts A and B.
type Similarity struct {
	// Resemblance is |A∩B| / |A∪B| over shingle sets.
	Resemblance float64
	// ContainmentAB is |A∩B| / |A|: the share of A found in B.
	ContainmentAB float64
	// ContainmentBA is |A∩B| / |B|.
	ContainmentBA float64
	// Exact is true when the texts have the same word sequence.
	Exact bool
}

// similarity returns the similarity of sets of sizes na and nb sharing
// common shingles.
func similarity(na, nb, common int) Similarity {
	var s Similarity
	if u := na + nb - common; u > 0 {
		s.Resemblance = float64(common) / float64(u)
	}
	if na > 0 {
		s.ContainmentAB = float64(common) / float64(na)
	}
	if nb > 0 {
		s.ContainmentBA = float64(common) / float64(nb)
	}
	return s
}

// intersectSorted counts the common values of two sorted, distinct
// slices. The evaluation keeps its own plain merge, independent of the
// optimised one it evaluates.
func intersectSorted[T cmp.Ordered](a, b []T) int {
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

// Compare returns the true similarity of two texts, from their word 5-gram
// shingles; texts with the same word sequence are exact copies.
func Compare(a, b []byte) Similarity {
	sa, sb := WordShingles(a, ShingleWords), WordShingles(b, ShingleWords)
	s := similarity(len(sa), len(sb), intersectSorted(sa, sb))
	if WordsHash(a) == WordsHash(b) {
		s = Similarity{Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1, Exact: true}
	}
	return s
}

// Class is the set of ground-truth classes a pair belongs to. A pair may be
// both Near and Contained; Exact pairs are in no other class.
type Class uint8

// Classes of a pair by true similarity.
const (
	// Exact pairs have the same word sequence.
	Exact Class = 1 << iota
	// Near pairs have true resemblance >= NearResemblance.
	Near
	// Contained pairs have one text at least ContainedShare inside the other.
	Contained
	// Unrelated pairs have resemblance and both containments under
	// UnrelatedBelow: reporting one is a false alarm.
	Unrelated
)

// Classify returns the classes of a pair with similarity s.
func Classify(s Similarity) Class {
	if s.Exact {
		return Exact
	}
	var c Class
	if s.Resemblance >= NearResemblance {
		c |= Near
	}
	if max(s.ContainmentAB, s.ContainmentBA) >= ContainedShare {
		c |= Contained
	}
	if s.Resemblance < UnrelatedBelow && s.ContainmentAB < UnrelatedBelow && s.ContainmentBA < UnrelatedBelow {
		c |= Unrelated
	}
	return c
}

// Truth is the exact all-pairs similarity of a corpus.
type Truth struct {
	sizes  []int
	groups []int    // identical-text group of each document
	common []uint32 // shared shingles of pair (i, j), i < j, upper triangle
}

// NewTruth computes the shingles shared by every pair of documents, given
// each document's shingle set (sorted, distinct) and a hash of its
// word sequence (WordsHash: equal hashes mean identical texts). It sorts every
// (shingle, document) posting and counts, for each shingle, every pair of
// documents holding it: the work is the sum of squared document
// frequencies, small for real text.
func NewTruth(sets [][]uint64, textHashes [][32]byte) (*Truth, error) {
	n := len(sets)
	if n != len(textHashes) {
		return nil, fmt.Errorf("truth: %d shingle sets but %d text hashes", n, len(textHashes))
	}
	if n > MaxTruthDocs {
		return nil, fmt.Errorf("truth over %d documents: %w (limit %d)", n, ErrTooManyDocs, MaxTruthDocs)
	}
	t := &Truth{sizes: make([]int, n), groups: make([]int, n), common: make([]uint32, n*(n-1)/2)}
	total := 0
	for i, s := range sets {
		t.sizes[i] = len(s)
		total += len(s)
	}
	type posting struct {
		h uint64
		d int32
	}
	ps := make([]posting, 0, total)
	for d, s := range sets {
		for _, h := range s {
			ps = append(ps, posting{h, int32(d)})
		}
	}
	slices.SortFunc(ps, func(a, b posting) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.d, b.d)) })
	for lo := 0; lo < len(ps); {
		hi := lo + 1
		for hi < len(ps) && ps[hi].h == ps[lo].h {
			hi++
		}
		for x := lo; x < hi; x++ {
			i := int(ps[x].d)
			base := t.row(i)
			for y := x + 1; y < hi; y++ {
				t.common[base+int(ps[y].d)]++
			}
		}
		lo = hi
	}
	byHash := make(map[[32]byte]int, n)
	for i, h := range textHashes {
		g, ok := byHash[h]
		if !ok {
			g = i
			byHash[h] = i
		}
		t.groups[i] = g
	}
	return t, nil
}

// row returns the offset in common such that common[row(i)+j] is pair
// (i, j) for j > i.
func (t *Truth) row(i int) int {
	n := len(t.sizes)
	return i*n - i*(i+1)/2 - i - 1
}

// Len is the number of documents.
func (t *Truth) Len() int { return len(t.sizes) }

// Get returns the true similarity of documents i and j (i != j), with
// containments oriented from i to j.
func (t *Truth) Get(i, j int) Similarity {
	if t.groups[i] == t.groups[j] {
		return Similarity{Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1, Exact: true}
	}
	a, b := i, j
	if a > b {
		a, b = b, a
	}
	c := int(t.common[t.row(a)+b])
	return similarity(t.sizes[i], t.sizes[j], c)
}
