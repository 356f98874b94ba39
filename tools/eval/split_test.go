package eval

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/corpustest"
)

// docsTruth returns documents with the given metadata and truth texts,
// and their truth table.
func docsTruth(t *testing.T, metas []map[string]string, texts []string) ([]*Document, *Truth) {
	t.Helper()
	var docs []*Document
	for i, m := range metas {
		docs = append(docs, &Document{Name: m["file"], Meta: m, Truth: []byte(texts[i])})
	}
	truth, err := CorpusTruth(docs)
	if err != nil {
		t.Fatal(err)
	}
	return docs, truth
}

func TestDocPairs(t *testing.T) {
	book := "one two three four five six seven eight nine ten eleven twelve"
	meta := func(file, format, gran string) map[string]string {
		return map[string]string{"file": file, "work": "w", "lang": "en", "format": format, "granularity": gran}
	}
	docs, truth := docsTruth(t, []map[string]string{
		meta("w.txt", "txt", "whole"), meta("w.pdf", "pdf", "whole"), meta("w.info", "info", "whole"),
		meta("ch1.html", "html", "chapter"), meta("ch1.rst", "rst", "chapter"),
		{"file": "other.txt", "work": "x", "lang": "en", "format": "txt", "granularity": "whole"},
	}, []string{book, "— " + book + " —\n1", book, "four five six seven eight nine", "four five six seven eight nine", book})
	th := index.DefaultThresholds()
	scores := map[Pair]index.Scores{
		{1, 0}: {Resemblance: 0.9, ContainmentAB: 0.95, ContainmentBA: 0.9},
		{0, 3}: {Resemblance: 0.2, ContainmentAB: 0.2, ContainmentBA: 0.97}, // the book queried: ch1 in txt is BA
	}
	rows := docPairs(docs, truth, scores, th)
	got := map[string]DocPairRow{}
	for _, r := range rows {
		got[r.Kind+" "+r.A+" "+r.B] = r
	}
	if len(rows) != 3 {
		t.Fatalf("rows %+v, want txt~pdf and ch1 in txt and pdf", rows)
	}
	f := got[PairFormats+" w.txt w.pdf"]
	if !f.Reported || !f.Candidate || f.Score != 0.95 || f.Truth() < 0.8 {
		t.Errorf("formats row %+v", f)
	}
	c := got[PairChapter+" ch1.html w.txt"]
	if !c.Reported || c.Score != 0.97 || c.Containment != 1 {
		t.Errorf("chapter in txt %+v", c)
	}
	p := got[PairChapter+" ch1.html w.pdf"]
	if p.Candidate || p.Reported || p.Containment != 1 {
		t.Errorf("chapter in pdf %+v", p)
	}
	n, ok, rep, sc := docPairSummary(rows, PairChapter)
	if n != 2 || ok != 2 || rep != 1 || sc != 1 {
		t.Errorf("chapter summary %d %d %d %d", n, ok, rep, sc)
	}
	if line := docPairLine(rows); !strings.Contains(line, "1 cross-format pairs") || !strings.Contains(line, "2 chapter-in-book pairs") {
		t.Errorf("summary line %q", line)
	}
}

func TestQuotingRows(t *testing.T) {
	text := "alpha beta gamma delta epsilon zeta eta theta"
	docs, truth := docsTruth(t, []map[string]string{{"file": "a"}, {"file": "b"}, {"file": "c"}, {"file": "d"}},
		[]string{text, "> " + text, "> " + text + " iota", "unrelated words of another message entirely here"})
	docs[1].Quote, docs[2].Quote = 1, 1
	reported := map[Pair]bool{{0, 1}: true, {1, 2}: true, {2, 1}: true, {0, 3}: true}
	rows := quotingRows(docs, truth, reported)
	if rows[NoQuoting].Pairs != 1 || rows[SameDepth].Pairs != 1 || rows[DepthDiffers].Pairs != 4 {
		t.Fatalf("pairs per quoting %d %d %d", rows[NoQuoting].Pairs, rows[SameDepth].Pairs, rows[DepthDiffers].Pairs)
	}
	if r := rows[SameDepth]; r.Recall(Near) != 1 || r.Reported != 2 {
		t.Errorf("same depth %+v", r)
	}
	if r := rows[NoQuoting]; r.FalseAlarms != 1 || r.FalseAlarmShare() != 1 {
		t.Errorf("no quoting %+v", r)
	}
	// 0~1 is exact (same words), 0~2 near and contained: one of the two
	// directions of 0~2 and neither of 0→2, 2→0 is reported.
	if r := rows[DepthDiffers]; r.Recall(Exact) != 0.5 || r.Recall(Contained) != 0 {
		t.Errorf("depth differs %+v", r)
	}
}

func TestLoadMailUSRP(t *testing.T) {
	fsys, err := openDir(filepath.Join(corpustest.Suite(t), MailUSRP))
	if err != nil {
		t.Fatalf("open %s: %v", MailUSRP, err)
	}
	x, err := DefaultMailExtractor()
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadCorpus(context.Background(), fsys, MailUSRP, x, 40)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Docs) != 40 || !c.Quoting {
		t.Fatalf("%d documents, quoting %v", len(c.Docs), c.Quoting)
	}
	quoted, threads := 0, map[string]int{}
	for _, d := range c.Docs {
		if d.Err != nil {
			t.Errorf("%s: %v", d.Name, d.Err)
			continue
		}
		if !strings.Contains(strings.ToLower(string(d.Truth)), "usrp") {
			t.Errorf("%s: truth text lacks the subject's list tag: %.200q", d.Name, d.Truth)
		}
		if d.Quote > 0 {
			quoted++
		}
		threads[d.Meta["thread"]]++
	}
	if quoted == 0 || quoted == len(c.Docs) {
		t.Errorf("%d of %d messages quote", quoted, len(c.Docs))
	}
	if len(threads) < 2 || threads[""] > 0 {
		t.Errorf("threads %v", threads)
	}
}
