package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sketch"
)

// Corpora are the labelled corpora of ../shared/corpora that Run evaluates
// by default, in report order; Run also evaluates the generated e-mail
// corpus (MailCorpus) by default, after them.
var Corpora = []string{"spdx", "licenseclassifier", "gomod-licenses", "debian-copyright", "debian-docs", MailUSRP}

// Unswept are the corpora evaluated at the defaults only, left out of the
// parameter sweep to keep a full run within about 20 minutes on 2 cores:
// the sweep would run the index about eight more times over mail-usrp's
// 3,457 messages.
var Unswept = []string{MailUSRP}

// MailUSRP is the real mailing-list corpus of ../shared/corpora: 3,457
// messages of the usrp-users list, without labels (the truth is computed
// from the messages, the threads come from their subjects).
const MailUSRP = "mail-usrp"

// Config configures Run.
type Config struct {
	// Corpora is the directory holding the labelled corpora (default
	// ../shared/corpora, beside the checkout).
	Corpora string
	// Names are the corpora to evaluate (default Corpora and MailCorpus).
	Names []string
	// MailSource is the corpus of ../shared/corpora whose documents the
	// generated e-mail corpus carries (default debian-copyright, which
	// the synthetic experiments do not use).
	MailSource string
	// MailThreads is the number of originals of the e-mail corpus, each
	// with a thread of 12 documents (default 60; with MaxDocs, as many as
	// fit).
	MailThreads int
	// MailExtractor extracts the e-mail corpus: a file's own text, each
	// attachment being a file of its own (default: OwnText over package
	// extract with its default limits).
	MailExtractor Extractor
	// Originals is the directory of texts the synthetic experiments edit
	// (default <Corpora>/spdx/text).
	Originals string
	// Out is the documentation directory: Run writes Out/EVALUATION.md and
	// the figures in Out/eval (default docs).
	Out string
	// Work is a scratch directory (default: a temporary directory,
	// removed at the end).
	Work string
	// Seed makes the synthetic corpus reproducible (default 1).
	Seed uint64
	// CorporaOnly evaluates the corpora at the defaults and skips the
	// parameter sweep and the synthetic experiments (for iterating on
	// one corpus; the report says so).
	CorporaOnly bool
	// Quick evaluates small samples (about 150 documents per corpus, 8
	// originals, fewer edit counts and no parameter sweep) in seconds.
	Quick bool
	// MaxDocs, when positive, evaluates an evenly spaced sample of at most
	// this many documents per corpus (quick default 150).
	MaxDocs int
	// MaxOriginals bounds the originals of the synthetic experiments
	// (default 100, quick 8).
	MaxOriginals int
	// Extractor turns files into text (default: package extract with its
	// default limits, as the daemon extracts).
	Extractor Extractor
	// Sketch, when not nil, changes the engine's sketch parameters from
	// their defaults (to evaluate one configuration of the sweep on every
	// corpus, mail-usrp included).
	Sketch func(*sketch.Params)
	// Command is the command line recorded in the report (default
	// "make eval").
	Command string
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
	// Now returns the time (default time.Now); it only measures durations.
	Now func() time.Time
}

// ErrConfig reports an unusable configuration.
var ErrConfig = errors.New("invalid evaluation config")

func (c *Config) defaults() error {
	if c.Corpora == "" {
		c.Corpora = filepath.Join("..", "shared", "corpora")
	}
	if c.Names == nil {
		c.Names = append(slices.Clone(Corpora), MailCorpus)
	}
	if c.MailSource == "" {
		c.MailSource = "debian-copyright"
	}
	if c.Originals == "" {
		c.Originals = filepath.Join(c.Corpora, "spdx", "text")
	}
	if c.Out == "" {
		c.Out = "docs"
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Extractor == nil {
		x, err := DefaultExtractor()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		c.Extractor = x
	}
	if c.MaxDocs == 0 && c.Quick {
		c.MaxDocs = 150
	}
	if c.MailThreads == 0 {
		c.MailThreads = 60
		if c.MaxDocs > 0 {
			c.MailThreads = max(2, min(c.MailThreads, c.MaxDocs/mailDocsPerThread))
		}
	}
	if c.MailExtractor == nil {
		x, err := DefaultMailExtractor()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		c.MailExtractor = x
	}
	if c.MaxOriginals == 0 {
		c.MaxOriginals = 100
		if c.Quick {
			c.MaxOriginals = 8
		}
	}
	if c.MaxDocs < 0 || c.MaxOriginals < 2 {
		return fmt.Errorf("%w: max docs %d, max originals %d (want ≥ 0 and ≥ 2)", ErrConfig, c.MaxDocs, c.MaxOriginals)
	}
	if c.Command == "" {
		c.Command = "make eval"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	for _, n := range c.Names {
		if !slices.Contains(Corpora, n) && n != MailCorpus {
			return fmt.Errorf("%w: unknown corpus %q (known: %s, %s)", ErrConfig, n, strings.Join(Corpora, ", "), MailCorpus)
		}
	}
	return nil
}

// Results are everything Run measured; the report is written from them.
type Results struct {
	Config  Config
	Peers   map[string]string
	Corpora []*CorpusResult
	// Sweeps are the parameter sweep's results, by corpus (same order as
	// Corpora, nil for a corpus left out of the sweep, see Unswept)
	// Corpora); empty in quick mode.
	Sweeps    [][]SweepResult
	Variants  []EngineVariant
	Synthetic *SynthResult
	// RealFigures plot the real corpora.
	RealFigures []Figure
	Defaults    index.Options
	Duration    time.Duration
	Machine     string
}

// boilerplate is the shared text of the boilerplate experiment: an e-mail
// confidentiality footer of the kind KDD'05 found to cause false alarms.
const boilerplate = `This message and any attachments are confidential and intended solely for the
addressee. If you have received this message in error, please notify the sender
immediately by reply and delete it from your system; you must not copy, forward,
disclose or otherwise use any part of it. Internet communications are not
secure, and the sender accepts no responsibility for any loss or damage arising
from the use of this message or its attachments, including damage from viruses.
Any views or opinions expressed are solely those of the author and do not
necessarily represent those of the company. Unless expressly agreed in writing,
nothing in this message constitutes a binding offer, acceptance or commitment,
and no contract may be concluded by e-mail. Please consider the environment
before printing this message. Registered office as stated on our website.`

// Run evaluates the engine and its peers on the labelled corpora, runs the
// synthetic experiments, and writes Out/EVALUATION.md with its figures.
// It writes progress and a summary to w. It fails when a corpus or a peer
// tool (ssdeep, tlsh) is missing.
func Run(ctx context.Context, cfg Config, w io.Writer) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	start := cfg.Now()
	log := cfg.Logger.With("component", "eval")
	res := &Results{Config: cfg, Defaults: index.DefaultOptions(), Machine: machine()}
	if cfg.Sketch != nil {
		cfg.Sketch(&res.Defaults.Sketch)
		if err := res.Defaults.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	peers, err := PeerVersions(ctx)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	res.Peers = peers
	work := cfg.Work
	if work == "" {
		work, err = os.MkdirTemp("", "simdex-eval-")
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		defer os.RemoveAll(work)
	}
	if !cfg.Quick && !cfg.CorporaOnly {
		res.Variants = DefaultVariants()
	}
	for _, name := range cfg.Names {
		var c *Corpus
		if name == MailCorpus {
			fmt.Fprintf(w, "corpus %s: generating %d threads from %s\n", name, cfg.MailThreads, cfg.MailSource)
			c, err = generateMail(ctx, cfg, work)
			if err != nil {
				return fmt.Errorf("evaluate: corpus %s: %w", name, err)
			}
		} else {
			fsys, err := openDir(filepath.Join(cfg.Corpora, name))
			if err != nil {
				return fmt.Errorf("evaluate: corpus %s: %w", name, err)
			}
			fmt.Fprintf(w, "corpus %s: loading\n", name)
			ex := cfg.Extractor
			if name == MailUSRP {
				ex = cfg.MailExtractor
			}
			c, err = LoadCorpus(ctx, fsys, name, ex, cfg.MaxDocs)
			if err != nil {
				return fmt.Errorf("evaluate: %w", err)
			}
		}
		p, err := Prepare(c)
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		r, err := EvaluateCorpus(ctx, p, res.Defaults, work)
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		res.Corpora = append(res.Corpora, r)
		log.Info("corpus evaluated", "corpus", name, "docs", r.Docs, "failed", len(r.Failed))
		d := r.Default
		fmt.Fprintf(w, "corpus %s: %d documents (%d without text), %d pairs; engine at defaults: exact %.3f near %.3f contained %.3f false alarms %.2f %%; ssdeep best near %.3f, tlsh best near %.3f; on raw files ssdeep %.3f, tlsh %.3f\n",
			name, r.Docs, len(r.Failed), r.Pairs, d.Recall(Exact), d.Recall(Near), d.Recall(Contained), 100*d.FalseAlarmShare(),
			r.SsdeepBest.Recall(Near), r.TLSHBest.Recall(Near), best(r.SsdeepRaw).Recall(Near), best(r.TLSHRaw).Recall(Near))
		if len(res.Variants) > 0 && slices.Contains(Unswept, name) {
			res.Sweeps = append(res.Sweeps, nil)
		} else if len(res.Variants) > 0 {
			fmt.Fprintf(w, "corpus %s: parameter sweep (%d variants)\n", name, len(res.Variants))
			sw, err := Sweep(ctx, p, res.Variants, work)
			if err != nil {
				return fmt.Errorf("evaluate: %w", err)
			}
			res.Sweeps = append(res.Sweeps, sw)
		}
		if err := os.RemoveAll(filepath.Join(work, name)); err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
	}
	res.RealFigures = realFigures(res.Corpora)
	if cfg.CorporaOnly {
		return finish(cfg, res, start, w)
	}

	fmt.Fprintf(w, "synthetic experiments: originals from %s\n", cfg.Originals)
	ofs, err := openDir(cfg.Originals)
	if err != nil {
		return fmt.Errorf("evaluate: originals: %w", err)
	}
	_, texts, err := OriginalsFromDir(ofs, ".", 4000)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	so := SynthOptions{Seed: cfg.Seed, Boilerplate: []byte(boilerplate), Work: work}
	so.SsdeepMin, so.TLSHMax = peerThresholds(res.Corpora)
	if cfg.Quick {
		so.Counts = []int{1, 10, 25, 50}
		so.Quick = true
	}
	n := min(cfg.MaxOriginals, len(texts))
	origs := make([][]byte, n)
	for i := range origs {
		origs[i] = texts[i*len(texts)/n]
	}
	res.Synthetic, err = RunSynthetic(ctx, origs, so)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	return finish(cfg, res, start, w)
}

// finish writes the report.
func finish(cfg Config, res *Results, start time.Time, w io.Writer) error {
	res.Duration = cfg.Now().Sub(start)
	if err := WriteReport(cfg.Out, res); err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	fmt.Fprintf(w, "wrote %s in %s\n", filepath.Join(cfg.Out, "EVALUATION.md"), res.Duration.Round(time.Second))
	return nil
}

// peerThresholds returns the median over corpora of the peers' best
// thresholds (ssdeep 50 and tlsh 50 without corpora).
func peerThresholds(rs []*CorpusResult) (ssdeepMin, tlshMax int) {
	if len(rs) == 0 {
		return 50, 50
	}
	var ss, tl []int
	for _, r := range rs {
		ss = append(ss, r.SsdeepBest.Value)
		tl = append(tl, r.TLSHBest.Value)
	}
	slices.Sort(ss)
	slices.Sort(tl)
	return ss[len(ss)/2], tl[len(tl)/2]
}

// machine describes the computer the evaluation ran on.
func machine() string {
	cpu := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d logical CPUs, %s %s/%s", cpu, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// realFigures compare the recall of the engine at its defaults with the
// peers at their best thresholds, per corpus.
func realFigures(rs []*CorpusResult) []Figure {
	if len(rs) == 0 {
		return nil
	}
	fig := Figure{File: "corpora.png", Cols: 3, Caption: "Recall per corpus: simdex at its default thresholds, ssdeep and tlsh (on the extracted text) each at its best threshold with at most 1 % false alarms."}
	var cats []string
	for _, r := range rs {
		cats = append(cats, r.Name)
	}
	for _, cl := range classes {
		pn := Panel{Title: classNames[cl] + " recall", YLabel: "recall", YMin: 0, YMax: 1.3, Categories: cats, Legend: "tr"}
		for _, m := range []struct {
			name string
			row  func(*CorpusResult) ThresholdRow
		}{
			{"simdex (defaults)", func(r *CorpusResult) ThresholdRow { return r.Default }},
			{"ssdeep (best)", func(r *CorpusResult) ThresholdRow { return r.SsdeepBest }},
			{"tlsh (best)", func(r *CorpusResult) ThresholdRow { return r.TLSHBest }},
		} {
			s := Series{Name: m.name}
			for _, r := range rs {
				s.Y = append(s.Y, m.row(r).Recall(cl))
			}
			pn.Series = append(pn.Series, s)
		}
		fig.Panels = append(fig.Panels, pn)
	}
	return []Figure{fig}
}
