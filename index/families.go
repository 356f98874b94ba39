package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/simdex/simdex/internal/idmap"
)

// Pair is a reported near-copy pair of contents, A < B.
type Pair struct {
	A, B ContentID
	Scores
}

// Pairs calls fn with every pair of stored contents whose scores pass th.
// Candidates come from the sorted postings (contents sharing an LSH band
// key or a non-ubiquitous chunk), as KDD'05 finds pairs from the sorted
// file–chunk graph; each candidate pair is scored once.
func (ix *Index) Pairs(ctx context.Context, th Thresholds, fn func(Pair) error) error {
	found, err := ix.pairs(ctx, th, nil, nil)
	if err != nil {
		return err
	}
	for _, p := range found {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// pairs returns the reported pairs, in order. With involving, only the
// pairs with at least one of its contents are scored.
func (ix *Index) pairs(ctx context.Context, th Thresholds, involving map[ContentID]bool, of []ContentID) ([]Pair, error) {
	start := time.Now()
	if err := ix.catchUp(ctx); err != nil {
		return nil, err
	}
	g, err := ix.loadCandidateGraph(ctx, ix.candidateLimit(), of)
	if err != nil {
		return nil, err
	}
	ix.logger.Debug("analysis: groups read", "contents", len(g.ids), "seconds", time.Since(start).Seconds())
	var want []bool
	if involving != nil {
		want = make([]bool, len(g.ids))
		for c, id := range g.ids {
			want[c] = involving[id]
		}
	}
	workers := runtime.GOMAXPROCS(0)
	pairs, err := g.pairs(ctx, ix.opts.AnchorShare, workers, want)
	if err != nil {
		return nil, err
	}
	ix.logger.Debug("analysis: candidate pairs found", "pairs", len(pairs), "contents", len(g.ids), "seconds", time.Since(start).Seconds())
	need := make([]bool, len(g.ids))
	for _, p := range pairs {
		need[p[0]], need[p[1]] = true, true
	}
	var ids []ContentID
	for c, ok := range need {
		if ok {
			ids = append(ids, g.ids[c])
		}
	}
	// Fingerprints and sorted chunks by number; each content is scored
	// against many, so its chunks are sorted once.
	tmpl := ix.templates.snapshot()
	fps := make([]*Fingerprint, len(g.ids))
	sorted := make([][]Chunk, len(g.ids))
	if err := ix.store.Fingerprints(ctx, ids, func(id ContentID, fp *Fingerprint) error {
		c, ok := slices.BinarySearch(g.ids, id)
		if !ok {
			return fmt.Errorf("content %d not asked for", id)
		}
		fps[c], sorted[c] = fp, sortedChunks(fp.Chunks, tmpl.chunks)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load fingerprints for pairs: %w", err)
	}
	ix.logger.Debug("analysis: fingerprints read", "contents", len(ids), "seconds", time.Since(start).Seconds())
	// Score on every core: the pairs are split where their first content
	// changes, so each part keeps one scorer per query content, and the
	// parts' reports are kept in order.
	// Each part's reported pairs go to the start of its own region of
	// one slice, as long as its candidates, and are moved together at
	// the end: copying them into a new slice touched every page of it
	// afresh, 2.8 CPU-s for a scan's 3.2 million pairs where page faults
	// are dear (VMs: 13 µs each on the benchmark machine).
	ubiq := ix.newUbiquity(ctx)
	parts := splitPairs(pairs, workers)
	out := make([]Pair, len(pairs))
	found := make([][]Pair, len(parts))
	for i, off := 0, 0; i < len(parts); i++ {
		found[i] = out[off : off : off+len(parts[i])]
		off += len(parts[i])
	}
	eg, gctx := errgroup.WithContext(ctx)
	for i, part := range parts {
		eg.Go(func() error {
			var sc *scorer
			for k, p := range part {
				if k%4096 == 0 && gctx.Err() != nil {
					return gctx.Err()
				}
				prefetchCandidates(part, k, fps, sorted)
				a, b := fps[p[0]], fps[p[1]]
				if a == nil || b == nil {
					continue // removed meanwhile
				}
				if sc == nil || sc.q != a {
					sc = newScorer(a, sorted[p[0]], ubiq, tmpl)
				}
				s := sc.scoreSorted(b, sorted[p[1]])
				if s.Reported(th) && !s.Exact {
					found[i] = append(found[i], Pair{A: g.ids[p[0]], B: g.ids[p[1]], Scores: s})
				}
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	if ubiq.err != nil {
		return nil, fmt.Errorf("score pairs: %w", ubiq.err)
	}
	n := 0
	for _, f := range found {
		n += copy(out[n:], f)
	}
	ix.logger.Debug("analysis: pairs scored", "pairs", n, "seconds", time.Since(start).Seconds())
	return slices.Clip(out[:n]), nil
}

// prefetchCandidates asks for the memory of the candidates scored after
// part[k], so that it arrives while part[k] is scored: the fingerprint
// record of the candidate 2×scoreAhead pairs on, and the samples, MinHash
// and sorted chunks of the one scoreAhead pairs on, whose record was asked
// for earlier.
func prefetchCandidates(part [][2]int32, k int, fps []*Fingerprint, sorted [][]Chunk) {
	if k+2*scoreAhead < len(part) {
		c := part[k+2*scoreAhead][1]
		prefetch(unsafe.Pointer(fps[c]), unsafe.Sizeof(Fingerprint{}))
		prefetch(unsafe.Pointer(&sorted[c]), unsafe.Sizeof(sorted[c]))
	}
	if k+scoreAhead < len(part) {
		c := part[k+scoreAhead][1]
		if fp := fps[c]; fp != nil {
			prefetch(unsafe.Pointer(unsafe.SliceData(fp.Samples)), uintptr(len(fp.Samples))*4)
			prefetch(unsafe.Pointer(unsafe.SliceData(fp.MinHash)), uintptr(len(fp.MinHash))*4)
			ch := sorted[c]
			prefetch(unsafe.Pointer(unsafe.SliceData(ch)), uintptr(len(ch))*unsafe.Sizeof(Chunk{}))
		}
	}
}

// scoreAhead is how many pairs ahead of the one scored prefetchCandidates
// asks for a candidate's samples (1, 4 and 8 were within the noise of 2).
const scoreAhead = 2

// splitPairs cuts sorted pairs into at most n parts of similar size, each
// cut where the first content changes.
func splitPairs[E comparable](pairs [][2]E, n int) [][][2]E {
	var parts [][][2]E
	for len(pairs) > 0 {
		size := max(len(pairs)/max(n-len(parts), 1), 1)
		end := min(size, len(pairs))
		for end < len(pairs) && pairs[end][0] == pairs[end-1][0] {
			end++
		}
		parts = append(parts, pairs[:end])
		pairs = pairs[end:]
	}
	return parts
}

// Family is a set of near-copies: the connected component of the
// near-copy graph (union-find over reported pairs).
type Family struct {
	// Pivot is the representative document, as BetterPivot defines it.
	Pivot DocID
	// Members are every document of the family, pivot included, by id.
	Members []DocID
	// Links is the number of reported content pairs in the family.
	Links int
	// AvgResemblance is the mean resemblance over those pairs.
	AvgResemblance float64
}

// Analysis is the all-pairs report of an index.
type Analysis struct {
	// Documents are every stored document by id.
	Documents map[DocID]*Record
	// Identical are sets of two or more documents with identical text,
	// reported apart from near-copies (KDD'05 §2.4); texts of fewer than
	// Options.MinWords words are left out.
	Identical [][]DocID
	// Pairs are the reported near-copy pairs of contents, none with a text
	// of fewer than Options.MinWords words; pairs with a text under
	// MaxMinWords words are scored exactly when their texts are kept.
	Pairs []Pair
	// Families are near-copy families, largest first.
	Families []Family
	// ByContent lists each content's documents.
	ByContent map[ContentID][]DocID
}

// Analyse reports identical sets, near-copy pairs and families over the
// whole index.
func (ix *Index) Analyse(ctx context.Context, th Thresholds) (*Analysis, error) {
	return ix.analyse(ctx, th, nil)
}

// AnalyseInvolving is Analyse for what a bulk load has just added to an
// index that may hold much more: only the near-copy pairs with at least
// one of docs are scored and reported, and families are the components
// of those pairs (two older documents are linked through the new ones,
// not directly). Scored over the whole index instead, a scan of a few
// files into a large index would score every candidate pair of the index.
//
// When docs are a small part of the index, only the postings of their
// contents' keys are read, and Documents, ByContent and Identical hold
// only the documents of the contents of docs and of their pairs: a scan
// of one file into an index of a million documents read every posting
// and document (172 s, 3 GB). Otherwise they are the whole index's, as
// in Analyse; the pairs and families are the same either way.
func (ix *Index) AnalyseInvolving(ctx context.Context, th Thresholds, docs []DocID) (*Analysis, error) {
	st, err := ix.store.Stats(ctx)
	if err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	return ix.analyseInvolving(ctx, th, docs, int64(len(docs))*involvingShare < st.Documents)
}

// involvingShare: AnalyseInvolving reads only what concerns its documents
// when they are fewer than one in involvingShare of the index's. Reading
// the postings of each of their keys costs more per key than reading the
// posting tables from end to end.
const involvingShare = 4

func (ix *Index) analyseInvolving(ctx context.Context, th Thresholds, docs []DocID, local bool) (*Analysis, error) {
	if !local {
		want := make(map[DocID]bool, len(docs))
		for _, d := range docs {
			want[d] = true
		}
		return ix.analyse(ctx, th, want)
	}
	involving := make(map[ContentID]bool)
	for _, d := range docs {
		r, err := ix.store.Get(ctx, d)
		if errors.Is(err, ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("analyse: %w", err)
		}
		if r.Content != 0 {
			involving[r.Content] = true
		}
	}
	of := slices.Sorted(maps.Keys(involving))
	pairs, err := ix.pairs(ctx, th, involving, of)
	if err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	an := &Analysis{Documents: make(map[DocID]*Record), ByContent: make(map[ContentID][]DocID), Pairs: pairs}
	contents := maps.Clone(involving)
	for _, p := range an.Pairs {
		contents[p.A], contents[p.B] = true, true
	}
	recs, err := ix.store.ByContent(ctx, slices.Sorted(maps.Keys(contents))...)
	if err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	for _, r := range recs {
		an.Documents[r.ID] = r
		an.ByContent[r.Content] = append(an.ByContent[r.Content], r.ID)
	}
	an.Identical = identicalSets(an.ByContent, of)
	counts := wordCounts(an)
	dropShort(an, counts, ix.opts.MinWords)
	if err := ix.rescoreShort(ctx, an, counts, th); err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	an.Families = families(an)
	return an, nil
}

func (ix *Index) analyse(ctx context.Context, th Thresholds, docs map[DocID]bool) (*Analysis, error) {
	start := time.Now()
	an := &Analysis{Documents: make(map[DocID]*Record), ByContent: make(map[ContentID][]DocID)}
	if err := ix.store.Documents(ctx, func(r *Record) error {
		an.Documents[r.ID] = r
		if r.Content != 0 {
			an.ByContent[r.Content] = append(an.ByContent[r.Content], r.ID)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	ix.logger.Debug("analysis: documents read", "documents", len(an.Documents), "seconds", time.Since(start).Seconds())
	an.Identical = identicalSets(an.ByContent, nil)
	var involving map[ContentID]bool
	if docs != nil {
		involving = make(map[ContentID]bool)
		for d := range docs {
			if r := an.Documents[d]; r != nil && r.Content != 0 {
				involving[r.Content] = true
			}
		}
	}
	var err error
	if an.Pairs, err = ix.pairs(ctx, th, involving, nil); err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	counts := wordCounts(an)
	dropShort(an, counts, ix.opts.MinWords)
	if err := ix.rescoreShort(ctx, an, counts, th); err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	an.Families = families(an)
	return an, nil
}

// identicalSets returns the documents of each content held by more than
// one (of those of, when not nil), each set sorted (in byContent too), by
// first document.
func identicalSets(byContent map[ContentID][]DocID, of []ContentID) [][]DocID {
	var sets [][]DocID
	add := func(docs []DocID) {
		if len(docs) > 1 {
			slices.Sort(docs)
			sets = append(sets, slices.Clone(docs))
		}
	}
	if of == nil {
		for _, docs := range byContent {
			add(docs)
		}
	}
	for _, c := range of {
		add(byContent[c])
	}
	slices.SortFunc(sets, func(a, b []DocID) int { return cmp.Compare(a[0], b[0]) })
	return sets
}

// families joins the contents of an's pairs into families (union-find),
// each with its pivot: the content most resembling the others, then the
// larger, then the first. Contents are numbered first, so that the
// millions of pairs of a large analysis are joined in slices rather than
// maps (0.8 of a 50,000-file scan's 1.4 s here).
func families(an *Analysis) []Family {
	var num idmap.Map[ContentID, int32] // number + 1
	num.Init(len(an.ByContent), func(yield func(ContentID) bool) {
		for _, p := range an.Pairs {
			if !yield(p.A) || !yield(p.B) {
				return
			}
		}
	})
	var ids []ContentID
	number := func(c ContentID) int32 {
		n := num.Get(c)
		if n == 0 {
			ids = append(ids, c)
			n = int32(len(ids))
			num.Set(c, n)
		}
		return n - 1
	}
	for _, p := range an.Pairs {
		number(p.A)
		number(p.B)
	}
	parent := make([]int32, len(ids))
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]] // path halving
			x = parent[x]
		}
		return x
	}
	for _, p := range an.Pairs {
		if ra, rb := find(num.Get(p.A)-1), find(num.Get(p.B)-1); ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	links := make([]int, len(ids))
	sumRes := make([]float64, len(ids))
	degree := make([]float64, len(ids))
	copies := make([]float64, len(ids)) // documents per content, looked up once
	for c, id := range ids {
		copies[c] = float64(len(an.ByContent[id]))
	}
	for _, p := range an.Pairs {
		a, b := num.Get(p.A)-1, num.Get(p.B)-1
		r := find(a)
		links[r]++
		sumRes[r] += p.Resemblance
		// Document-level: the other side's identical copies count each.
		degree[a] += p.Resemblance * copies[b]
		degree[b] += p.Resemblance * copies[a]
	}
	contents := make(map[int32][]int32) // by root
	for c := range ids {
		r := find(int32(c))
		contents[r] = append(contents[r], int32(c))
	}
	var out []Family
	for r, cs := range contents {
		f := Family{Links: links[r], AvgResemblance: sumRes[r] / float64(links[r])}
		pivot := int32(-1)
		for _, c := range cs {
			f.Members = append(f.Members, an.ByContent[ids[c]]...)
			if pivot < 0 || better(an, degree[c], degree[pivot], ids[c], ids[pivot]) {
				pivot = c
			}
		}
		slices.Sort(f.Members)
		if docs := an.ByContent[ids[pivot]]; len(docs) > 0 {
			f.Pivot = slices.Min(docs)
		}
		if len(f.Members) > 0 {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b Family) int {
		if c := cmp.Compare(len(b.Members), len(a.Members)); c != 0 {
			return c
		}
		return cmp.Compare(a.Pivot, b.Pivot)
	})
	return out
}

// BetterPivot reports whether document a makes a better pivot of its
// family than document b. The pivot is defined here once, for the API,
// the review UI, the load files and scan: the member whose resemblance to
// the other members, summed, is largest (an identical copy counts 1, so
// the original with three copies beats the one edited copy), then the
// longer text, then the smaller id. wa and wb are the sums, sa and sb the
// text sizes.
func BetterPivot(wa, wb float64, sa, sb int64, a, b DocID) bool {
	// Sums of the same pairs added in another order differ in their
	// last bits: compare them at a precision no score has.
	if d := wa - wb; d > 1e-9 || d < -1e-9 {
		return wa > wb
	}
	if sa != sb {
		return sa > sb
	}
	return a < b
}

// better reports whether content c, of summed resemblance dc to the other
// contents, makes a better pivot than p, of dp, as BetterPivot says of
// their first documents: a content's identical copies count 1 each.
func better(an *Analysis, dc, dp float64, c, p ContentID) bool {
	wc := dc + float64(len(an.ByContent[c])-1)
	wp := dp + float64(len(an.ByContent[p])-1)
	return BetterPivot(wc, wp, textSize(an, c), textSize(an, p), firstDoc(an, c), firstDoc(an, p))
}

// firstDoc is the smallest document id of content c, or the largest id
// when c has none in an (it then never wins a tie).
func firstDoc(an *Analysis, c ContentID) DocID {
	if docs := an.ByContent[c]; len(docs) > 0 {
		return slices.Min(docs)
	}
	return DocID(math.MaxInt64)
}

func textSize(an *Analysis, c ContentID) int64 {
	if docs := an.ByContent[c]; len(docs) > 0 {
		return an.Documents[docs[0]].TextSize
	}
	return 0
}

// MetaWords is the metadata key of a text's word count, recorded when it
// is below MaxMinWords: texts with fewer than Options.MinWords words stay
// out of identical sets and families. A document stored without it has
// at least MaxMinWords words, or was stored before words were counted.
const MetaWords = "text_words"

// MaxMinWords bounds Options.MinWords: words are counted up to it only,
// so that counting costs nothing on all but the shortest texts.
const MaxMinWords = 64

// withWords returns meta with MetaWords set when text has fewer than
// MaxMinWords words; meta itself is not changed (the caller's map).
func withWords(meta map[string]string, text []byte) map[string]string {
	n := countWords(text, MaxMinWords)
	if n >= MaxMinWords {
		return meta
	}
	out := make(map[string]string, len(meta)+1)
	maps.Copy(out, meta)
	out[MetaWords] = strconv.Itoa(n)
	return out
}

// countWords counts the words of text, maximal runs of letters and
// digits, up to limit.
func countWords(text []byte, limit int) int {
	n, in := 0, false
	for i := 0; i < len(text) && n < limit; {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(text[i:])
		}
		w := r < utf8.RuneSelf && (r|0x20 >= 'a' && r|0x20 <= 'z' || r >= '0' && r <= '9') ||
			r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if w && !in {
			n++
		}
		in = w
		i += size
	}
	return n
}

// wordCounts maps each content of an whose word count was recorded (a
// text of fewer than MaxMinWords words: see MetaWords) to that count. It
// is read once per analysis: looking the metadata up for each of millions
// of pairs took a 50,000-file scan 2 CPU-s.
func wordCounts(an *Analysis) map[ContentID]int {
	out := make(map[ContentID]int)
	for _, r := range an.Documents {
		if v, ok := r.Meta[MetaWords]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				out[r.Content] = n
			}
		}
	}
	return out
}

// shortOf reports, with counts from wordCounts, whether content c has
// fewer than minWords words.
func shortOf(counts map[ContentID]int, c ContentID, minWords int) bool {
	n, ok := counts[c]
	return ok && n < minWords
}

// dropShort removes from an the identical sets and pairs of texts with
// fewer than minWords words, before families are formed.
func dropShort(an *Analysis, counts map[ContentID]int, minWords int) {
	// The short texts are few beside the millions of pairs of a scan:
	// looking each side up in their set, which stays in cache, is a
	// third of the cost of looking it up in every count.
	short := make(map[ContentID]bool)
	for c, n := range counts {
		if n < minWords {
			short[c] = true
		}
	}
	if len(short) == 0 {
		return
	}
	an.Identical = slices.DeleteFunc(an.Identical, func(set []DocID) bool {
		return short[an.Documents[set[0]].Content]
	})
	an.Pairs = slices.DeleteFunc(an.Pairs, func(p Pair) bool {
		return short[p.A] || short[p.B]
	})
}

// FamilyEdge is a scored near-copy pair inside a family, A < B.
type FamilyEdge struct {
	A DocID `json:"a"`
	B DocID `json:"b"`
	Scores
}

// FamilyWalk is the near-copy family of one document (the transitive
// closure of its near-copies, as union-find builds Family for scan), as far
// as it was walked.
type FamilyWalk struct {
	// Pivot is the member most like the others, as BetterPivot defines it
	// for every view of a family.
	Pivot DocID
	// Members are the members, by id.
	Members []*Record
	// Edges are the scored pairs between members, by A then B, with their
	// scores rounded as reported; never nil.
	Edges []FamilyEdge
	// Truncated reports that the family has more members than the limit.
	Truncated bool
}

// Family walks the near-copies of root breadth first up to limit members
// and scores every pair found on the way, leaving out the documents
// visible rejects.
func (ix *Index) Family(ctx context.Context, root *Record, th Thresholds, limit int, visible func(*Record) bool) (*FamilyWalk, error) {
	members := map[DocID]*Record{root.ID: root}
	order := []DocID{root.ID}
	type pair struct{ a, b DocID }
	edges := map[pair]FamilyEdge{}
	out := &FamilyWalk{Pivot: root.ID, Edges: []FamilyEdge{}}
	for next := 0; next < len(order); next++ {
		id := order[next]
		ms, err := ix.Similar(ctx, id, th)
		if err != nil {
			return nil, fmt.Errorf("family of document %d: %w", root.ID, err)
		}
		for _, m := range ms {
			if !visible(m.Record) {
				continue
			}
			if _, in := members[m.Record.ID]; !in {
				if len(members) >= limit {
					out.Truncated = true
					continue
				}
				members[m.Record.ID] = m.Record
				order = append(order, m.Record.ID)
			}
			e := FamilyEdge{A: id, B: m.Record.ID, Scores: m.Scores.Rounded()}
			if e.A > e.B {
				e.A, e.B, e.ContainmentAB, e.ContainmentBA = e.B, e.A, e.ContainmentBA, e.ContainmentAB
			}
			edges[pair{e.A, e.B}] = e
		}
	}
	weight := map[DocID]float64{}
	for _, e := range edges {
		out.Edges = append(out.Edges, e)
		weight[e.A] += e.Resemblance
		weight[e.B] += e.Resemblance
	}
	slices.SortFunc(out.Edges, func(x, y FamilyEdge) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	slices.Sort(order)
	for _, id := range order {
		out.Members = append(out.Members, members[id])
		if BetterPivot(weight[id], weight[out.Pivot], members[id].TextSize, members[out.Pivot].TextSize, id, out.Pivot) {
			out.Pivot = id
		}
	}
	return out, nil
}

// Rounded returns s with its resemblance and containments rounded to three
// decimals, as reports show them.
func (s Scores) Rounded() Scores {
	s.Resemblance, s.ContainmentAB, s.ContainmentBA = round3(s.Resemblance), round3(s.ContainmentAB), round3(s.ContainmentBA)
	return s
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
