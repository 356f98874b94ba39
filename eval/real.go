package eval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/simdex/simdex/index"
)

// ThresholdRow is a method's outcome at one threshold.
type ThresholdRow struct {
	// Label describes the threshold ("res 0.5, cont 0.8", "score ≥ 40").
	Label string
	// Value is the threshold for peers (ssdeep score, tlsh distance).
	Value int
	// Thresholds is the engine's threshold (zero for peers).
	Thresholds index.Thresholds
	Counts
}

// RelationRow compares a labelled relation with the truth and with what
// each method reports.
type RelationRow struct {
	Relation string
	// Pairs is the number of unordered pairs with the relation.
	Pairs int
	// MeanResemblance is their mean true resemblance.
	MeanResemblance float64
	// Near, Contained and Unrelated count the pairs in each true class.
	Near, Contained, Unrelated int
	// Engine, Ssdeep and TLSH are the shares of the relation's ordered
	// pairs each method reports (engine at the default thresholds, peers
	// at their chosen thresholds).
	Engine, Ssdeep, TLSH float64
}

// CorpusResult is the evaluation of one labelled corpus.
type CorpusResult struct {
	Name string
	// Title names the corpus in the report; About describes a generated
	// corpus (see Corpus).
	Title, About string
	// Docs is the number of documents with text; Failed lists the others.
	Docs   int
	Failed []string
	// Bytes is the total normalised text.
	Bytes int64
	// Pairs is the number of unordered pairs; Positives counts them per
	// class (exact, near, contained) and Unrelated the unrelated ones.
	Pairs     int
	Positives [len(classes)]int
	Unrelated int
	// Default is the engine at index.DefaultThresholds.
	Default ThresholdRow
	// Engine sweeps the engine's thresholds.
	Engine []ThresholdRow
	// EngineCandidates is the number of ordered pairs the index found as
	// candidates (loosest thresholds).
	EngineCandidates int
	// NotCandidate and LowScore split, per positive class, the ordered
	// pairs the engine misses at its defaults: never proposed by the
	// index, or proposed but scored under the thresholds.
	NotCandidate, LowScore [len(classes)]int
	// Ssdeep and TLSH sweep the peers' thresholds on extracted text;
	// SsdeepRaw and TLSHRaw on the raw files.
	Ssdeep, TLSH, SsdeepRaw, TLSHRaw []ThresholdRow
	// SsdeepBest and TLSHBest are the peers' rows with the best
	// near-duplicate recall at a false-alarm share of at most 1 %.
	SsdeepBest, TLSHBest ThresholdRow
	// TLSHUnhashed counts the extracted texts tlsh could not hash.
	TLSHUnhashed int
	// Relations compare the corpus's labels with the truth.
	Relations []RelationRow
	// Quoting splits an e-mail corpus's pairs by quoting (engine at the
	// defaults); nil for other corpora.
	Quoting []QuotingRow
	// DocPairs are the Debian manuals' cross-format and chapter-in-book
	// pairs; nil for other corpora.
	DocPairs []DocPairRow
	// Durations of the stages.
	TruthTime, EngineTime, PeerTime time.Duration
}

// Goal is the target at the default thresholds.
type Goal struct {
	Exact, Near, Contained float64 // minimum recalls
	FalseAlarms            float64 // maximum false-alarm share
}

// DefaultGoal is the goal of issue 3.
var DefaultGoal = Goal{Exact: 1, Near: 0.97, Contained: 0.95, FalseAlarms: 0.01}

// Meets reports whether c meets g.
func (g Goal) Meets(c Counts) bool {
	return c.Recall(Exact) >= g.Exact && c.Recall(Near) >= g.Near &&
		c.Recall(Contained) >= g.Contained && c.FalseAlarmShare() <= g.FalseAlarms
}

// engineGrid are the engine thresholds swept.
func engineGrid() []index.Thresholds {
	var out []index.Thresholds
	for _, c := range []float64{0.6, 0.7, 0.8, 0.9} {
		for _, r := range []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.8} {
			out = append(out, index.Thresholds{Scope: index.Scope{Resemblance: r, Containment: c}, Hamming: -1})
		}
	}
	return out
}

var (
	ssdeepGrid = []int{1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	tlshGrid   = []int{0, 10, 20, 30, 40, 50, 70, 100, 150, 200, 300}
)

// usable returns the documents with text.
func usable(c *Corpus) (docs []*Document, failed []string) {
	for i := range c.Docs {
		d := &c.Docs[i]
		if d.Err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", d.Name, d.Err))
			continue
		}
		docs = append(docs, d)
	}
	return docs, failed
}

// CorpusTruth computes the truth table of documents.
func CorpusTruth(docs []*Document) (*Truth, error) {
	sets := make([][]uint64, len(docs))
	hashes := make([][32]byte, len(docs))
	for i, d := range docs {
		sets[i] = WordShingles(d.Truth, ShingleWords)
		hashes[i] = WordsHash(d.Truth)
	}
	return NewTruth(sets, hashes)
}

// Prepared is a corpus with its documents' truth table.
type Prepared struct {
	Corpus *Corpus
	// Docs are the documents with text, by position in Truth.
	Docs []*Document
	// Failed lists the documents without text and why.
	Failed []string
	Truth  *Truth
	Tally  *Tally
	// TruthTime is how long the truth table took.
	TruthTime time.Duration
}

// Prepare computes the truth table of a corpus's documents with text.
func Prepare(c *Corpus) (*Prepared, error) {
	start := time.Now()
	docs, failed := usable(c)
	truth, err := CorpusTruth(docs)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", c.Name, err)
	}
	return &Prepared{Corpus: c, Docs: docs, Failed: failed, Truth: truth, Tally: NewTally(truth), TruthTime: time.Since(start)}, nil
}

func (p *Prepared) texts() (names []string, texts, norms [][]byte) {
	for _, d := range p.Docs {
		names = append(names, d.Name)
		texts = append(texts, d.Text)
		norms = append(norms, d.Norm)
	}
	return names, texts, norms
}

// EvaluateCorpus measures the engine with opts, and the peers, on a
// prepared corpus. work is a scratch directory.
func EvaluateCorpus(ctx context.Context, p *Prepared, opts index.Options, work string) (*CorpusResult, error) {
	c, docs, truth, ta := p.Corpus, p.Docs, p.Truth, p.Tally
	res := &CorpusResult{Name: c.Name, Title: c.Title, About: c.About, Docs: len(docs), Failed: p.Failed, TruthTime: p.TruthTime}
	if res.Title == "" {
		res.Title = c.Name
	}
	for _, d := range docs {
		res.Bytes += int64(len(d.Norm))
	}
	n := len(docs)
	res.Pairs = n * (n - 1) / 2
	for k := range classes {
		res.Positives[k] = ta.positives[k] / 2
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if Classify(truth.Get(i, j))&Unrelated != 0 {
				res.Unrelated++
			}
		}
	}

	start := time.Now()
	names, texts, _ := p.texts()
	edir := filepath.Join(work, c.Name, "engine")
	if err := os.MkdirAll(edir, 0o755); err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", c.Name, err)
	}
	scored, err := RunEngine(ctx, edir, opts, names, texts)
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", c.Name, err)
	}
	res.EngineCandidates = len(scored)
	engineAt := func(th index.Thresholds) ThresholdRow {
		return ThresholdRow{
			Label:      fmt.Sprintf("res ≥ %.1f or cont ≥ %.1f", th.Resemblance, th.Containment),
			Thresholds: th,
			Counts:     CountPassing(ta, scored, false, func(s index.Scores) bool { return s.Reported(th) }),
		}
	}
	res.Default = engineAt(opts.Thresholds)
	byPair := make(map[Pair]index.Scores, len(scored))
	for _, s := range scored {
		byPair[s.Pair] = s.Score
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			cl := Classify(truth.Get(i, j))
			s, ok := byPair[Pair{int32(i), int32(j)}]
			if ok && s.Reported(opts.Thresholds) {
				continue
			}
			for k, x := range classes {
				if cl&x == 0 {
					continue
				}
				if ok {
					res.LowScore[k]++
				} else {
					res.NotCandidate[k]++
				}
			}
		}
	}
	for _, th := range engineGrid() {
		res.Engine = append(res.Engine, engineAt(th))
	}
	if c.Quoting {
		reported := make(map[Pair]bool, len(scored))
		for p, s := range byPair {
			if s.Reported(opts.Thresholds) {
				reported[p] = true
			}
		}
		res.Quoting = quotingRows(docs, truth, reported)
	}
	if c.Name == "debian-docs" {
		res.DocPairs = docPairs(docs, truth, byPair, opts.Thresholds)
	}
	res.EngineTime = time.Since(start)

	start = time.Now()
	pdir := filepath.Join(work, c.Name)
	raws := make([][]byte, n)
	exts := make([]string, n)
	txtExt := make([]string, n)
	for i, d := range docs {
		raw, err := fs.ReadFile(c.FS, d.Name)
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", c.Name, err)
		}
		raws[i], exts[i], txtExt[i] = raw, filepath.Ext(d.Name), ".txt"
	}
	if err := writeFiles(filepath.Join(pdir, "text"), texts, txtExt); err != nil {
		return nil, err
	}
	if err := writeFiles(filepath.Join(pdir, "raw"), raws, exts); err != nil {
		return nil, err
	}
	var ssText, tlText []Scored[int]
	for _, v := range []struct {
		sub      string
		ss, tl   *[]ThresholdRow
		ssS, tlS *[]Scored[int]
	}{
		{"text", &res.Ssdeep, &res.TLSH, &ssText, &tlText},
		{"raw", &res.SsdeepRaw, &res.TLSHRaw, nil, nil},
	} {
		ss, err := Ssdeep(ctx, filepath.Join(pdir, v.sub))
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", c.Name, err)
		}
		tl, unhashed, err := TLSH(ctx, filepath.Join(pdir, v.sub))
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", c.Name, err)
		}
		// tlsh -xref lists every pair (six million for mail-usrp); those
		// beyond the grid's largest distance pass no threshold.
		tl = slices.DeleteFunc(tl, func(p Scored[int]) bool { return p.Score > tlshGrid[len(tlshGrid)-1] })
		if err := errors.Join(checkPairs(SsdeepBin, ss, n), checkPairs(TLSHBin, tl, n)); err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", c.Name, err)
		}
		if v.sub == "text" {
			res.TLSHUnhashed = unhashed
		}
		for _, t := range ssdeepGrid {
			*v.ss = append(*v.ss, ThresholdRow{Label: fmt.Sprintf("score ≥ %d", t), Value: t,
				Counts: CountPassing(ta, ss, true, func(s int) bool { return s >= t })})
		}
		for _, t := range tlshGrid {
			*v.tl = append(*v.tl, ThresholdRow{Label: fmt.Sprintf("distance ≤ %d", t), Value: t,
				Counts: CountPassing(ta, tl, true, func(d int) bool { return d <= t })})
		}
		if v.ssS != nil {
			*v.ssS, *v.tlS = ss, tl
		}
	}
	res.SsdeepBest = best(res.Ssdeep)
	res.TLSHBest = best(res.TLSH)
	res.PeerTime = time.Since(start)

	res.Relations = relationRows(c, docs, truth, scored, opts.Thresholds,
		ssText, res.SsdeepBest.Value, tlText, res.TLSHBest.Value)
	return res, nil
}

// best returns the row with the highest near-duplicate recall among those
// with at most 1 % false alarms (ties: the highest contained recall), or
// the first row when none qualifies.
func best(rows []ThresholdRow) ThresholdRow {
	var out ThresholdRow
	found := false
	for _, r := range rows {
		if r.FalseAlarmShare() > 0.01 {
			continue
		}
		if !found || r.Recall(Near) > out.Recall(Near) ||
			(r.Recall(Near) == out.Recall(Near) && r.Recall(Contained) > out.Recall(Contained)) {
			out, found = r, true
		}
	}
	if !found && len(rows) > 0 {
		out = rows[0]
	}
	return out
}

func relationRows(c *Corpus, docs []*Document, truth *Truth, engine []Scored[index.Scores], th index.Thresholds,
	ss []Scored[int], ssMin int, tl []Scored[int], tlMax int) []RelationRow {
	eng := map[Pair]bool{}
	for _, s := range engine {
		if s.Score.Reported(th) {
			eng[s.Pair] = true
		}
	}
	peer := func(ps []Scored[int], pass func(int) bool) map[Pair]bool {
		m := map[Pair]bool{}
		for _, p := range ps {
			if pass(p.Score) {
				m[p.Pair] = true
			}
		}
		return m
	}
	ssm := peer(ss, func(s int) bool { return s >= ssMin })
	tlm := peer(tl, func(d int) bool { return d <= tlMax })
	rows := map[string]*RelationRow{}
	type acc struct{ res, eng, ss, tl float64 }
	sums := map[string]*acc{}
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			rel := c.Relate(docs[i], docs[j])
			if rel == "" {
				continue
			}
			r := rows[rel]
			if r == nil {
				r = &RelationRow{Relation: rel}
				rows[rel] = r
				sums[rel] = &acc{}
			}
			s := truth.Get(i, j)
			cl := Classify(s)
			r.Pairs++
			a := sums[rel]
			a.res += s.Resemblance
			if cl&(Near|Exact) != 0 {
				r.Near++
			}
			if cl&(Contained|Exact) != 0 {
				r.Contained++
			}
			if cl&Unrelated != 0 {
				r.Unrelated++
			}
			p, q := Pair{int32(i), int32(j)}, Pair{int32(j), int32(i)}
			for _, x := range []bool{eng[p], eng[q]} {
				if x {
					a.eng += 0.5
				}
			}
			if ssm[p] {
				a.ss++
			}
			if tlm[p] {
				a.tl++
			}
		}
	}
	var out []RelationRow
	for rel, r := range rows {
		a := sums[rel]
		n := float64(r.Pairs)
		r.MeanResemblance, r.Engine, r.Ssdeep, r.TLSH = a.res/n, a.eng/n, a.ss/n, a.tl/n
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b RelationRow) int { return relOrder(a.Relation) - relOrder(b.Relation) })
	return out
}

func relOrder(r string) int {
	order := []string{RelSameBytes, RelSameText, RelLayout, RelFormats, RelVariant, RelFamily, RelChapter,
		RelScenario, RelHeader, RelSameSource, RelSameThread, RelOtherLang, RelOtherFamily, RelOtherLic,
		RelMailCopy, RelMailQuoted, RelMailEdited, RelMailPartial, RelMailThread, RelMailOther}
	if i := slices.Index(order, r); i >= 0 {
		return i
	}
	return len(order)
}
