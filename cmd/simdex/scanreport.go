package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
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

	// What the text report says beside the JSON's fields: the files by
	// what the index held of them, and one naming of files (nameForText).
	counts     ingest.ScanCounts
	textNames  map[string]string // JSON name → text name, where they differ
	errorNames []string          // each error's text name, when set
	notIndexed []bool            // each error's file was not recorded in the index
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
	rep.pairs = sortedPairs(rn, each)
	rep.addGroups(an, rn, involves)
	rep.names = rn.names
	return rep
}

// addGroups adds the identical sets and the families that involve this
// scan's documents, by name.
func (rep *report) addGroups(an *index.Analysis, rn *reportNames, involves func([]index.DocID) bool) {
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
}

// sortedPairs returns the pairs each enumerates, in name order.
func sortedPairs(rn *reportNames, each func(fn func(a, b int32, s *index.Scores))) []reportPair {
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
	pairs := make([]reportPair, start[len(rn.names)])
	next := slices.Clone(start[:len(rn.names)])
	each(func(a, b int32, s *index.Scores) {
		ab, ba := s.ContainmentAB, s.ContainmentBA
		if rn.rank[a] > rn.rank[b] {
			a, b, ab, ba = b, a, ba, ab
		}
		i := next[rn.rank[a]]
		next[rn.rank[a]]++
		pairs[i] = newReportPair(a, b, s, ab, ba)
	})
	// The runs are sorted in two halves of the pairs at once: the other
	// core is idle by then.
	bySecond := func(p, q reportPair) int { return cmp.Compare(rn.rank[p.b], rn.rank[q.b]) }
	sortRuns := func(from, to int) {
		for r := from; r < to; r++ {
			if lo, hi := start[r], start[r+1]; hi-lo > 1 {
				slices.SortFunc(pairs[lo:hi], bySecond)
			}
		}
	}
	half, _ := slices.BinarySearch(start, len(pairs)/2)
	half = min(half, len(rn.names))
	var wg sync.WaitGroup
	wg.Go(func() { sortRuns(0, half) })
	sortRuns(half, len(rn.names))
	wg.Wait()
	return pairs
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

// textOptions chooses what the text report shows.
type textOptions struct {
	pairs    bool    // every member and the pair table, not a summary
	limit    int     // at most this many rows per section; 0: all
	minScore float64 // pairs scoring less (resemblance and both containments) are left out
}

// shown returns how many of n rows a section shows under limit.
func (o textOptions) shown(n int) int {
	if o.limit > 0 && n > o.limit {
		return o.limit
	}
	return n
}

// more prints "… and N more" when a section was cut.
func more(w io.Writer, shown, n int, hint string) {
	if n > shown {
		fmt.Fprintf(w, "  … and %d more (%s)\n", n-shown, hint)
	}
}

func (r *report) writeText(w io.Writer, o textOptions) {
	c := r.counts
	errs := "no errors"
	if len(r.Errors) > 0 {
		errs = plural(len(r.Errors), "error")
	}
	fmt.Fprintf(w, "%s: %d new, %d changed, %d unchanged (already indexed); %s, attachments and archive members included; %s\n",
		plural(r.Files, "file"), c.New, c.Changed, c.Unchanged, plural(r.Documents, "document"), errs)
	r.writeErrors(w, o)
	r.writeSets(w, o)
	r.writeFamilies(w, o)
	if o.pairs {
		r.writePairs(w, o)
	} else if len(r.pairs) > 0 {
		fmt.Fprintln(w, "\n--pairs lists every near-copy pair with its scores; --json prints the whole report.")
	}
}

// writeErrors prints the files that could not be fully indexed: most are
// recorded in the index with their error, for review; those marked were
// not indexed at all (unreadable, not a regular file).
func (r *report) writeErrors(w io.Writer, o textOptions) {
	if len(r.Errors) == 0 {
		return
	}
	header := "Errors (recorded in the index for review):"
	if slices.Contains(r.notIndexed, true) {
		header = "Errors (recorded in the index for review, unless marked not indexed):"
	}
	fmt.Fprintln(w, "\n"+header)
	lines := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		name, mark := e.Path, ""
		if i < len(r.errorNames) {
			name = r.errorNames[i]
		}
		if i < len(r.notIndexed) && r.notIndexed[i] {
			mark = " (not indexed)"
		}
		lines[i] = fmt.Sprintf("  %s: %s%s\n", name, e.Error, mark)
	}
	slices.Sort(lines) // by the names printed
	k := o.shown(len(lines))
	for _, l := range lines[:k] {
		fmt.Fprint(w, l)
	}
	more(w, k, len(lines), "--limit 0 lists them all")
}

// writeSets prints the identical sets, largest first.
func (r *report) writeSets(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "\nIdentical sets: %d\n", len(r.Identical))
	sets := slices.Clone(r.Identical)
	slices.SortStableFunc(sets, func(a, b []string) int { return len(b) - len(a) })
	k := o.shown(len(sets))
	for i, set := range sets[:k] {
		if o.pairs {
			fmt.Fprintf(w, "  [%d] %d copies\n", i+1, len(set))
			for _, n := range set {
				fmt.Fprintf(w, "      %s\n", r.text(n))
			}
			continue
		}
		fmt.Fprintf(w, "  [%d] %d copies of %s\n", i+1, len(set), r.text(set[0]))
	}
	more(w, k, len(sets), "--limit 0 lists them all")
}

// writeFamilies prints the near-copy families, largest first.
func (r *report) writeFamilies(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "\nNear-copy families: %d\n", len(r.Families))
	fams := slices.Clone(r.Families)
	slices.SortStableFunc(fams, func(a, b familyJSON) int { return len(b.Members) - len(a.Members) })
	k := o.shown(len(fams))
	for i, f := range fams[:k] {
		fmt.Fprintf(w, "  [%d] %s, %s, average resemblance %.0f%%, pivot %s\n",
			i+1, plural(len(f.Members), "document"), plural(f.Links, "link"), 100*f.AvgResemblance, r.text(f.Pivot))
		if o.pairs {
			for _, m := range f.Members {
				fmt.Fprintf(w, "      %s\n", r.text(m))
			}
		}
	}
	more(w, k, len(fams), "--limit 0 lists them all")
}

// writePairs prints the near-copy pairs scoring at least o.minScore.
func (r *report) writePairs(w io.Writer, o textOptions) {
	var rows []pairJSON
	for i := range r.pairs {
		if r.pairs[i].exact {
			continue
		}
		p := r.pairs[i].json(r.names)
		if max(p.Resemblance, p.ContainmentAB, p.ContainmentBA) >= o.minScore {
			rows = append(rows, p)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNear-copy pairs: %d\n", len(rows))
	fmt.Fprintf(w, "  %-6s %-6s %-6s %-9s %-4s %s\n", "resem", "a in b", "b in a", "bytes", "ham", "a ~ b")
	k := o.shown(len(rows))
	for _, p := range rows[:k] {
		fmt.Fprintf(w, "  %5.0f%% %5.0f%% %5.0f%% %9d %4d  %s ~ %s\n", 100*p.Resemblance, 100*p.ContainmentAB, 100*p.ContainmentBA, p.BytesInCommon, p.Hamming, r.text(p.A), r.text(p.B))
	}
	more(w, k, len(rows), "--limit 0 lists them all, --min-score keeps the closest")
	fmt.Fprintln(w, bytesLegend)
}

// bytesLegend follows a table of scores: a reviewer who sees 0 bytes in
// common beside a containment of 98 % (a one-word edit of a 1 KB text,
// whose only chunk the edit changed) should know why.
const bytesLegend = "  (bytes: text in whole chunks both share, a lower bound; a short text edited anywhere may share none)"
