package eval

import (
	"cmp"
	"slices"

	"github.com/simdex/simdex/index"
)

// SampleCandidates emulates a candidate lookup the index does not have
// (as of this evaluation): postings of the Mod-n samples that the engine
// already stores for containment. For each document A it counts, through
// the postings of samples held by at most maxDF documents, the samples
// every other document B shares with it, and makes (A, B) a candidate
// when they share at least minShare of the samples of the smaller of the
// two. It then scores every candidate with the engine's estimators
// (NewEngine with opts' sketch and chunk parameters) and returns the
// scored ordered pairs in both directions.
func SampleCandidates(texts [][]byte, opts index.Options, maxDF int, minShare float64) []Scored[index.Scores] {
	eng := NewEngine(opts.Sketch, opts.Chunk).(engine)
	sigs := make([]*engineSig, len(texts))
	type posting struct {
		s uint32
		d int32
	}
	var ps []posting
	for i, t := range texts {
		sigs[i] = eng.Sign(t).(*engineSig)
		for _, s := range sigs[i].samples {
			ps = append(ps, posting{s, int32(i)})
		}
	}
	slices.SortFunc(ps, func(a, b posting) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.d, b.d)) })
	shared := map[Pair]int{}
	for lo := 0; lo < len(ps); {
		hi := lo + 1
		for hi < len(ps) && ps[hi].s == ps[lo].s {
			hi++
		}
		if hi-lo <= maxDF {
			for x := lo; x < hi; x++ {
				for y := x + 1; y < hi; y++ {
					shared[Pair{ps[x].d, ps[y].d}]++
				}
			}
		}
		lo = hi
	}
	var out []Scored[index.Scores]
	for p, n := range shared {
		a, b := sigs[p.A], sigs[p.B]
		small := min(len(a.samples), len(b.samples))
		if float64(n) < minShare*float64(small) {
			continue
		}
		out = append(out,
			Scored[index.Scores]{p, engineScores(eng, a, b)},
			Scored[index.Scores]{Pair{p.B, p.A}, engineScores(eng, b, a)})
	}
	return out
}

// engineScores converts the engine estimator's output to index.Scores.
func engineScores(eng engine, a, b *engineSig) index.Scores {
	e := eng.Compare(a, b)
	return index.Scores{
		Resemblance:   e.Resemblance,
		ContainmentAB: e.ContainmentAB,
		ContainmentBA: e.ContainmentBA,
		BytesInCommon: int64(bytesInCommon(a.chunks, b.chunks)),
		Hamming:       e.Hamming,
		Exact:         a.text == b.text,
	}
}

// UnionScored merges two lists of scored pairs, keeping the first score of
// a pair present in both.
func UnionScored(a, b []Scored[index.Scores]) []Scored[index.Scores] {
	seen := make(map[Pair]bool, len(a))
	out := slices.Clone(a)
	for _, s := range a {
		seen[s.Pair] = true
	}
	for _, s := range b {
		if !seen[s.Pair] {
			seen[s.Pair] = true
			out = append(out, s)
		}
	}
	return out
}
