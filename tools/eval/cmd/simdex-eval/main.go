// Command simdex-eval regenerates docs/EVALUATION.md and its figures: the
// engine's recall and false alarms on the labelled corpora against ssdeep
// and tlsh (including a generated e-mail corpus, see -mail), the parameter
// sweep behind its defaults, and the seed studies' synthetic experiments. `make eval` runs it through
// scripts/eval.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/simdex/simdex/index/sketch"
	"github.com/simdex/simdex/tools/eval"
)

func main() {
	var cfg eval.Config
	var names string
	var withMail bool
	flag.StringVar(&cfg.Corpora, "corpora", "../shared/corpora", "directory of the labelled corpora")
	flag.StringVar(&names, "names", "", "comma-separated corpora to evaluate (default: "+strings.Join(eval.Corpora, ",")+","+eval.MailCorpus+")")
	flag.BoolVar(&withMail, "mail", true, "also generate and evaluate the e-mail corpus ("+eval.MailCorpus+") when -names is not given")
	flag.StringVar(&cfg.MailSource, "mail-source", "debian-copyright", "corpus whose documents the generated e-mail corpus carries (debian-copyright, spdx or licenseclassifier)")
	flag.IntVar(&cfg.MailThreads, "mail-threads", 0, "originals of the e-mail corpus, one thread of 12 documents each (default 60; quick: as many as fit the sample)")
	flag.StringVar(&cfg.Originals, "originals", "", "directory of originals for the synthetic experiments (default <corpora>/spdx/text)")
	flag.StringVar(&cfg.Out, "out", "docs", "documentation directory: writes EVALUATION.md and eval/*.png")
	flag.StringVar(&cfg.Work, "work", "", "scratch directory (default: a temporary directory)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the synthetic corpus")
	flag.BoolVar(&cfg.CorporaOnly, "corpora-only", false, "evaluate the corpora at the defaults only: no parameter sweep, no synthetic experiments")
	flag.BoolVar(&cfg.Quick, "quick", false, "evaluate small samples only (seconds, indicative numbers)")
	flag.StringVar(&cfg.Command, "command", "make eval", "command line recorded in the report")
	var minHashBits, sampleFloor int
	flag.IntVar(&minHashBits, "minhash-bits", 0, "MinHash bits per slot (sketch.minhash_bits: 8, 16 or 32; default: the engine's)")
	flag.IntVar(&sampleFloor, "sample-floor", -1, "hierarchical sampling's floor of samples per text (sketch.sample_floor; 0 off; default: the engine's)")
	flag.Parse()
	if minHashBits != 0 || sampleFloor >= 0 {
		cfg.Sketch = func(p *sketch.Params) {
			if minHashBits != 0 {
				p.MinHashBits = minHashBits
			}
			if sampleFloor >= 0 {
				p.SampleFloor = sampleFloor
			}
		}
	}
	switch {
	case names != "":
		cfg.Names = strings.Split(names, ",")
	case !withMail:
		cfg.Names = eval.Corpora
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := eval.Run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "simdex-eval:", err)
		os.Exit(1)
	}
}
