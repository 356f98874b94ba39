package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"slices"

	"github.com/simdex/simdex/index"
)

// anchorShare is a content on two or more of a query's anchor lists: on
// how many, and how many anchors it has in all.
type anchorShare struct {
	c       int64
	shared  int32
	anchors int32
}

// anchorShares returns the contents on two or more of the lists of keys no
// longer than maxDocs, ascending: counted where the lists are, when they
// are in memory, else from the lists read from the blocks.
func (s *Store) anchorShares(ctx context.Context, tx *sql.Tx, gen uint64, keys []int64, maxDocs int) ([]anchorShare, error) {
	if s.mem != nil {
		at, err := s.readAnchorsGen(ctx, tx)
		if err != nil {
			return nil, err
		}
		if shares, ok := s.mem.shares(keys, maxDocs, at); ok {
			return shares, nil
		}
	}
	lists, err := s.anchorLists(ctx, tx, gen, keys, maxDocs)
	if err != nil {
		return nil, err
	}
	// Every posting of the lists that tell something, sorted by content:
	// a content's run is the anchors it shares with the query. Sorting
	// cost half what counting in a map did.
	return sharesOfSorted(sharedAnchors(lists, maxDocs)), nil
}

// sharesOfSorted returns the contents found two or more times in all,
// which is sorted by content.
func sharesOfSorted(all []anchorPosting) []anchorShare {
	var out []anchorShare
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].c == all[i].c {
			j++
		}
		if j-i >= 2 {
			out = append(out, anchorShare{all[i].c, int32(j - i), all[i].n})
		}
		i = j
	}
	return out
}

// sharedAnchors returns the postings of the lists no longer than maxDocs
// (longer ones are boilerplate, held by too many contents to tell
// anything), sorted by content. They are sorted as integers, content id
// above anchor count, which took a third of the time of sorting the
// structures, by radix on the id's bits alone (a query's tens of thousands
// of postings in two passes: a third of the time of slices.Sort, which
// was a tenth of an "all versions" query); ids too large for that (never
// seen: 2^40 contents) are sorted as structures.
func sharedAnchors(lists map[int64][]anchorPosting, maxDocs int) []anchorPosting {
	const countBits = 24
	total := 0
	for _, ps := range lists {
		if len(ps) <= maxDocs {
			total += len(ps)
		}
	}
	all := make([]anchorPosting, 0, total) // sized first: appends were most of a query's garbage
	packable := true
	for _, ps := range lists {
		if len(ps) > maxDocs {
			continue
		}
		for _, p := range ps {
			packable = packable && p.c < 1<<(63-countBits) && p.n < 1<<countBits
		}
		all = append(all, ps...)
	}
	if !packable {
		slices.SortFunc(all, func(a, b anchorPosting) int { return cmp.Compare(a.c, b.c) })
		return all
	}
	buf := make([]int64, 2*len(all))
	keys := buf[:len(all)]
	var most int64
	for i, p := range all {
		keys[i] = p.c<<countBits | int64(p.n)
		most = max(most, p.c)
	}
	keys = radixSortAbove(keys, buf[len(all):], countBits, bits.Len64(uint64(most)))
	for i, k := range keys {
		all[i] = anchorPosting{c: k >> countBits, n: int32(k & (1<<countBits - 1))}
	}
	return all
}

// radixSortAbove sorts keys, which are not negative, by their bits from
// lo to lo+width (the bits below lo keep their order: the sort is stable),
// in passes of radixBits, using scratch (as long as keys); it returns the
// slice holding the result, keys or scratch.
func radixSortAbove[K int64 | uint32](keys, scratch []K, lo, width int) []K {
	const radixBits = 11
	var count [1 << radixBits]int
	for shift := lo; shift < lo+width; shift += radixBits {
		clear(count[:])
		for _, k := range keys {
			count[k>>shift&(1<<radixBits-1)]++
		}
		sum := 0
		for i, n := range count {
			count[i] = sum
			sum += n
		}
		for _, k := range keys {
			d := k >> shift & (1<<radixBits - 1)
			scratch[count[d]] = k
			count[d]++
		}
		keys, scratch = scratch, keys
	}
	return keys
}

// AnchorCandidates implements index.Searcher.
func (s *Store) AnchorCandidates(ctx context.Context, anchors []uint64, maxDocs int, minShare float64, limit int) ([]index.ContentID, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	if len(anchors) == 0 || limit <= 0 {
		return nil, nil
	}
	gen := s.over.start(s.now())
	// One read transaction for every lookup: each statement on its own
	// would take and release the WAL read lock (system calls) again.
	tx, end, err := s.readTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("find anchor candidates: %w", err)
	}
	defer end()
	keys := make([]int64, 0, len(anchors))
	seen := make(map[int64]struct{}, len(anchors))
	for _, a := range anchors {
		k := postingKey(a)
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	queried := len(keys)
	shares, err := s.anchorShares(ctx, tx, gen, keys, maxDocs)
	if err != nil {
		return nil, fmt.Errorf("find anchor candidates: %w", s.mapErr(err))
	}
	return bestShares(shares, queried, minShare, limit), nil
}

// bestShares returns up to limit of the contents of shares that share at
// least minShare of the anchors of the smaller of them and the query (of
// queried anchors), best share first.
func bestShares(shares []anchorShare, queried int, minShare float64, limit int) []index.ContentID {
	type cand struct {
		id    int64
		share float64
	}
	var cands []cand
	for _, sh := range shares {
		smaller := min(queried, int(sh.anchors))
		if smaller == 0 {
			continue
		}
		if share := float64(sh.shared) / float64(smaller); share >= minShare {
			cands = append(cands, cand{sh.c, share})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.share > b.share:
			return -1
		case a.share < b.share:
			return 1
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(cands) > limit {
		cands = cands[:limit]
	}
	out := make([]index.ContentID, len(cands))
	for i, c := range cands {
		out[i] = index.ContentID(c.id)
	}
	return out
}
