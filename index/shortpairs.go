package index

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/simdex/simdex/index/normalise"
)

// rescoreShort scores again, exactly, the pairs of an in which both texts
// have fewer than MaxMinWords words, from the texts kept for reviewers (see
// Options.KeepText), and drops those that no longer pass th. A short text
// has only a handful of samples, so its estimated containment can be 1
// from one shared line: 49 "Looks good, Reviewed-by: …" replies to
// different patches were all "contained" in one another. Pairs whose
// texts are not kept are left as estimated, and so are those of a short
// text and a long one: the long text's shingle set would have to be built
// for each of them (a 50,000-file scan spent 80 s and gigabytes of maps
// there), and a long text's many samples keep its side of the estimate
// honest.
func (ix *Index) rescoreShort(ctx context.Context, an *Analysis, counts map[ContentID]int, th Thresholds) error {
	if len(counts) == 0 {
		return nil
	}
	shingles := make(map[ContentID]map[uint64]bool)
	seed := maphash.MakeSeed()
	load := func(c ContentID) (map[uint64]bool, error) {
		if s, ok := shingles[c]; ok {
			return s, nil
		}
		text, err := ix.store.Text(ctx, c)
		if errors.Is(err, ErrNoText) || errors.Is(err, ErrNotFound) {
			shingles[c] = nil
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("text of content %d: %w", c, err)
		}
		s := ix.shingleSet(seed, text)
		shingles[c] = s
		return s, nil
	}
	kept := an.Pairs[:0]
	for _, p := range an.Pairs {
		if !shortOf(counts, p.A, MaxMinWords) || !shortOf(counts, p.B, MaxMinWords) {
			kept = append(kept, p)
			continue
		}
		a, err := load(p.A)
		if err != nil {
			return err
		}
		b, err := load(p.B)
		if err != nil {
			return err
		}
		if a != nil && b != nil {
			p.Resemblance, p.ContainmentAB, p.ContainmentBA = exactScores(a, b)
		}
		if p.Reported(th) {
			kept = append(kept, p)
		}
	}
	an.Pairs = kept
	return nil
}

// shingleSet returns the hashes, under seed, of every shingle
// (Sketch.Window bytes) of text's normal form; a text shorter than a
// shingle is one.
func (ix *Index) shingleSet(seed maphash.Seed, text []byte) map[uint64]bool {
	var nz normalise.Normaliser
	norm, err := nz.Append(nil, text)
	if err != nil || len(norm) == 0 {
		return map[uint64]bool{}
	}
	w := ix.opts.Sketch.Window
	out := make(map[uint64]bool, max(len(norm)-w+1, 1))
	for i := 0; i == 0 || i+w <= len(norm); i++ {
		out[maphash.Bytes(seed, norm[i:min(i+w, len(norm))])] = true
	}
	return out
}

// exactScores returns the resemblance and the containments of a in b and
// of b in a, over shingle sets.
func exactScores(a, b map[uint64]bool) (res, ab, ba float64) {
	small, large := a, b
	if len(small) > len(large) {
		small, large = large, small
	}
	common := 0
	for h := range small {
		if large[h] {
			common++
		}
	}
	union := len(a) + len(b) - common
	if union == 0 || len(a) == 0 || len(b) == 0 {
		return 0, 0, 0
	}
	return float64(common) / float64(union), float64(common) / float64(len(a)), float64(common) / float64(len(b))
}
