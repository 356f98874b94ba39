package main

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/idmap"
)

// report is what scan prints.
type report struct {
	Files     int          `json:"files"`
	Documents int          `json:"documents"`
	Errors    []fileError  `json:"errors"`
	Identical [][]string   `json:"identical"`
	Families  []familyJSON `json:"families"`

	// pairs are the near-copy and identical pairs, written as the
	// report's "pairs" (pairJSON) and naming documents by their number
	// in names.
	pairs []reportPair
	names []string
}

type familyJSON struct {
	Pivot          string   `json:"pivot"`
	Members        []string `json:"members"`
	Links          int      `json:"links"`
	AvgResemblance float64  `json:"avg_resemblance"`
}

// pairJSON is one element of the report's "pairs".
type pairJSON struct {
	A             string  `json:"a"`
	B             string  `json:"b"`
	Resemblance   float64 `json:"resemblance"`
	ContainmentAB float64 `json:"containment_ab"`
	ContainmentBA float64 `json:"containment_ba"`
	BytesInCommon int64   `json:"bytes_in_common"`
	Hamming       int     `json:"hamming"`
	Exact         bool    `json:"exact"`
}

// reportPair is a pair as the report keeps it until it is written: its
// names by number and its scores as printed, in thousandths. A
// 50,000-file scan reports 3.5 million pairs, each placed at random in
// name order as it is found: as pairJSON values (88 bytes) that was
// 310 MB of fresh memory, a page fault every 46 pairs; as reportPairs
// (24 bytes), 84 MB.
type reportPair struct {
	bytesInCommon int64
	// a and b are numbers in report.names, a's name first in name order.
	a, b                                      int32
	resemblance, containmentAB, containmentBA uint16
	hamming                                   uint8
	exact                                     bool
}

// newReportPair keeps the scores of a ~ b, given in a's direction.
func newReportPair(a, b int32, s *index.Scores, ab, ba float64) reportPair {
	return reportPair{bytesInCommon: s.BytesInCommon, a: a, b: b, resemblance: milli(s.Resemblance),
		containmentAB: milli(ab), containmentBA: milli(ba), hamming: uint8(min(max(s.Hamming, 0), 64)), exact: s.Exact}
}

// json returns p as the report prints it.
func (p *reportPair) json(names []string) pairJSON {
	return pairJSON{A: names[p.a], B: names[p.b], Resemblance: fromMilli(p.resemblance), ContainmentAB: fromMilli(p.containmentAB),
		ContainmentBA: fromMilli(p.containmentBA), BytesInCommon: p.bytesInCommon, Hamming: int(p.hamming), Exact: p.exact}
}

// pairList returns the report's pairs as it prints them.
func (r *report) pairList() []pairJSON {
	out := make([]pairJSON, len(r.pairs))
	for i := range r.pairs {
		out[i] = r.pairs[i].json(r.names)
	}
	return out
}

// buildReport keeps what involves this scan's documents; documents
// indexed earlier are named by their key (fs:data/inbox/a.txt,
// s3:bucket/a.txt): their names alone (a.txt) could not be told from this
// scan's paths.
func buildReport(an *index.Analysis, scanned map[index.DocID]string, files int) *report {
	rep := &report{Files: files, Documents: len(scanned), Errors: []fileError{}, Identical: [][]string{}, Families: []familyJSON{}}
	rn := newReportNames(an, scanned)
	involves := func(ids []index.DocID) bool {
		return slices.ContainsFunc(ids, func(id index.DocID) bool { return rn.scanned[rn.num.Get(id)] })
	}
	// Each content's documents by name number, looked up by content id
	// rather than in ByContent for each of millions of pairs.
	var docsOf idmap.Map[index.ContentID, []int32]
	docsOf.Init(len(an.ByContent), maps.Keys(an.ByContent))
	for c, ids := range an.ByContent {
		nums := make([]int32, len(ids))
		for i, id := range ids {
			nums[i] = rn.num.Get(id)
		}
		docsOf.Set(c, nums)
	}
	// Every pair of documents the report lists, by name number: identical
	// texts first, then the near-copy pairs of contents, each standing for
	// the pairs of their documents.
	each := func(fn func(a, b int32, s *index.Scores)) {
		for _, set := range an.Identical {
			if !involves(set) {
				continue
			}
			s := index.Scores{Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1, BytesInCommon: an.Documents[set[0]].TextSize, Exact: true}
			for i := range set {
				for j := i + 1; j < len(set); j++ {
					fn(rn.num.Get(set[i]), rn.num.Get(set[j]), &s)
				}
			}
		}
		for k := range an.Pairs {
			p := &an.Pairs[k]
			bs := docsOf.Get(p.B)
			for _, na := range docsOf.Get(p.A) {
				for _, nb := range bs {
					if rn.scanned[na] || rn.scanned[nb] {
						fn(na, nb, &p.Scores)
					}
				}
			}
		}
	}
	// The millions of pairs of a large scan are sorted by name without
	// comparing names: counted by the rank of their first name, placed
	// where that rank's run starts, then sorted within each run by the
	// rank of the second (sort.Slice comparing names took a 50,000-file
	// scan's report 2 s; growing the list by appending copied it at each
	// doubling).
	start := make([]int, len(rn.names)+1)
	each(func(a, b int32, _ *index.Scores) { start[min(rn.rank[a], rn.rank[b])+1]++ })
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	rep.pairs = make([]reportPair, start[len(rn.names)])
	next := slices.Clone(start[:len(rn.names)])
	each(func(a, b int32, s *index.Scores) {
		ab, ba := s.ContainmentAB, s.ContainmentBA
		if rn.rank[a] > rn.rank[b] {
			a, b, ab, ba = b, a, ba, ab
		}
		i := next[rn.rank[a]]
		next[rn.rank[a]]++
		rep.pairs[i] = newReportPair(a, b, s, ab, ba)
	})
	// The runs are sorted in two halves of the pairs at once: the other
	// core is idle by then.
	bySecond := func(p, q reportPair) int { return cmp.Compare(rn.rank[p.b], rn.rank[q.b]) }
	sortRuns := func(from, to int) {
		for r := from; r < to; r++ {
			if lo, hi := start[r], start[r+1]; hi-lo > 1 {
				slices.SortFunc(rep.pairs[lo:hi], bySecond)
			}
		}
	}
	half, _ := slices.BinarySearch(start, len(rep.pairs)/2)
	half = min(half, len(rn.names))
	var wg sync.WaitGroup
	wg.Go(func() { sortRuns(0, half) })
	sortRuns(half, len(rn.names))
	wg.Wait()
	for _, set := range an.Identical {
		if !involves(set) {
			continue
		}
		var names []string
		for _, id := range set {
			names = append(names, rn.names[rn.num.Get(id)])
		}
		sort.Strings(names)
		rep.Identical = append(rep.Identical, names)
	}
	for _, fam := range an.Families {
		if !involves(fam.Members) {
			continue
		}
		fj := familyJSON{Pivot: rn.names[rn.num.Get(fam.Pivot)], Links: fam.Links, AvgResemblance: round(fam.AvgResemblance)}
		for _, m := range fam.Members {
			fj.Members = append(fj.Members, rn.names[rn.num.Get(m)])
		}
		sort.Strings(fj.Members)
		rep.Families = append(rep.Families, fj)
	}
	// In name order, not id order: ids follow the order files were
	// committed in, which concurrent extraction varies from run to run,
	// and two scans of the same files should print the same report.
	slices.SortFunc(rep.Identical, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	slices.SortStableFunc(rep.Families, func(a, b familyJSON) int {
		if c := cmp.Compare(len(b.Members), len(a.Members)); c != 0 {
			return c
		}
		return strings.Compare(a.Pivot, b.Pivot)
	})
	rep.names = rn.names
	return rep
}

// reportNames numbers the documents of an analysis and ranks their report
// names (this scan's paths, or the keys of documents indexed
// earlier) in name order, ties by id.
type reportNames struct {
	num     idmap.Map[index.DocID, int32]
	names   []string
	scanned []bool
	rank    []int32
}

func newReportNames(an *index.Analysis, scanned map[index.DocID]string) *reportNames {
	rn := &reportNames{}
	ids := slices.Sorted(maps.Keys(an.Documents))
	rn.num.Init(len(ids), slices.Values(ids))
	for _, id := range ids {
		name, ok := scanned[id]
		if !ok {
			name = an.Documents[id].Key
		}
		rn.num.Set(id, int32(len(rn.names)))
		rn.names = append(rn.names, name)
		rn.scanned = append(rn.scanned, ok)
	}
	order := make([]int32, len(rn.names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := strings.Compare(rn.names[a], rn.names[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // numbered in id order
	})
	rn.rank = make([]int32, len(order))
	for r, n := range order {
		rn.rank[n] = int32(r)
	}
	return rn
}

func round(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

// milli is x in thousandths, rounded as round rounds it. Scores are
// between 0 and 1; anything else is kept within what a uint16 holds.
func milli(x float64) uint16 {
	switch {
	case !(x > 0): // NaN too
		return 0
	case x >= math.MaxUint16/1000.0:
		return math.MaxUint16
	}
	return uint16(x*1000 + 0.5)
}

// fromMilli is the score k thousandths, as round would have returned it.
func fromMilli(k uint16) float64 { return float64(k) / 1000 }
