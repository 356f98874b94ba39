package eval

import (
	"bytes"
	"fmt"
	"path"
)

// quotingTable is an e-mail corpus's results split by quoting.
func quotingTable(r *CorpusResult) Table {
	t := Table{Title: "simdex at the defaults, by quoting",
		Note:   "Pairs split by the quote depth of their two messages (`eval.QuoteDepth`: `>` markers, and one level below an `On … wrote:` line, an Outlook `From:/Sent:/Subject:` block or a forwarded-message line). Recall over ordered pairs; false alarms as a share of the pairs reported in the row.",
		Header: []string{"quoting", "pairs", "near pairs", "near recall", "contained pairs", "contained recall", "reported", "false alarms"}}
	for _, q := range r.Quoting {
		t.Rows = append(t.Rows, []string{q.Quoting.String(), fmt.Sprint(q.Pairs),
			fmt.Sprint(q.Positives[1] / 2), r3(q.Recall(Near)), fmt.Sprint(q.Positives[2] / 2), r3(q.Recall(Contained)),
			fmt.Sprint(q.Reported), pct(q.FalseAlarmShare())})
	}
	return t
}

// docPairSummary counts the pairs of a kind: all, those whose truth
// reaches the target, those reported, and those reported with an
// estimate reaching the target.
func docPairSummary(rows []DocPairRow, kind string) (n, truthOK, reported, scoreOK int) {
	for _, r := range rows {
		if r.Kind != kind {
			continue
		}
		n++
		if r.Truth() >= r.Target() {
			truthOK++
		}
		if r.Reported {
			reported++
			if r.Score >= r.Target() {
				scoreOK++
			}
		}
	}
	return n, truthOK, reported, scoreOK
}

// docPairLine summarises the Debian pairs in one sentence.
func docPairLine(rows []DocPairRow) string {
	var b bytes.Buffer
	for k, x := range []struct {
		kind, what string
		target     float64
	}{
		{PairFormats, "cross-format pairs (same work and language, TXT / PDF / EPUB / single-page HTML)", FormatsTarget},
		{PairChapter, "chapter-in-book pairs (HTML chapter inside the whole TXT or PDF)", ChapterTarget},
	} {
		n, ok, rep, sc := docPairSummary(rows, x.kind)
		if k > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d %s: %d reach %.1f in truth, simdex reports %d, %d of them with an estimate ≥ %.1f", n, x.what, ok, x.target, rep, sc, x.target)
	}
	return b.String()
}

// docPairTable lists the Debian pairs of one kind.
func docPairTable(rows []DocPairRow, kind string) Table {
	t := Table{Header: []string{"work", "A", "B", "true resemblance", "true containment", "reported", "simdex estimate"}}
	if kind == PairFormats {
		t.Title = "Debian manuals: one work in two formats"
		t.Note = fmt.Sprintf("Target: reported, with resemblance or containment ≥ %.1f. True containment is the larger of the two directions; the estimate is the engine's largest of resemblance and containments (either query direction).", FormatsTarget)
	} else {
		t.Title = "Debian manuals: each HTML chapter inside its whole book"
		t.Note = fmt.Sprintf("Target: reported, with containment ≥ %.1f. True containment is the chapter's inside the book; the estimate is the engine's (either query direction).", ChapterTarget)
		t.Header = []string{"work", "chapter", "book", "true resemblance", "true containment", "reported", "simdex estimate"}
	}
	for _, r := range rows {
		if r.Kind != kind {
			continue
		}
		est := "not a candidate"
		if r.Candidate {
			est = f2(r.Score)
		}
		t.Rows = append(t.Rows, []string{r.Work + " (" + r.Lang + ")", "`" + path.Base(r.A) + "`", "`" + path.Base(r.B) + "`", f2(r.Resemblance), f2(r.Containment), yes(r.Reported), est})
	}
	return t
}

// writeDocPairs writes the Debian pairs' tables.
func writeDocPairs(b *bytes.Buffer, rows []DocPairRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "%s.\n\n", docPairLine(rows))
	writeTable(b, docPairTable(rows, PairFormats))
	writeTable(b, docPairTable(rows, PairChapter))
}

// writeSplits writes the summary's lines on the quoting split and the
// Debian pairs.
func writeSplits(b *bytes.Buffer, res *Results) {
	for _, r := range res.Corpora {
		if len(r.Quoting) > 0 || len(r.DocPairs) > 0 {
			fmt.Fprintf(b, "Issue 28 adds: the same goal on the real mailing list `mail-usrp`, whatever the quoting; each Debian work shipped whole in several formats reported as a near-copy across them (estimate ≥ %.1f), each HTML chapter reported inside its whole book in TXT and in PDF (estimate ≥ %.1f).\n\n", FormatsTarget, ChapterTarget)
			break
		}
	}
	for _, r := range res.Corpora {
		if len(r.Quoting) > 0 {
			fmt.Fprintf(b, "**%s by quoting** (near recall / contained recall / false alarms):", title(r))
			for k, q := range r.Quoting {
				sep := ","
				if k == 0 {
					sep = ""
				}
				fmt.Fprintf(b, "%s %s %s / %s / %s", sep, q.Quoting, r3(q.Recall(Near)), r3(q.Recall(Contained)), pct(q.FalseAlarmShare()))
			}
			b.WriteString(".\n\n")
		}
		if len(r.DocPairs) > 0 {
			fmt.Fprintf(b, "**Debian manuals**: %s (tables in its section).\n\n", docPairLine(r.DocPairs))
		}
	}
}
