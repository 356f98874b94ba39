package index

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"

	"github.com/simdex/simdex/index/chunk"
	"github.com/simdex/simdex/index/normalise"
	"github.com/simdex/simdex/index/sketch"
)

// Scope is how alike two texts must be to be near-copies by their
// scores: identical, or with a resemblance reaching Resemblance, or
// either containment reaching Containment. Policy's near-copy scopes are
// Scopes.
type Scope struct {
	Resemblance float64 `mapstructure:"resemblance" yaml:"resemblance" json:"resemblance"`
	Containment float64 `mapstructure:"containment" yaml:"containment" json:"containment"`
}

// Thresholds decide which pairs are reported as near-copies: those in
// Scope, and (when Hamming is not negative) those whose SimHashes differ
// in at most Hamming bits.
type Thresholds struct {
	Scope   `mapstructure:",squash" yaml:",inline"`
	Hamming int `mapstructure:"hamming" yaml:"hamming"`
}

// DefaultThresholds are the thresholds chosen by the evaluation in
// docs/EVALUATION.md.
func DefaultThresholds() Thresholds {
	return Thresholds{Scope: Scope{Resemblance: 0.5, Containment: 0.8}, Hamming: -1}
}

// Validate reports every out-of-range threshold.
func (t Thresholds) Validate() error {
	var errs []error
	if t.Resemblance <= 0 || t.Resemblance > 1 {
		errs = append(errs, fmt.Errorf("resemblance: %v is not in (0, 1]", t.Resemblance))
	}
	if t.Containment <= 0 || t.Containment > 1 {
		errs = append(errs, fmt.Errorf("containment: %v is not in (0, 1]", t.Containment))
	}
	if t.Hamming > 64 {
		errs = append(errs, fmt.Errorf("hamming: %d is over 64", t.Hamming))
	}
	return errors.Join(errs...)
}

// Options configure an Index. Chunk and Sketch parameters are fixed for the
// life of a store (they make its Scheme); thresholds may change any time.
type Options struct {
	Chunk      chunk.Params  `mapstructure:"chunk"`
	Sketch     sketch.Params `mapstructure:"sketch"`
	Thresholds Thresholds    `mapstructure:"thresholds"`
	// TemplateShare ignores chunks found in more than this share of all
	// contents (KDD'05 ubiquitous chunks). Default 0.5.
	TemplateShare float64 `mapstructure:"template_share"`
	// TemplateMinContents is the fewest contents a chunk must be found in
	// before TemplateShare can make it boilerplate. Without it, in a small
	// collection three versions of one contract among five documents would
	// be taken for a template and never found. Default 50.
	TemplateMinContents int `mapstructure:"template_min_contents"`
	// MaxChunkContents caps how many contents one chunk may lead to when
	// looking for candidates, whatever TemplateShare allows. Default 1000.
	MaxChunkContents int `mapstructure:"max_chunk_contents"`
	// CandidateHamming also takes as candidates contents whose SimHash is
	// within this many bits. Default 6; negative disables.
	CandidateHamming int `mapstructure:"candidate_hamming"`
	// AnchorShare takes as candidates contents sharing at least this share
	// of the smaller document's anchors (Fingerprint.Anchors): it finds a
	// short document inside a long one. Default 0.5.
	AnchorShare float64 `mapstructure:"anchor_share"`
	// AnchorCandidates caps the contents one query takes through anchors,
	// best share first. Default 200.
	AnchorCandidates int `mapstructure:"anchor_candidates"`
	// MaxBatch bounds how many documents one group commit writes. Default
	// 256. Set by bulk commands, not by configuration.
	MaxBatch int `mapstructure:"-"`
	// KeepText stores each distinct extracted text, compressed, so that
	// reviewers can see what differs between near-copies. It costs up to a
	// third of the text's size on disk, much less among near-copies, whose
	// shared pieces are stored once (a sixth of the 50,000-file benchmark
	// corpus). Default false; the daemon turns it on, and without it reads
	// texts again from their origins for a diff (ingest.Rereader).
	KeepText bool `mapstructure:"keep_text"`
	// MinWords: a text of fewer words (runs of letters and digits) never
	// joins an identical set, a near-copy pair or a family in an analysis
	// (Analyse, AnalyseInvolving): "Thanks!", "+1" or "Looks good" are
	// written alike by many who never saw each other's messages. Similar
	// still finds them. 0 keeps them all. Default 8, at most
	// MaxMinWords.
	MinWords int `mapstructure:"min_words"`
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger `mapstructure:"-"`
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{
		Chunk:               chunk.DefaultParams(),
		Sketch:              sketch.DefaultParams(),
		Thresholds:          DefaultThresholds(),
		TemplateShare:       0.5,
		TemplateMinContents: 50,
		MaxChunkContents:    1000,
		CandidateHamming:    6,
		AnchorShare:         0.5,
		AnchorCandidates:    200,
		MaxBatch:            256,
		MinWords:            8,
	}
}

// Validate reports every invalid option, naming it.
func (o Options) Validate() error {
	var errs []error
	if err := o.Chunk.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("chunk: %w", err))
	}
	if err := o.Sketch.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("sketch: %w", err))
	}
	if err := o.Thresholds.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("thresholds: %w", err))
	}
	if o.TemplateShare <= 0 || o.TemplateShare > 1 {
		errs = append(errs, fmt.Errorf("template_share: %v is not in (0, 1]", o.TemplateShare))
	}
	if o.TemplateMinContents < 2 {
		errs = append(errs, fmt.Errorf("template_min_contents: %d is below 2", o.TemplateMinContents))
	}
	if o.MaxChunkContents < 1 {
		errs = append(errs, fmt.Errorf("max_chunk_contents: %d is below 1", o.MaxChunkContents))
	}
	if o.CandidateHamming > 64 {
		errs = append(errs, fmt.Errorf("candidate_hamming: %d is over 64", o.CandidateHamming))
	}
	if o.AnchorShare <= 0 || o.AnchorShare > 1 {
		errs = append(errs, fmt.Errorf("anchor_share: %v is not in (0, 1]", o.AnchorShare))
	}
	if o.AnchorCandidates < 0 {
		errs = append(errs, fmt.Errorf("anchor_candidates: %d is negative", o.AnchorCandidates))
	}
	if o.MinWords < 0 || o.MinWords > MaxMinWords {
		errs = append(errs, fmt.Errorf("min_words: %d is not in [0, %d]", o.MinWords, MaxMinWords))
	}
	if o.MaxBatch < 1 {
		errs = append(errs, fmt.Errorf("max_batch: %d is below 1", o.MaxBatch))
	}
	return errors.Join(errs...)
}

// Scheme identifies the normalisation version and every fingerprint
// parameter: fingerprints of different schemes are never compared.
func (o Options) Scheme() uint32 {
	h := fnv.New32a()
	fmt.Fprintf(h, "norm=%d chunk=%d/%d/%d sketch=%d/%d/%d/%d/%d",
		normalise.Version, o.Chunk.Min, o.Chunk.Avg, o.Chunk.Max,
		o.Sketch.Window, o.Sketch.SampleN, o.Sketch.MinHashK, o.Sketch.Bands, o.Sketch.SimHashWords)
	// Parameters added later are written only when they differ from
	// what every older scheme had, so that older schemes keep their
	// identifiers.
	if b := o.Sketch.FullBits(); b != 32 {
		fmt.Fprintf(h, " minhash_bits=%d", b)
	}
	if o.Sketch.SampleFloor > 0 {
		fmt.Fprintf(h, " sample_floor=%d", o.Sketch.SampleFloor)
	}
	return h.Sum32()
}

// ForScheme returns the options an index whose fingerprints are of scheme
// recorded must be opened with: o itself, or o with the sketch parameters
// added since (MinHashBits, SampleFloor) set back to what every older
// index had, when that gives recorded. A default changed for new indexes
// thus leaves existing ones on the scheme they were built with, instead of
// fingerprinting their texts again (or refusing them, without texts).
// recorded 0 (a new index) and schemes of other parameters give o.
func (o Options) ForScheme(recorded uint32) Options {
	if recorded == 0 || recorded == o.Scheme() {
		return o
	}
	for _, older := range []func(*sketch.Params){
		func(p *sketch.Params) { p.MinHashBits = 32 },
		func(p *sketch.Params) { p.SampleFloor = 0 },
		func(p *sketch.Params) { p.MinHashBits, p.SampleFloor = 32, 0 },
	} {
		c := o
		older(&c.Sketch)
		if c.Scheme() == recorded {
			return c
		}
	}
	return o
}
