package eval

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/simdex/simdex/index/chunk"
	"github.com/simdex/simdex/index/sketch"
)

// Estimate is an algorithm's estimate of the similarity of a pair A, B.
type Estimate struct {
	// Resemblance estimates |A∩B| / |A∪B| over the algorithm's shingles.
	Resemblance float64
	// ContainmentAB estimates the share of A found in B.
	ContainmentAB float64
	// ContainmentBA estimates the share of B found in A.
	ContainmentBA float64
	// Containment is false when the algorithm cannot estimate containment
	// at all (SimHash); the containment fields are then zero.
	Containment bool
	// Hamming is the SimHash distance in bits, or -1 without a SimHash.
	Hamming int
}

// Signature is what an algorithm keeps of one text.
type Signature interface {
	// Entries is the number of values kept: the signature's size.
	Entries() int
}

// Algorithm is one similarity algorithm: it signs texts and compares
// signatures. Implementations are pure and safe for concurrent use.
type Algorithm interface {
	// Name names the algorithm and its parameters ("Mod-100 w20").
	Name() string
	// Sign returns the signature of a normalised text.
	Sign(text []byte) Signature
	// Compare estimates the similarity of the texts of a and b, which must
	// come from this algorithm's Sign; other signatures compare as zero.
	Compare(a, b Signature) Estimate
}

// Kind names an algorithm family.
type Kind string

// The algorithm families.
const (
	// ModN keeps the shingle fingerprints that are 0 mod n.
	ModN Kind = "mod"
	// MinN keeps the n numerically smallest fingerprints (bottom-n).
	MinN Kind = "min"
	// SketchN keeps the minimum under each of n hash functions (MinHash).
	SketchN Kind = "sketch"
	// WinnowN keeps the minimum of every window of n consecutive
	// fingerprints (winnowing).
	WinnowN Kind = "winnow"
	// BSWN cuts chunks where a fingerprint is 0 mod n (Basic Sliding
	// Window) and keeps the smallest fingerprint of each chunk.
	BSWN Kind = "bsw"
	// Chunks keeps whole content-defined chunk hashes and lengths (KDD'05),
	// with chunks of n bytes on average.
	Chunks Kind = "chunks"
	// SimHash is Charikar's 64-bit SimHash compared by Hamming distance.
	SimHash Kind = "simhash"
	// Engine is simdex's own fingerprint and estimators, with sketch
	// window w and Mod-n sampling n, other parameters at their defaults.
	Engine Kind = "engine"
)

// Spec chooses an algorithm and its parameters.
type Spec struct {
	Kind Kind
	// W is the shingle window in bytes (unused by Chunks).
	W int
	// N is the sampling parameter (unused by SimHash).
	N int
}

// ErrInvalidSpec is wrapped by New for unusable specifications.
var ErrInvalidSpec = errors.New("invalid algorithm")

// Name names the algorithm of the specification (Algorithm.Name).
func (s Spec) Name() string { return s.String() }

// String names the specification, as Algorithm.Name does.
func (s Spec) String() string {
	switch s.Kind {
	case ModN:
		return fmt.Sprintf("Mod-%d w%d", s.N, s.W)
	case MinN:
		return fmt.Sprintf("Min-%d w%d", s.N, s.W)
	case SketchN:
		return fmt.Sprintf("Sketch-%d w%d", s.N, s.W)
	case WinnowN:
		return fmt.Sprintf("Winnow-%d w%d", s.N, s.W)
	case BSWN:
		return fmt.Sprintf("BSW-%d w%d", s.N, s.W)
	case Chunks:
		return fmt.Sprintf("Chunks-%d", s.N)
	case SimHash:
		return fmt.Sprintf("SimHash w%d", s.W)
	case Engine:
		return fmt.Sprintf("simdex w%d n%d", s.W, s.N)
	}
	return fmt.Sprintf("%s-%d w%d", s.Kind, s.N, s.W)
}

// New returns the algorithm s specifies.
func New(s Spec) (Algorithm, error) {
	if s.Kind != Chunks && (s.W < 1 || s.W > 1024) {
		return nil, fmt.Errorf("%w: %s: window %d is not in [1, 1024]", ErrInvalidSpec, s, s.W)
	}
	if s.Kind != SimHash && (s.N < 1 || s.N > 1<<20) {
		return nil, fmt.Errorf("%w: %s: n %d is not in [1, 2^20]", ErrInvalidSpec, s, s.N)
	}
	switch s.Kind {
	case ModN:
		return modN{s}, nil
	case MinN:
		return minN{s}, nil
	case SketchN:
		if s.N > 4096 {
			return nil, fmt.Errorf("%w: %s: n %d is over 4096", ErrInvalidSpec, s, s.N)
		}
		seeds := make([]uint64, s.N)
		x := uint64(0x243F6A8885A308D3)
		for i := range seeds {
			x += 0x9E3779B97F4A7C15
			seeds[i] = mix64(x)
		}
		return sketchN{s, seeds}, nil
	case WinnowN:
		return winnowN{s}, nil
	case BSWN:
		return bswN{s}, nil
	case Chunks:
		p := chunk.Params{Min: s.N / 4, Avg: s.N, Max: 8 * s.N}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidSpec, s, err)
		}
		return chunks{s, p}, nil
	case SimHash:
		return simHash{s}, nil
	case Engine:
		p := sketch.DefaultParams()
		p.Window, p.SampleN = s.W, s.N
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidSpec, s, err)
		}
		return NewEngine(p, chunk.DefaultParams()), nil
	}
	return nil, fmt.Errorf("%w: unknown kind %q", ErrInvalidSpec, s.Kind)
}

// mix64 is the murmur3 64-bit finaliser: it turns a fingerprint into
// independent-looking bits for ranking and for SimHash.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// fingerprints returns the w-byte shingle fingerprints of text, in order.
func fingerprints(w int, text []byte) []uint64 {
	out := make([]uint64, 0, max(0, len(text)-w+1))
	sketch.Shingles(w, text, func(h uint64) { out = append(out, mix64(h)) })
	return out
}

// distinct sorts and de-duplicates hs in place.
func distinct(hs []uint64) []uint64 {
	slices.Sort(hs)
	return slices.Compact(hs)
}

// setSig is a sorted set of fingerprints.
type setSig []uint64

func (s setSig) Entries() int { return len(s) }

// compareSets estimates resemblance and containment from sampled sets.
func compareSets(a, b Signature) Estimate {
	sa, ok1 := a.(setSig)
	sb, ok2 := b.(setSig)
	e := Estimate{Containment: true, Hamming: -1}
	if !ok1 || !ok2 {
		return e
	}
	s := similarity(len(sa), len(sb), intersectSorted(sa, sb))
	e.Resemblance, e.ContainmentAB, e.ContainmentBA = s.Resemblance, s.ContainmentAB, s.ContainmentBA
	return e
}

type modN struct{ Spec }

func (m modN) Sign(text []byte) Signature {
	n := uint64(m.Spec.N)
	var out setSig
	sketch.Shingles(m.Spec.W, text, func(h uint64) {
		if h = mix64(h); h%n == 0 {
			out = append(out, h)
		}
	})
	return setSig(distinct(out))
}

func (m modN) Compare(a, b Signature) Estimate { return compareSets(a, b) }

// sizedSig is a fixed-size signature with an estimate of the number of
// distinct shingles of its text, from which containment is estimated.
type sizedSig struct {
	vals     []uint64
	shingles float64
}

func (s sizedSig) Entries() int { return len(s.vals) }

// containmentFrom estimates containments from a resemblance estimate r and
// the shingle counts: |A∩B| = r(|A|+|B|)/(1+r).
func containmentFrom(e *Estimate, na, nb float64) {
	e.Containment = true
	if na <= 0 || nb <= 0 {
		return
	}
	common := e.Resemblance * (na + nb) / (1 + e.Resemblance)
	e.ContainmentAB = min(1, common/na)
	e.ContainmentBA = min(1, common/nb)
}

// unit maps a 64-bit hash to (0, 1].
func unit(h uint64) float64 { return (float64(h) + 1) / (1 << 64) }

type minN struct{ Spec }

// Sign keeps the n smallest distinct fingerprints in one pass (a bounded
// max-heap), and estimates the number of distinct shingles from the n-th
// smallest, (n-1)/u_n (the KMV estimator), or counts them when fewer.
func (m minN) Sign(text []byte) Signature {
	n := m.Spec.N
	heap := make([]uint64, 0, n) // max-heap
	in := make(map[uint64]struct{}, n)
	sketch.Shingles(m.Spec.W, text, func(h uint64) {
		h = mix64(h)
		if len(heap) == n && h >= heap[0] {
			return
		}
		if _, dup := in[h]; dup {
			return
		}
		in[h] = struct{}{}
		if len(heap) < n {
			heap = append(heap, h)
			for i := len(heap) - 1; i > 0 && heap[(i-1)/2] < heap[i]; i = (i - 1) / 2 {
				heap[i], heap[(i-1)/2] = heap[(i-1)/2], heap[i]
			}
			return
		}
		delete(in, heap[0])
		heap[0] = h
		for i := 0; ; {
			l, r, big := 2*i+1, 2*i+2, i
			if l < n && heap[l] > heap[big] {
				big = l
			}
			if r < n && heap[r] > heap[big] {
				big = r
			}
			if big == i {
				break
			}
			heap[i], heap[big] = heap[big], heap[i]
			i = big
		}
	})
	slices.Sort(heap)
	card := float64(len(heap))
	if len(heap) == n && n > 1 {
		card = float64(n-1) / unit(heap[n-1])
	}
	return sizedSig{vals: heap, shingles: card}
}

// Compare estimates resemblance as Broder does for bottom-n sketches: the
// share of the n smallest fingerprints of A∪B found in both.
func (m minN) Compare(a, b Signature) Estimate {
	sa, ok1 := a.(sizedSig)
	sb, ok2 := b.(sizedSig)
	e := Estimate{Hamming: -1}
	if !ok1 || !ok2 {
		return e
	}
	both, seen := 0, 0
	for i, j := 0, 0; seen < m.Spec.N && (i < len(sa.vals) || j < len(sb.vals)); seen++ {
		switch {
		case j == len(sb.vals) || (i < len(sa.vals) && sa.vals[i] < sb.vals[j]):
			i++
		case i == len(sa.vals) || sb.vals[j] < sa.vals[i]:
			j++
		default:
			both++
			i++
			j++
		}
	}
	if seen > 0 {
		e.Resemblance = float64(both) / float64(seen)
	}
	containmentFrom(&e, sa.shingles, sb.shingles)
	return e
}

type sketchN struct {
	Spec
	seeds []uint64
}

// Sign keeps the minimum of every shingle under each of n hash functions:
// n hashes per distinct shingle, the cost the seed study measured. The
// number of distinct shingles is estimated from the minima.
func (m sketchN) Sign(text []byte) Signature {
	all := distinct(fingerprints(m.Spec.W, text))
	mins := make([]uint64, len(m.seeds))
	for i := range mins {
		mins[i] = math.MaxUint64
	}
	for _, h := range all {
		for i, seed := range m.seeds {
			if v := mix64(h ^ seed); v < mins[i] {
				mins[i] = v
			}
		}
	}
	if len(all) == 0 {
		return sizedSig{}
	}
	// Each minimum is the least of |A| uniform values: Σu ≈ n/(|A|+1).
	sum := 0.0
	for _, v := range mins {
		sum += unit(v)
	}
	return sizedSig{vals: mins, shingles: max(1, float64(len(mins))/sum-1)}
}

func (m sketchN) Compare(a, b Signature) Estimate {
	sa, ok1 := a.(sizedSig)
	sb, ok2 := b.(sizedSig)
	e := Estimate{Hamming: -1}
	if !ok1 || !ok2 || len(sa.vals) == 0 || len(sa.vals) != len(sb.vals) {
		e.Containment = true
		return e
	}
	eq := 0
	for i := range sa.vals {
		if sa.vals[i] == sb.vals[i] {
			eq++
		}
	}
	e.Resemblance = float64(eq) / float64(len(sa.vals))
	containmentFrom(&e, sa.shingles, sb.shingles)
	return e
}

type winnowN struct{ Spec }

// Sign keeps the minimum of every window of n consecutive fingerprints
// (the rightmost one on ties), recording each selected position once, with
// a monotonic queue in a ring buffer.
func (m winnowN) Sign(text []byte) Signature {
	n := m.Spec.N
	vals := make([]uint64, n) // ring of candidate minima, increasing
	pos := make([]int, n)     // their positions
	at := func(k int) int {   // ring index of queue element k
		if k >= n {
			return k - n
		}
		return k
	}
	head, size, i, last := 0, 0, 0, -1
	var out setSig
	sketch.Shingles(m.Spec.W, text, func(h uint64) {
		h = mix64(h)
		for size > 0 && vals[at(head+size-1)] >= h {
			size--
		}
		if size > 0 && pos[head] <= i-n {
			head, size = at(head+1), size-1
		}
		vals[at(head+size)], pos[at(head+size)] = h, i
		size++
		if i >= n-1 && pos[head] != last {
			out = append(out, vals[head])
			last = pos[head]
		}
		i++
	})
	if i > 0 && i < n {
		out = append(out, vals[head]) // the text is shorter than a window
	}
	return setSig(distinct(out))
}

func (m winnowN) Compare(a, b Signature) Estimate { return compareSets(a, b) }

type bswN struct{ Spec }

// Sign cuts a chunk after every fingerprint that is 0 mod n and keeps the
// smallest fingerprint of each chunk.
func (m bswN) Sign(text []byte) Signature {
	n := uint64(m.Spec.N)
	var out setSig
	cur, open := uint64(math.MaxUint64), false
	sketch.Shingles(m.Spec.W, text, func(h uint64) {
		h = mix64(h)
		// The boundary test uses other bits than the minimum, which would
		// otherwise favour boundary fingerprints.
		cur, open = min(cur, h), true
		if bits.RotateLeft64(h, 32)%n == 0 {
			out = append(out, cur)
			cur, open = math.MaxUint64, false
		}
	})
	if open {
		out = append(out, cur)
	}
	return setSig(distinct(out))
}

func (m bswN) Compare(a, b Signature) Estimate { return compareSets(a, b) }

// chunkSig is a document's chunks sorted by hash, and its length.
type chunkSig struct {
	chunks []chunk.Chunk
	size   int
}

func (s chunkSig) Entries() int { return len(s.chunks) }

func sortChunks(cs []chunk.Chunk) []chunk.Chunk {
	slices.SortFunc(cs, func(a, b chunk.Chunk) int {
		return cmp.Or(cmp.Compare(a.Hash, b.Hash), int(a.Len)-int(b.Len))
	})
	return cs
}

// bytesInCommon sums the lengths of the chunks two sorted chunk lists
// share, each occurrence matched once (KDD'05's lower bound).
func bytesInCommon(a, b []chunk.Chunk) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].Hash < b[j].Hash:
			i++
		case a[i].Hash > b[j].Hash:
			j++
		default:
			n += int(a[i].Len)
			i++
			j++
		}
	}
	return n
}

type chunks struct {
	Spec
	p chunk.Params
}

func (m chunks) Sign(text []byte) Signature {
	return chunkSig{chunks: sortChunks(chunk.Append(m.p, nil, text)), size: len(text)}
}

// Compare uses bytes in common as the measure of shared text: containment
// is its share of each text, resemblance its share of their union.
func (m chunks) Compare(a, b Signature) Estimate {
	sa, ok1 := a.(chunkSig)
	sb, ok2 := b.(chunkSig)
	e := Estimate{Containment: true, Hamming: -1}
	if !ok1 || !ok2 {
		return e
	}
	s := similarity(sa.size, sb.size, bytesInCommon(sa.chunks, sb.chunks))
	e.Resemblance, e.ContainmentAB, e.ContainmentBA = s.Resemblance, s.ContainmentAB, s.ContainmentBA
	return e
}

type simHashSig uint64

func (simHashSig) Entries() int { return 1 }

type simHash struct{ Spec }

// Sign is Charikar's SimHash over every w-byte shingle: each shingle adds
// +1 or -1 to 64 counters by the bits of its hash; the signs are the bits.
func (m simHash) Sign(text []byte) Signature {
	var cnt [64]int32
	sketch.Shingles(m.Spec.W, text, func(h uint64) {
		h = mix64(h)
		for b := range cnt {
			cnt[b] += int32(h>>b&1)*2 - 1
		}
	})
	var out uint64
	for b, c := range cnt {
		if c > 0 {
			out |= 1 << b
		}
	}
	return simHashSig(out)
}

// Compare turns the Hamming distance d into an angle θ = πd/64, whose
// cosine c estimates |A∩B|/√(|A||B|); for texts of similar size that is
// 2J/(1+J), so resemblance J = c/(2-c). SimHash cannot estimate
// containment.
func (m simHash) Compare(a, b Signature) Estimate {
	sa, ok1 := a.(simHashSig)
	sb, ok2 := b.(simHashSig)
	e := Estimate{Hamming: -1}
	if !ok1 || !ok2 {
		return e
	}
	e.Hamming = bits.OnesCount64(uint64(sa ^ sb))
	e.Resemblance = simHashResemblance(e.Hamming)
	return e
}

// simHashResemblance maps a SimHash distance to a resemblance estimate.
func simHashResemblance(d int) float64 {
	c := max(0, math.Cos(math.Pi*float64(d)/64))
	return c / (2 - c)
}

// engine is simdex's fingerprint and scoring, as index.Index computes them
// for one pair, without a store: MinHash resemblance, containment from
// Mod-n samples or shared whole chunks, whichever is larger.
type engine struct {
	p  sketch.Params
	cp chunk.Params
}

// NewEngine returns the engine's estimators with sketch parameters p and
// chunk parameters cp, which must be valid. It scores pairs as
// index.Index does when no template is marked and no chunk is ubiquitous.
func NewEngine(p sketch.Params, cp chunk.Params) Algorithm {
	return engine{p, cp}
}

type engineSig struct {
	text    [32]byte
	size    int
	chunks  []chunk.Chunk
	samples []uint32
	minHash []uint32
	simHash uint64
}

func (s *engineSig) Entries() int { return len(s.samples) + len(s.minHash) + len(s.chunks) + 1 }

func (m engine) Name() string {
	return Spec{Kind: Engine, W: m.p.Window, N: m.p.SampleN}.String()
}

// sketches are reused across signatures: a Sketch keeps tens of
// kilobytes of working state between Computes.
var sketches = sync.Pool{New: func() any { return new(sketch.Sketch) }}

func (m engine) Sign(text []byte) Signature {
	sk := sketches.Get().(*sketch.Sketch)
	defer sketches.Put(sk)
	sketch.Compute(m.p, text, sk)
	return &engineSig{
		text:    sha256.Sum256(text),
		size:    len(text),
		chunks:  sortChunks(chunk.Append(m.cp, nil, text)),
		samples: slices.Clone(sk.Samples),
		minHash: slices.Clone(sk.MinHash),
		simHash: sk.SimHash,
	}
}

func (m engine) Compare(a, b Signature) Estimate {
	sa, ok1 := a.(*engineSig)
	sb, ok2 := b.(*engineSig)
	e := Estimate{Containment: true, Hamming: -1}
	if !ok1 || !ok2 {
		return e
	}
	e.Hamming = sketch.Hamming(sa.simHash, sb.simHash)
	if sa.text == sb.text {
		e.Resemblance, e.ContainmentAB, e.ContainmentBA = 1, 1, 1
		return e
	}
	e.Resemblance = sketch.ResemblanceBits(sa.minHash, sb.minHash, m.p.FullBits())
	common := float64(bytesInCommon(sa.chunks, sb.chunks))
	e.ContainmentAB, e.ContainmentBA = sketch.Containments(sa.samples, sb.samples)
	if sa.size > 0 {
		e.ContainmentAB = max(e.ContainmentAB, min(1, common/float64(sa.size)))
	}
	if sb.size > 0 {
		e.ContainmentBA = max(e.ContainmentBA, min(1, common/float64(sb.size)))
	}
	return e
}
