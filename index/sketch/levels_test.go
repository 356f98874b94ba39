package sketch

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// shingleSet is the set of a text's shingle hashes, for true resemblance.
func shingleSet(p Params, text string) map[uint64]bool {
	set := map[uint64]bool{}
	Shingles(p.Window, []byte(text), func(h uint64) { set[h] = true })
	return set
}

func jaccard(a, b map[uint64]bool) float64 {
	n := 0
	for h := range a {
		if b[h] {
			n++
		}
	}
	return float64(n) / float64(len(a)+len(b)-n)
}

// TestResemblanceBits checks the b-bit estimator on a pair of known
// resemblance: with 1,024 slots, every width's corrected estimate is
// within four standard errors of the truth, and unrelated texts, whose
// 8-bit slots agree by chance in 1/256 of them, are estimated near 0.
func TestResemblanceBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	w := words(r, 4000)
	a := strings.Join(w[:3000], " ")
	b := strings.Join(w[1000:], " ")
	other := strings.Join(words(r, 3000), " ")
	p := DefaultParams()
	p.MinHashK, p.Bands = 1024, 256
	truth := jaccard(shingleSet(p, a), shingleSet(p, b))
	for _, bits := range []int{32, 16, 8} {
		p.MinHashBits = bits
		var sa, sb, so Sketch
		Compute(p, []byte(a), &sa)
		Compute(p, []byte(b), &sb)
		Compute(p, []byte(other), &so)
		for _, v := range sa.MinHash {
			if bits < 32 && v >= 1<<bits {
				t.Fatalf("%d bits: slot %#x is wider", bits, v)
			}
		}
		c := math.Pow(2, -float64(bits))
		// The variance of the b-bit estimator (Li & König, eq. 11):
		// P(1-P) / (k (1-C)^2), P the chance two slots agree.
		pa := truth + c*(1-truth)
		se := math.Sqrt(pa*(1-pa)/float64(p.MinHashK)) / (1 - c)
		got := ResemblanceBits(sa.MinHash, sb.MinHash, bits)
		if math.Abs(got-truth) > 4*se {
			t.Errorf("%d bits: estimate %.3f, truth %.3f (standard error %.3f)", bits, got, truth, se)
		}
		if got := ResemblanceBits(sa.MinHash, so.MinHash, bits); got > 0.02 {
			t.Errorf("%d bits: unrelated texts estimated %.3f", bits, got)
		}
	}
}

func TestResemblanceBitsCorrects(t *testing.T) {
	a := make([]uint32, 256)
	b := make([]uint32, 256)
	for i := range b {
		b[i] = 1 // equal slots: 1/256
	}
	b[0] = 0
	if got := ResemblanceBits(a, b, 8); got != 0 {
		t.Errorf("chance agreement estimated %v, want 0", got)
	}
	if got := ResemblanceBits(a, a, 16); got != 1 {
		t.Errorf("identical estimated %v, want 1", got)
	}
	if got := ResemblanceBits(a, b, 32); got != 1.0/256 {
		t.Errorf("32 bits estimated %v, want the share of equal slots", got)
	}
}

// TestLevels checks hierarchical sampling: a short text keeps its base
// level, a long one a level with at least the floor of samples and at
// most MaxLevels above the base, every sample 0 mod 2^level, and the
// long text's samples are those of its base level that are 0 mod
// 2^level, so that an excerpt's samples filtered to that level are among
// them.
func TestLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	long := strings.Join(words(r, 40000), " ")
	excerpt := long[100000:110000]
	p := DefaultParams()
	p.SampleFloor = 256
	base := p.BaseLevel()
	var sl, se, full Sketch
	Compute(p, []byte(long), &sl)
	Compute(p, []byte(excerpt), &se)
	if se.Level != base+1 || sl.Level != base+MaxLevels {
		t.Fatalf("levels %d (excerpt, %d samples) and %d (long), want %d and %d", se.Level, len(se.Samples), sl.Level, base+1, base+MaxLevels)
	}
	if len(se.Samples) < p.SampleFloor {
		t.Errorf("excerpt kept %d samples, below the floor %d", len(se.Samples), p.SampleFloor)
	}
	for _, v := range sl.Samples {
		if v%(1<<sl.Level) != 0 {
			t.Fatalf("sample %#x is not 0 mod 2^%d", v, sl.Level)
		}
	}
	q := p
	q.SampleFloor = 1 << 16 // never thins: the base level
	Compute(q, []byte(long), &full)
	if full.Level != base {
		t.Fatalf("level %d with a floor never reached, want %d", full.Level, base)
	}
	if want := AtLevel(full.Samples, sl.Level, nil); !slices.Equal(sl.Samples, want) {
		t.Fatalf("long text's samples (%d) are not its base samples at level %d (%d)", len(sl.Samples), sl.Level, len(want))
	}
	ab, ba := ContainmentsAt(se.Samples, se.Level, sl.Samples, sl.Level)
	if ab < 0.99 || ba > 0.1 {
		t.Errorf("excerpt in long text: containments %.3f and %.3f, want 1 and about %.3f", ab, ba, float64(len(excerpt))/float64(len(long)))
	}
	if got := SampleResemblanceAt(sl.Samples, sl.Level, sl.Samples, sl.Level); got != 1 {
		t.Errorf("sample resemblance to itself %v", got)
	}
}

// TestLevelsEstimate checks the containment of an excerpt in a text,
// compared at the coarser level, against the truth over every shingle.
func TestLevelsEstimate(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	w := words(r, 20000)
	long := strings.Join(w, " ")
	edited := slices.Clone(w[5000:7000])
	for i := 0; i < 100; i++ {
		edited[r.IntN(len(edited))] = "changed"
	}
	excerpt := strings.Join(edited, " ")
	p := DefaultParams()
	p.SampleFloor = 256
	var sl, se Sketch
	Compute(p, []byte(long), &sl)
	Compute(p, []byte(excerpt), &se)
	sa, sb := shingleSet(p, excerpt), shingleSet(p, long)
	in := 0
	for h := range sa {
		if sb[h] {
			in++
		}
	}
	truth := float64(in) / float64(len(sa))
	got, _ := ContainmentsAt(se.Samples, se.Level, sl.Samples, sl.Level)
	n := float64(len(AtLevel(se.Samples, sl.Level, nil)))
	if se := math.Sqrt(truth * (1 - truth) / n); math.Abs(got-truth) > 4*se+0.01 {
		t.Errorf("containment %.3f from %.0f samples, truth %.3f", got, n, truth)
	}
}
