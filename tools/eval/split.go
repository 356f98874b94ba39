package eval

import (
	"cmp"
	"path"
	"slices"

	"github.com/simdex/simdex/index"
)

// QuotingRow is the engine's outcome at its defaults on the pairs of an
// e-mail corpus with one kind of quoting.
type QuotingRow struct {
	Quoting Quoting
	// Pairs is the number of unordered pairs with this quoting.
	Pairs int
	// Counts are over the ordered pairs with this quoting: positives and
	// found per class, reported pairs and false alarms among them.
	Counts
}

// quotingRows splits the ordered pairs by quoting (documents' Quote
// depths) and counts the reported ones (reported[p] at the defaults).
func quotingRows(docs []*Document, truth *Truth, reported map[Pair]bool) []QuotingRow {
	rows := make([]QuotingRow, len(quotingNames))
	for q := range rows {
		rows[q].Quoting = Quoting(q)
	}
	for i := range docs {
		for j := range docs {
			if i == j {
				continue
			}
			r := &rows[PairQuoting(docs[i].Quote, docs[j].Quote)]
			if i < j {
				r.Pairs++
			}
			cl := Classify(truth.Get(i, j))
			for k, x := range classes {
				if cl&x != 0 {
					r.Positives[k]++
				}
			}
			if reported[Pair{int32(i), int32(j)}] {
				r.Reported++
				r.add(cl)
			}
		}
	}
	return rows
}

// Kinds of DocPairRow.
const (
	// PairFormats is one whole work in two formats.
	PairFormats = "formats"
	// PairChapter is an HTML chapter and its whole book.
	PairChapter = "chapter in book"
)

// Targets of the Debian manuals' pairs (issue 28).
const (
	// FormatsTarget is the resemblance or containment a work in two
	// formats must reach, in truth and in the engine's estimate.
	FormatsTarget = 0.8
	// ChapterTarget is the containment of a chapter in its book.
	ChapterTarget = 0.9
)

// DocPairRow is one pair of the Debian manuals with a known relation: the
// truth, and what the engine reports.
type DocPairRow struct {
	Kind string
	// Work and Lang are the pair's work and language.
	Work, Lang string
	// A and B name the documents; for a chapter, A is the chapter and B
	// the book.
	A, B string
	// Resemblance and Containment are true: Containment is the larger of
	// the two for PairFormats, A's inside B for PairChapter.
	Resemblance, Containment float64
	// Candidate is true when the index proposed the pair (either way);
	// Reported when it reported it at its defaults (either way).
	Candidate, Reported bool
	// Score is the engine's estimate of what the target measures: the
	// larger of resemblance and containments (formats), the chapter's
	// containment in the book (chapter); zero when not a candidate.
	Score float64
}

// Truth returns the truth value the target applies to.
func (r DocPairRow) Truth() float64 {
	if r.Kind == PairChapter {
		return r.Containment
	}
	return max(r.Resemblance, r.Containment)
}

// Target returns the value the truth and the estimate must reach.
func (r DocPairRow) Target() float64 {
	if r.Kind == PairChapter {
		return ChapterTarget
	}
	return FormatsTarget
}

// docPairFormats are the formats of the cross-format pairs.
var docPairFormats = map[string]bool{"txt": true, "pdf": true, "epub": true, "html": true}

// docPairs lists the cross-format and chapter-in-book pairs of the Debian
// manuals: the same work and language shipped whole as TXT, PDF, EPUB or
// single-page HTML (every two formats), and each HTML chapter against the
// whole book as TXT and as PDF.
func docPairs(docs []*Document, truth *Truth, scores map[Pair]index.Scores, th index.Thresholds) []DocPairRow {
	var out []DocPairRow
	for i, a := range docs {
		for j, b := range docs {
			if i == j || a.Meta["work"] != b.Meta["work"] || a.Meta["lang"] != b.Meta["lang"] || b.Meta["granularity"] != "whole" {
				continue
			}
			fa, fb := a.Meta["format"], b.Meta["format"]
			var kind string
			switch {
			case a.Meta["granularity"] == "whole" && i < j && fa != fb && docPairFormats[fa] && docPairFormats[fb]:
				kind = PairFormats
			case a.Meta["granularity"] == "chapter" && fa == "html" && (fb == "txt" || fb == "pdf"):
				kind = PairChapter
			default:
				continue
			}
			s := truth.Get(i, j)
			r := DocPairRow{Kind: kind, Work: a.Meta["work"], Lang: a.Meta["lang"], A: a.Name, B: b.Name, Resemblance: s.Resemblance, Containment: s.ContainmentAB}
			if kind == PairFormats {
				r.Containment = max(s.ContainmentAB, s.ContainmentBA)
			}
			for _, p := range []Pair{{int32(i), int32(j)}, {int32(j), int32(i)}} {
				e, ok := scores[p]
				if !ok {
					continue
				}
				r.Candidate = true
				r.Reported = r.Reported || e.Reported(th)
				est := e.ContainmentAB
				if p.A != int32(i) {
					est = e.ContainmentBA
				}
				if kind == PairFormats {
					est = max(e.Resemblance, e.ContainmentAB, e.ContainmentBA)
				}
				r.Score = max(r.Score, est)
			}
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(x, y DocPairRow) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Work, y.Work), cmp.Compare(x.Lang, y.Lang),
			cmp.Compare(path.Base(x.A), path.Base(y.A)), cmp.Compare(path.Base(x.B), path.Base(y.B)))
	})
	return out
}
