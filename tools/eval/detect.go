package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/simdex/simdex/index"
)

// detection: the share of edited copies each method finds, through a real
// index for simdex and the real tools for the peers, one group (an
// original and its copies) at a time.
func (s *synth) detection(res *SynthResult) error {
	if s.o.Work == "" {
		return nil
	}
	opts := index.DefaultOptions()
	type key struct {
		kind EditKind
		x    float64
	}
	type acc struct{ n, truth, eng, emu, ss, tl int }
	accs := map[key]*acc{}
	gen := GenOptions{Seed: s.o.Seed, Counts: s.o.Counts, Kinds: []EditKind{Insert, Remove, Augment, Reduce, Prefix}}
	// One index holds every original and every copy, as a repository
	// holds many families; the peers compare each family apart.
	texts := slices.Clone(s.origs)
	type copyOf struct {
		orig int
		edit Edit
	}
	var copies []copyOf
	err := Generate(s.origs, gen, func(v Variant) error {
		if (v.Edit.Kind == Insert && v.Edit.Spread != Random) || (v.Edit.Kind == Remove && v.Edit.Spread != Uniform) {
			return nil
		}
		texts = append(texts, v.Text)
		copies = append(copies, copyOf{v.Original, v.Edit})
		return nil
	})
	if err != nil {
		return fmt.Errorf("detection experiment: %w", err)
	}
	dir := filepath.Join(s.o.Work, "detect")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("detection experiment: %w", err)
	}
	names := make([]string, len(texts))
	for k := range names {
		names[k] = fmt.Sprintf("t%d", k)
	}
	scored, err := runEngine(s.ctx, dir, opts, names, texts, len(s.origs))
	if err != nil {
		return fmt.Errorf("detection experiment: %w", err)
	}
	found, candidate := map[Pair]bool{}, map[Pair]bool{}
	for _, sc := range scored {
		candidate[sc.Pair] = true
		if sc.Score.Reported(opts.Thresholds) {
			found[sc.Pair] = true
		}
	}
	// The emulated sample-posting lookup (see SampleCandidates) adds the
	// copies sharing half the samples of the smaller text; no sample
	// reaches the frequency cap, as a family is a small part of the index.
	eng := NewEngine(opts.Sketch, opts.Chunk).(engine)
	origSigs := make([]*engineSig, len(s.origs))
	for i, t := range s.origs {
		origSigs[i] = eng.Sign(t).(*engineSig)
	}
	emulated := func(i, t int) bool {
		p := Pair{int32(i), int32(t)}
		if candidate[p] {
			return found[p]
		}
		a, b := origSigs[i], eng.Sign(texts[t]).(*engineSig)
		shared := intersectSorted(a.samples, b.samples)
		if float64(shared) < 0.5*float64(min(len(a.samples), len(b.samples))) {
			return false
		}
		return engineScores(eng, a, b).Reported(opts.Thresholds)
	}
	byOrig := make([][]int, len(s.origs))
	for k, c := range copies {
		byOrig[c.orig] = append(byOrig[c.orig], len(s.origs)+k)
	}
	for i := range s.origs {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		group := [][]byte{s.origs[i]}
		exts := []string{".txt"}
		for _, t := range byOrig[i] {
			group = append(group, texts[t])
			exts = append(exts, ".txt")
		}
		tdir := filepath.Join(dir, fmt.Sprint(i))
		if err := writeFiles(tdir, group, exts); err != nil {
			return err
		}
		ss, err := Ssdeep(s.ctx, tdir)
		if err != nil {
			return fmt.Errorf("detection experiment: %w", err)
		}
		tl, _, err := TLSH(s.ctx, tdir)
		if err != nil {
			return fmt.Errorf("detection experiment: %w", err)
		}
		ssFound, tlFound := map[int32]bool{}, map[int32]bool{}
		for _, p := range ss {
			if p.A == 0 && p.Score >= s.o.SsdeepMin {
				ssFound[p.B] = true
			}
		}
		for _, p := range tl {
			if p.A == 0 && p.Score <= s.o.TLSHMax {
				tlFound[p.B] = true
			}
		}
		ow := s.shings[i]
		for k, t := range byOrig[i] {
			e := copies[t-len(s.origs)].edit
			x := float64(e.Count)
			switch e.Kind {
			case Augment, Reduce:
				x = e.Fraction
			case Prefix:
				x = float64(e.Section) / float64(e.Sections)
			}
			a := accs[key{e.Kind, x}]
			if a == nil {
				a = &acc{}
				accs[key{e.Kind, x}] = a
			}
			vw := WordShingles(texts[t], ShingleWords)
			a.n++
			if Classify(similarity(len(ow), len(vw), intersectSorted(ow, vw)))&(Near|Contained|Exact) != 0 {
				a.truth++
			}
			if found[Pair{int32(i), int32(t)}] {
				a.eng++
			}
			if emulated(i, t) {
				a.emu++
			}
			if ssFound[int32(k+1)] {
				a.ss++
			}
			if tlFound[int32(k+1)] {
				a.tl++
			}
		}
		if err := os.RemoveAll(tdir); err != nil {
			return fmt.Errorf("detection experiment: %w", err)
		}
	}
	fig := Figure{File: "detection.png", Cols: 3, Caption: fmt.Sprintf("Share of edited copies found when asking for the versions of the original: simdex through a real index at its default thresholds, ssdeep (score ≥ %d) and tlsh (distance ≤ %d) at the thresholds they reach on the real corpora with ≤ 1 %% false alarms. Dashed: the share of copies that are truly near-duplicates or contained (true resemblance ≥ 0.8 or containment ≥ 0.9); copies beyond it are found or not at each method's discretion.", s.o.SsdeepMin, s.o.TLSHMax)}
	tab := Table{Key: "detection", Title: "Edited copies found, by kind of edit",
		Note:   fmt.Sprintf("Share of copies found over all originals; truth: share that are near-duplicates or contained. ssdeep score ≥ %d, tlsh distance ≤ %d.", s.o.SsdeepMin, s.o.TLSHMax),
		Header: []string{"edit", "copies", "truly near or contained", "simdex", "simdex + sample postings (emulated)", "ssdeep", "tlsh"}}
	for _, p := range []struct {
		title, xlabel string
		kind          EditKind
	}{
		{"word inserted i times, random places", "i", Insert},
		{"word removed i times, evenly spread", "i", Remove},
		{"span added (unrelated text)", "share of the original", Augment},
		{"span removed", "share of the original", Reduce},
		{"first k of 10 sections", "k/10", Prefix},
	} {
		var xs []float64
		for k := range accs {
			if k.kind == p.kind {
				xs = append(xs, k.x)
			}
		}
		slices.Sort(xs)
		pn := Panel{Title: p.title, XLabel: p.xlabel, YLabel: "share of copies found", YMin: 0, YMax: 1.05, Legend: "bl"}
		series := []Series{{Name: "simdex"}, {Name: "simdex + sample-posting candidates (emulated)"}, {Name: "ssdeep"}, {Name: "tlsh"}, {Name: "truly near or contained", Reference: true}}
		var tot acc
		for _, x := range xs {
			a := accs[key{p.kind, x}]
			n := float64(a.n)
			for k, v := range []int{a.eng, a.emu, a.ss, a.tl, a.truth} {
				series[k].X = append(series[k].X, x)
				series[k].Y = append(series[k].Y, float64(v)/n)
			}
			tot.n += a.n
			tot.truth += a.truth
			tot.eng += a.eng
			tot.emu += a.emu
			tot.ss += a.ss
			tot.tl += a.tl
		}
		pn.Series = series
		fig.Panels = append(fig.Panels, pn)
		if tot.n > 0 {
			n := float64(tot.n)
			tab.Rows = append(tab.Rows, []string{p.title, fmt.Sprint(tot.n), pct(float64(tot.truth) / n), pct(float64(tot.eng) / n), pct(float64(tot.emu) / n), pct(float64(tot.ss) / n), pct(float64(tot.tl) / n)})
		}
	}
	res.Figures = append(res.Figures, fig)
	res.Tables = append(res.Tables, tab)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("detection experiment: %w", err)
	}
	return nil
}
