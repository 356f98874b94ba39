package eval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// Table is a Markdown table of the report.
type Table struct {
	// Key identifies the table in its result ("windows", "sampling").
	Key    string
	Title  string
	Note   string
	Header []string
	Rows   [][]string
}

// SynthOptions configure the synthetic experiments.
type SynthOptions struct {
	// Seed makes the generated variants reproducible.
	Seed uint64
	// Counts are the numbers of edits (default 1…50).
	Counts []int
	// Windows are the shingle windows of the window experiment (default
	// 5, 10, 20, 50, 100 bytes).
	Windows []int
	// Boilerplate is appended to originals in the boilerplate experiment.
	Boilerplate []byte
	// Quick samples fewer parameters.
	Quick bool
	// Work is a scratch directory for the detection experiment, which
	// runs a real index and the peer tools; none when empty.
	Work string
	// SsdeepMin and TLSHMax are the peers' thresholds in the detection
	// experiment.
	SsdeepMin, TLSHMax int
}

// SynthResult holds the figures and tables of the synthetic experiments.
type SynthResult struct {
	Originals   int
	MedianBytes int
	// Chosen are the algorithms at their chosen parameters.
	Chosen  []Spec
	Figures []Figure
	Tables  []Table
}

// synth runs experiments over a set of originals.
type synth struct {
	ctx    context.Context
	origs  [][]byte
	shings [][]uint64
	o      SynthOptions
}

// measured is one variant compared with its original.
type measured struct {
	orig  int
	edit  Edit
	truth Similarity
	est   []Estimate
}

// measure generates the variants gen describes and compares each with its
// original under every algorithm.
func (s *synth) measure(algos []Algorithm, gen GenOptions) ([]measured, error) {
	sigs := make([][]Signature, len(algos))
	for k, a := range algos {
		sigs[k] = make([]Signature, len(s.origs))
		for i, t := range s.origs {
			sigs[k][i] = a.Sign(t)
		}
	}
	gen.Seed = s.o.Seed
	var out []measured
	err := Generate(s.origs, gen, func(v Variant) error {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		vs := WordShingles(v.Text, ShingleWords)
		ov := s.shings[v.Original]
		m := measured{orig: v.Original, edit: v.Edit, truth: similarity(len(vs), len(ov), intersectSorted(vs, ov))}
		for k, a := range algos {
			m.est = append(m.est, a.Compare(a.Sign(v.Text), sigs[k][v.Original]))
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// meanBy averages f over measurements grouped by key, returning the keys
// in ascending order.
func meanBy(ms []measured, keep func(measured) bool, key func(measured) float64, f func(measured) float64) (xs, ys []float64) {
	sum := map[float64]float64{}
	n := map[float64]int{}
	for _, m := range ms {
		if !keep(m) {
			continue
		}
		k := key(m)
		sum[k] += f(m)
		n[k]++
	}
	for k := range sum {
		xs = append(xs, k)
	}
	slices.Sort(xs)
	for _, k := range xs {
		ys = append(ys, sum[k]/float64(n[k]))
	}
	return xs, ys
}

func isEdit(kind EditKind, sp Spread) func(measured) bool {
	return func(m measured) bool { return m.edit.Kind == kind && m.edit.Spread == sp }
}

func byCount(m measured) float64 { return float64(m.edit.Count) }

var editModes = []struct {
	title string
	kind  EditKind
	sp    Spread
}{
	{"word inserted, random places", Insert, Random},
	{"word inserted, evenly spread", Insert, Uniform},
	{"word removed, random places", Remove, Random},
	{"word removed, evenly spread", Remove, Uniform},
}

// Table returns the table with key, and whether there is one.
func (r *SynthResult) Table(key string) (Table, bool) {
	for _, t := range r.Tables {
		if t.Key == key {
			return t, true
		}
	}
	return Table{}, false
}

// RunSynthetic runs the experiments that regenerate the seed figures on
// originals (normalised texts).
func RunSynthetic(ctx context.Context, origs [][]byte, o SynthOptions) (*SynthResult, error) {
	if len(origs) < 2 {
		return nil, fmt.Errorf("synthetic experiments: need at least two originals, have %d", len(origs))
	}
	if o.Counts == nil {
		for i := 1; i <= 50; i++ {
			o.Counts = append(o.Counts, i)
		}
	}
	if o.Windows == nil {
		o.Windows = []int{5, 10, 20, 50, 100}
	}
	s := &synth{ctx: ctx, origs: origs, o: o}
	sizes := make([]int, len(origs))
	for i, t := range origs {
		s.shings = append(s.shings, WordShingles(t, ShingleWords))
		sizes[i] = len(t)
	}
	slices.Sort(sizes)
	res := &SynthResult{Originals: len(origs), MedianBytes: sizes[len(sizes)/2]}
	for _, step := range []func(*SynthResult) error{s.windows, s.distinct, s.sampling, s.chosen, s.detection} {
		if err := step(res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// windows: average similarity against the number of edits, per window
// (the seed study's Mod-100 figure), with the true word 5-gram
// resemblance for reference.
func (s *synth) windows(res *SynthResult) error {
	var algos []Algorithm
	for _, w := range s.o.Windows {
		a, err := New(Spec{Kind: ModN, W: w, N: 100})
		if err != nil {
			return err
		}
		algos = append(algos, a)
	}
	ms, err := s.measure(algos, GenOptions{Kinds: []EditKind{Insert, Remove}, Counts: s.o.Counts})
	if err != nil {
		return fmt.Errorf("window experiment: %w", err)
	}
	fig := Figure{File: "windows.png", Caption: "Average Mod-100 resemblance between an original and its edited copy, against the number of edits, for shingle windows of 5 to 100 bytes; dashed: the true word 5-gram resemblance."}
	tab := Table{Key: "windows", Title: "Mean Mod-100 resemblance after 50 edits, by window",
		Header: []string{"window (bytes)"}}
	for _, m := range editModes {
		tab.Header = append(tab.Header, m.title)
	}
	last := float64(slices.Max(s.o.Counts))
	rows := make([][]string, len(algos)+1)
	for k, w := range s.o.Windows {
		rows[k] = []string{fmt.Sprint(w)}
	}
	rows[len(algos)] = []string{"truth (word 5-grams)"}
	for _, mode := range editModes {
		pn := Panel{Title: mode.title, XLabel: "number of edits", YLabel: "mean resemblance", YMin: 0, YMax: 1.02, Legend: "bl"}
		for k, w := range s.o.Windows {
			xs, ys := meanBy(ms, isEdit(mode.kind, mode.sp), byCount, func(m measured) float64 { return m.est[k].Resemblance })
			pn.Series = append(pn.Series, Series{Name: fmt.Sprintf("w = %d", w), X: xs, Y: ys})
			rows[k] = append(rows[k], f2(at(xs, ys, last)))
		}
		xs, ys := meanBy(ms, isEdit(mode.kind, mode.sp), byCount, func(m measured) float64 { return m.truth.Resemblance })
		pn.Series = append(pn.Series, Series{Name: "truth", X: xs, Y: ys, Reference: true})
		rows[len(algos)] = append(rows[len(algos)], f2(at(xs, ys, last)))
		fig.Panels = append(fig.Panels, pn)
	}
	tab.Rows = rows
	res.Figures = append(res.Figures, fig)
	res.Tables = append(res.Tables, tab)
	return nil
}

// at returns the y of x, or NaN.
func at(xs, ys []float64, x float64) float64 {
	if i := slices.Index(xs, x); i >= 0 {
		return ys[i]
	}
	return math.NaN()
}

func f2(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*v)
}

// distinct: the CDF of estimated resemblance among truly distinct
// originals, per window.
func (s *synth) distinct(res *SynthResult) error {
	var pairs [][2]int
	for i := range s.origs {
		for j := i + 1; j < len(s.origs); j++ {
			a, b := s.shings[i], s.shings[j]
			if Classify(similarity(len(a), len(b), intersectSorted(a, b)))&Unrelated != 0 {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	pn := Panel{Title: fmt.Sprintf("%d pairs of distinct documents", len(pairs)), XLabel: "Mod-100 resemblance (log scale)", YLabel: "share of pairs at or below", YMin: 0, YMax: 1.02, LogX: true, Legend: "br"}
	tab := Table{Key: "distinct", Title: "Distinct documents reported as similar, by window",
		Note:   fmt.Sprintf("Pairs of originals whose true word 5-gram resemblance and containments are under %.1f (%d pairs); Mod-100 estimates.", UnrelatedBelow, len(pairs)),
		Header: []string{"window (bytes)", "pairs ≥ 0.2", "pairs ≥ 0.5", "mean", "max containment ≥ 0.8"}}
	for _, w := range s.o.Windows {
		a, err := New(Spec{Kind: ModN, W: w, N: 100})
		if err != nil {
			return err
		}
		sigs := make([]Signature, len(s.origs))
		for i, t := range s.origs {
			sigs[i] = a.Sign(t)
		}
		var vals []float64
		above2, above5, cont8 := 0, 0, 0
		sum := 0.0
		for _, p := range pairs {
			e := a.Compare(sigs[p[0]], sigs[p[1]])
			vals = append(vals, e.Resemblance)
			sum += e.Resemblance
			if e.Resemblance >= 0.2 {
				above2++
			}
			if e.Resemblance >= 0.5 {
				above5++
			}
			if max(e.ContainmentAB, e.ContainmentBA) >= 0.8 {
				cont8++
			}
		}
		slices.Sort(vals)
		var xs, ys []float64
		for i, v := range vals {
			// The log axis cannot show 0: start the curve at 0.001.
			xs = append(xs, max(v, 0.001))
			ys = append(ys, float64(i+1)/float64(len(vals)))
		}
		pn.Series = append(pn.Series, Series{Name: fmt.Sprintf("w = %d", w), X: xs, Y: ys})
		n := float64(len(pairs))
		tab.Rows = append(tab.Rows, []string{fmt.Sprint(w), pct(float64(above2) / n), pct(float64(above5) / n), f2(sum / n), pct(float64(cont8) / n)})
	}
	res.Figures = append(res.Figures, Figure{File: "distinct.png", Cols: 1, Panels: []Panel{pn},
		Caption: "Cumulative distribution of the Mod-100 resemblance of pairs of truly distinct documents, per window: short windows make unrelated texts look alike."})
	res.Tables = append(res.Tables, tab)
	return nil
}

// sampling: the error of each sampling algorithm against the exact
// resemblance of its own shingles, by signature size.
func (s *synth) sampling(res *SynthResult) error {
	const w = 20
	type family struct {
		kind Kind
		ns   []int
	}
	fams := []family{
		{ModN, []int{1000, 500, 200, 100, 50, 20}},
		{MinN, []int{10, 25, 50, 100, 200, 400}},
		{SketchN, []int{10, 25, 50, 100, 200}},
		{WinnowN, []int{400, 200, 100, 50, 20}},
		{BSWN, []int{1000, 500, 200, 100, 50, 20}},
	}
	if s.o.Quick {
		for i := range fams {
			fams[i].ns = fams[i].ns[len(fams[i].ns)/2:]
		}
	}
	exact, err := New(Spec{Kind: ModN, W: w, N: 1})
	if err != nil {
		return err
	}
	algos := []Algorithm{exact}
	var specs []Spec
	for _, f := range fams {
		for _, n := range f.ns {
			sp := Spec{Kind: f.kind, W: w, N: n}
			a, err := New(sp)
			if err != nil {
				return err
			}
			algos = append(algos, a)
			specs = append(specs, sp)
		}
	}
	eng, err := New(Spec{Kind: Engine, W: w, N: 16})
	if err != nil {
		return err
	}
	algos = append(algos, eng)
	specs = append(specs, Spec{Kind: Engine, W: w, N: 16})
	counts := []int{10, 25, 50}
	ms, err := s.measure(algos, GenOptions{Kinds: []EditKind{Insert, Remove}, Counts: counts})
	if err != nil {
		return fmt.Errorf("sampling experiment: %w", err)
	}
	// Mean signature size of the originals.
	entries := make([]float64, len(algos))
	for k, a := range algos {
		for _, t := range s.origs {
			entries[k] += float64(a.Sign(t).Entries())
		}
		entries[k] /= float64(len(s.origs))
	}
	rmse := func(k int, keep func(measured) bool) (float64, float64) {
		var se, worst float64
		n := 0
		for _, m := range ms {
			if !keep(m) {
				continue
			}
			d := m.est[k].Resemblance - m.est[0].Resemblance
			se += d * d
			worst = max(worst, math.Abs(d))
			n++
		}
		return math.Sqrt(se / float64(max(n, 1))), worst
	}
	short := s.shortOriginals()
	all := func(measured) bool { return true }
	isShort := func(m measured) bool { return short[m.orig] }
	pn := Panel{Title: "Sampling error at w = 20", XLabel: "mean signature entries per document (log scale)", YLabel: "RMSE of resemblance vs all shingles", LogX: true, Legend: "tr", YMin: 0}
	tab := Table{Key: "sampling", Title: "Sampling error by algorithm and n (w = 20 bytes)",
		Note: fmt.Sprintf("Root-mean-square and worst error of the estimated resemblance against the exact resemblance of all 20-byte shingles, over %d edited copies (words inserted or removed %v times, random or evenly spread). Short documents: the quarter of originals with the shortest texts. The engine row is simdex's one-permutation MinHash with %d slots.",
			len(ms), counts, 128),
		Header: []string{"algorithm", "entries (mean)", "RMSE", "worst error", "RMSE, short documents"}}
	k := 1
	for _, f := range fams {
		var xs, ys []float64
		for range f.ns {
			r, worst := rmse(k, all)
			rs, _ := rmse(k, isShort)
			xs = append(xs, entries[k])
			ys = append(ys, r)
			tab.Rows = append(tab.Rows, []string{specs[k-1].String(), fmt.Sprintf("%.0f", entries[k]), fmt.Sprintf("%.3f", r), fmt.Sprintf("%.3f", worst), fmt.Sprintf("%.3f", rs)})
			k++
		}
		pn.Series = append(pn.Series, Series{Name: string(f.kind) + "-n", X: xs, Y: ys})
	}
	r, worst := rmse(k, all)
	rs, _ := rmse(k, isShort)
	tab.Rows = append(tab.Rows, []string{"simdex MinHash (K 128)", "128", fmt.Sprintf("%.3f", r), fmt.Sprintf("%.3f", worst), fmt.Sprintf("%.3f", rs)})
	pn.Series = append(pn.Series, Series{Name: "simdex (K 128)", X: []float64{128}, Y: []float64{r}, Points: true})
	res.Figures = append(res.Figures, Figure{File: "sampling.png", Cols: 1, Panels: []Panel{pn},
		Caption: "Error of each sampling algorithm's resemblance against the exact resemblance of all its 20-byte shingles, by signature size (log scale)."})
	res.Tables = append(res.Tables, tab)
	return nil
}

// shortOriginals marks the quarter of originals with the shortest texts.
func (s *synth) shortOriginals() map[int]bool {
	idx := make([]int, len(s.origs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return len(s.origs[a]) - len(s.origs[b]) })
	out := map[int]bool{}
	for _, i := range idx[:max(1, len(idx)/4)] {
		out[i] = true
	}
	return out
}

// ChosenSpecs returns the algorithms at the parameters the seed study
// recommends for documents of the given typical size: a 20-byte window
// and about 100 signature entries.
func ChosenSpecs(typical int) []Spec {
	n := max(1, typical/100)
	return []Spec{
		{Kind: ModN, W: 20, N: n},
		{Kind: MinN, W: 20, N: 100},
		{Kind: SketchN, W: 20, N: 100},
		{Kind: WinnowN, W: 20, N: max(1, typical/50)},
		{Kind: BSWN, W: 20, N: n},
		{Kind: Chunks, N: 256},
		{Kind: SimHash, W: 20},
		{Kind: Engine, W: 20, N: 16},
	}
}

// chosen: the algorithms at their chosen parameters against edits, spans,
// prefixes and boilerplate.
func (s *synth) chosen(res *SynthResult) error {
	res.Chosen = ChosenSpecs(res.MedianBytes)
	algos := make([]Algorithm, len(res.Chosen))
	signTime := make([]time.Duration, len(res.Chosen))
	var total int
	for _, t := range s.origs {
		total += len(t)
	}
	for k, sp := range res.Chosen {
		a, err := New(sp)
		if err != nil {
			return err
		}
		algos[k] = a
		start := time.Now()
		for _, t := range s.origs {
			a.Sign(t)
		}
		signTime[k] = time.Since(start)
	}
	gen := GenOptions{Counts: s.o.Counts, Boilerplate: s.o.Boilerplate,
		Kinds: []EditKind{Insert, Remove, Augment, Reduce, Prefix}}
	ms, err := s.measure(algos, gen)
	if err != nil {
		return fmt.Errorf("chosen-parameter experiment: %w", err)
	}
	resOf := func(k int) func(measured) float64 {
		return func(m measured) float64 { return m.est[k].Resemblance }
	}
	truthRes := func(m measured) float64 { return m.truth.Resemblance }
	// Figure: similarity against edits.
	fig := Figure{File: "algorithms.png", Caption: "The algorithms at their chosen parameters (20-byte windows, about 100 entries for a typical document): mean resemblance against the number of edits; dashed: the true word 5-gram resemblance."}
	for _, mode := range []int{0, 3} {
		m := editModes[mode]
		pn := Panel{Title: m.title, XLabel: "number of edits", YLabel: "mean resemblance", YMin: 0, YMax: 1.02, Legend: "bl"}
		for k, a := range algos {
			xs, ys := meanBy(ms, isEdit(m.kind, m.sp), byCount, resOf(k))
			pn.Series = append(pn.Series, Series{Name: a.Name(), X: xs, Y: ys})
		}
		xs, ys := meanBy(ms, isEdit(m.kind, m.sp), byCount, truthRes)
		pn.Series = append(pn.Series, Series{Name: "truth", X: xs, Y: ys, Reference: true})
		fig.Panels = append(fig.Panels, pn)
	}
	res.Figures = append(res.Figures, fig)

	// Figure: resemblance against containment (prefixes).
	isPrefix := func(m measured) bool { return m.edit.Kind == Prefix }
	share := func(m measured) float64 { return float64(m.edit.Section) / float64(m.edit.Sections) }
	cfig := Figure{File: "containment.png", Caption: "A document made of the first k of 10 sections of another: estimated containment of the part in the whole (left) and resemblance (right). Only algorithms that keep a sample proportional to the text (Mod-n, Winnow-n, BSW-n, chunks, simdex) see the containment; Min-n and Sketch-n estimate it from resemblance and sizes; SimHash cannot."}
	cp := Panel{Title: "containment of the first k/10 in the whole", XLabel: "share of the original kept", YLabel: "mean containment estimate", YMin: 0, YMax: 1.02, Legend: "br"}
	rp := Panel{Title: "resemblance of the first k/10 and the whole", XLabel: "share of the original kept", YLabel: "mean resemblance", YMin: 0, YMax: 1.02, Legend: "tl"}
	for k, a := range algos {
		xs, ys := meanBy(ms, isPrefix, share, resOf(k))
		rp.Series = append(rp.Series, Series{Name: a.Name(), X: xs, Y: ys})
		if res.Chosen[k].Kind == SimHash {
			continue
		}
		xs, ys = meanBy(ms, isPrefix, share, func(m measured) float64 { return m.est[k].ContainmentAB })
		cp.Series = append(cp.Series, Series{Name: a.Name(), X: xs, Y: ys})
	}
	xs, ys := meanBy(ms, isPrefix, share, func(m measured) float64 { return m.truth.ContainmentAB })
	cp.Series = append(cp.Series, Series{Name: "truth", X: xs, Y: ys, Reference: true})
	xs, ys = meanBy(ms, isPrefix, share, truthRes)
	rp.Series = append(rp.Series, Series{Name: "truth", X: xs, Y: ys, Reference: true})
	cfig.Panels = []Panel{cp, rp}
	res.Figures = append(res.Figures, cfig)

	// Figure: spans added or removed (SI v2), and SimHash distance.
	sfig := Figure{File: "spans.png", Caption: "A random span of up to 80 % of the file added (unrelated text) or removed, as in the Similarity Index v2 study: mean resemblance against the span (top), and the SimHash distance of every copy against its true resemblance (bottom; SI v2 calls ≤ 6 bits similar)."}
	frac := func(m measured) float64 { return m.edit.Fraction }
	for _, kind := range []EditKind{Augment, Reduce} {
		pn := Panel{Title: fmt.Sprintf("span %s", map[EditKind]string{Augment: "added", Reduce: "removed"}[kind]), XLabel: "span, share of the original", YLabel: "mean resemblance", YMin: 0, YMax: 1.02, Legend: "bl"}
		keep := func(m measured) bool { return m.edit.Kind == kind }
		for k, a := range algos {
			xs, ys := meanBy(ms, keep, frac, resOf(k))
			pn.Series = append(pn.Series, Series{Name: a.Name(), X: xs, Y: ys})
		}
		xs, ys := meanBy(ms, keep, frac, truthRes)
		pn.Series = append(pn.Series, Series{Name: "truth", X: xs, Y: ys, Reference: true})
		sfig.Panels = append(sfig.Panels, pn)
	}
	simK, engK := slices.IndexFunc(res.Chosen, func(sp Spec) bool { return sp.Kind == SimHash }), slices.IndexFunc(res.Chosen, func(sp Spec) bool { return sp.Kind == Engine })
	for _, kind := range []EditKind{Augment, Reduce} {
		pn := Panel{Title: fmt.Sprintf("SimHash distance, span %s", map[EditKind]string{Augment: "added", Reduce: "removed"}[kind]), XLabel: "true resemblance (word 5-grams)", YLabel: "Hamming distance (bits)", Legend: "tr"}
		for _, k := range []int{simK, engK} {
			var xs, ys []float64
			for _, m := range ms {
				if m.edit.Kind == kind {
					xs = append(xs, m.truth.Resemblance)
					ys = append(ys, float64(m.est[k].Hamming))
				}
			}
			name := algos[k].Name()
			if k == engK {
				name = "simdex SimHash (3-word features)"
			}
			pn.Series = append(pn.Series, Series{Name: name, X: xs, Y: ys, Points: true})
		}
		pn.Series = append(pn.Series, Series{Name: "6 bits", X: []float64{0, 1}, Y: []float64{6, 6}, Reference: true})
		sfig.Panels = append(sfig.Panels, pn)
	}
	res.Figures = append(res.Figures, sfig)

	// Table: the algorithms side by side.
	tab := Table{Key: "chosen", Title: "The algorithms at their chosen parameters",
		Note: fmt.Sprintf("Mean estimated resemblance (containment for prefixes) over %d originals (median %d bytes); the truth row is the word 5-gram value. Sign time: all originals, one core, indicative only (see the benchmarks).",
			len(s.origs), res.MedianBytes),
		Header: []string{"algorithm", "ins. 10 random", "ins. 50 random", "rem. 10 even", "rem. 50 even", "span +40 %", "span −40 %", "prefix 5/10 cont.", "sign MB/s"}}
	cells := []struct {
		keep func(measured) bool
		cont bool
	}{
		{func(m measured) bool { return m.edit.Kind == Insert && m.edit.Spread == Random && m.edit.Count == 10 }, false},
		{func(m measured) bool { return m.edit.Kind == Insert && m.edit.Spread == Random && m.edit.Count == 50 }, false},
		{func(m measured) bool { return m.edit.Kind == Remove && m.edit.Spread == Uniform && m.edit.Count == 10 }, false},
		{func(m measured) bool { return m.edit.Kind == Remove && m.edit.Spread == Uniform && m.edit.Count == 50 }, false},
		{func(m measured) bool { return m.edit.Kind == Augment && m.edit.Fraction == 0.4 }, false},
		{func(m measured) bool { return m.edit.Kind == Reduce && m.edit.Fraction == 0.4 }, false},
		{func(m measured) bool { return m.edit.Kind == Prefix && m.edit.Section*2 == m.edit.Sections }, true},
	}
	mean := func(keep func(measured) bool, f func(measured) float64) float64 {
		sum, n := 0.0, 0
		for _, m := range ms {
			if keep(m) {
				sum += f(m)
				n++
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return sum / float64(n)
	}
	for k, a := range algos {
		row := []string{a.Name()}
		for _, c := range cells {
			f := resOf(k)
			if c.cont {
				if res.Chosen[k].Kind == SimHash {
					row = append(row, "–")
					continue
				}
				f = func(m measured) float64 { return m.est[k].ContainmentAB }
			}
			row = append(row, f2(mean(c.keep, f)))
		}
		row = append(row, fmt.Sprintf("%.0f", float64(total)/1e6/signTime[k].Seconds()))
		tab.Rows = append(tab.Rows, row)
	}
	row := []string{"truth (word 5-grams)"}
	for _, c := range cells {
		f := truthRes
		if c.cont {
			f = func(m measured) float64 { return m.truth.ContainmentAB }
		}
		row = append(row, f2(mean(c.keep, f)))
	}
	tab.Rows = append(tab.Rows, append(row, "–"))
	res.Tables = append(res.Tables, tab)
	return s.boilerplate(res, algos)
}

// boilerplate: pairs of unrelated originals that end with the same
// boilerplate, against the boilerplate's share.
func (s *synth) boilerplate(res *SynthResult, algos []Algorithm) error {
	if len(s.o.Boilerplate) == 0 {
		return nil
	}
	shares := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}
	gen := GenOptions{Seed: s.o.Seed, Kinds: []EditKind{Boilerplate}, Boilerplate: s.o.Boilerplate, BoilerplateShares: shares}
	// variant[share][original]
	texts := map[float64]map[int][]byte{}
	err := Generate(s.origs, gen, func(v Variant) error {
		if texts[v.Edit.Fraction] == nil {
			texts[v.Edit.Fraction] = map[int][]byte{}
		}
		texts[v.Edit.Fraction][v.Original] = v.Text
		return nil
	})
	if err != nil {
		return fmt.Errorf("boilerplate experiment: %w", err)
	}
	rp := Panel{Title: "resemblance", XLabel: "boilerplate share of each file", YLabel: "mean resemblance", YMin: 0, YMax: 1.02, Legend: "tl"}
	cp := Panel{Title: "containment (larger direction)", XLabel: "boilerplate share of each file", YLabel: "mean containment", YMin: 0, YMax: 1.02, Legend: "tl"}
	type acc struct{ res, cont []float64 }
	accs := make([]acc, len(algos)+1)
	for _, sh := range shares {
		byOrig := texts[sh]
		var sums = make([][2]float64, len(algos)+1)
		n := 0
		for i := range s.origs {
			j := (i + 1) % len(s.origs)
			a, b := byOrig[i], byOrig[j]
			if a == nil || b == nil {
				continue
			}
			t := Compare(a, b)
			sums[len(algos)][0] += t.Resemblance
			sums[len(algos)][1] += max(t.ContainmentAB, t.ContainmentBA)
			for k, al := range algos {
				e := al.Compare(al.Sign(a), al.Sign(b))
				sums[k][0] += e.Resemblance
				sums[k][1] += max(e.ContainmentAB, e.ContainmentBA)
			}
			n++
		}
		for k := range accs {
			accs[k].res = append(accs[k].res, sums[k][0]/float64(max(n, 1)))
			accs[k].cont = append(accs[k].cont, sums[k][1]/float64(max(n, 1)))
		}
	}
	for k, a := range algos {
		rp.Series = append(rp.Series, Series{Name: a.Name(), X: shares, Y: accs[k].res})
		if res.Chosen[k].Kind != SimHash {
			cp.Series = append(cp.Series, Series{Name: a.Name(), X: shares, Y: accs[k].cont})
		}
	}
	t := accs[len(algos)]
	rp.Series = append(rp.Series, Series{Name: "truth", X: shares, Y: t.res, Reference: true})
	cp.Series = append(cp.Series, Series{Name: "truth", X: shares, Y: t.cont, Reference: true})
	res.Figures = append(res.Figures, Figure{File: "boilerplate.png", Panels: []Panel{rp, cp},
		Caption: "Unrelated documents ending with the same boilerplate: estimated similarity against the boilerplate's share of each file. Shared boilerplate is shared text; estimators should follow the truth, and the index's template and ubiquitous-chunk rules (not shown) decide what to ignore."})
	return nil
}
