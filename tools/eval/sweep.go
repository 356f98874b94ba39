package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/chunk"
)

// EngineVariant is an engine configuration of the parameter sweep.
type EngineVariant struct {
	// Name describes the change from the defaults.
	Name string
	// Options are the index options (thresholds included).
	Options index.Options
	// SampleShare, when positive, adds the candidates of SampleCandidates
	// with this minimum share (an emulated lookup the index lacks).
	SampleShare float64
}

// SweepResult is a variant's outcome on one corpus.
type SweepResult struct {
	Variant string
	// Candidates is the number of ordered pairs scored.
	Candidates int
	Counts
	Time time.Duration
}

// DefaultVariants returns the engine configurations the sweep compares:
// the defaults, and one change at a time to the chunk size, the shingle
// window, the sampling rate, the LSH bands, the MinHash's bits per slot,
// the floor of hierarchical sampling, the containment threshold and the
// candidate lookup.
func DefaultVariants() []EngineVariant {
	def := index.DefaultOptions()
	with := func(name string, share float64, f func(o *index.Options)) EngineVariant {
		o := index.DefaultOptions()
		f(&o)
		return EngineVariant{Name: name, Options: o, SampleShare: share}
	}
	return []EngineVariant{
		{Name: "defaults", Options: def},
		with("containment threshold 0.7", 0, func(o *index.Options) { o.Thresholds.Containment = 0.7 }),
		with("chunks 64/256/2048", 0, func(o *index.Options) { o.Chunk = chunk.Params{Min: 64, Avg: 256, Max: 2048} }),
		with("chunks 32/128/1024", 0, func(o *index.Options) { o.Chunk = chunk.Params{Min: 32, Avg: 128, Max: 1024} }),
		with("window 12", 0, func(o *index.Options) { o.Sketch.Window = 12 }),
		with("window 32", 0, func(o *index.Options) { o.Sketch.Window = 32 }),
		with("sample_n 8", 0, func(o *index.Options) { o.Sketch.SampleN = 8 }),
		with("sample_n 32", 0, func(o *index.Options) { o.Sketch.SampleN = 32 }),
		with("bands 16 (8 rows)", 0, func(o *index.Options) { o.Sketch.Bands = 16 }),
		with("minhash_bits 16", 0, func(o *index.Options) { o.Sketch.MinHashBits = 16 }),
		with("minhash_bits 32", 0, func(o *index.Options) { o.Sketch.MinHashBits = 32 }),
		with("sample_floor 256", 0, func(o *index.Options) { o.Sketch.SampleFloor = 256 }),
		with("sample_floor 128", 0, func(o *index.Options) { o.Sketch.SampleFloor = 128 }),
		with("sample_floor 1024", 0, func(o *index.Options) { o.Sketch.SampleFloor = 1024 }),
		with("minhash_bits 16, sample_floor 256", 0, func(o *index.Options) { o.Sketch.MinHashBits, o.Sketch.SampleFloor = 16, 256 }),
		with("+ sample-posting candidates", 0.5, func(*index.Options) {}),
		with("+ sample-posting candidates, containment 0.7", 0.5, func(o *index.Options) { o.Thresholds.Containment = 0.7 }),
	}
}

// Sweep runs every variant on a prepared corpus. Variants that differ only
// in thresholds share one index run.
func Sweep(ctx context.Context, p *Prepared, variants []EngineVariant, work string) ([]SweepResult, error) {
	names, texts, norms := p.texts()
	type run struct {
		scored []Scored[index.Scores]
		time   time.Duration
	}
	runs := map[string]run{}
	var out []SweepResult
	for k, v := range variants {
		key := fmt.Sprintf("%d %v", v.Options.Scheme(), v.SampleShare)
		r, ok := runs[key]
		if !ok {
			start := time.Now()
			dir := filepath.Join(work, p.Corpus.Name, fmt.Sprintf("sweep-%d", k))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("sweep %s: %w", p.Corpus.Name, err)
			}
			scored, err := RunEngine(ctx, dir, v.Options, names, texts)
			if err != nil {
				return nil, fmt.Errorf("sweep %s, %s: %w", p.Corpus.Name, v.Name, err)
			}
			if err := os.RemoveAll(dir); err != nil {
				return nil, fmt.Errorf("sweep %s: %w", p.Corpus.Name, err)
			}
			if v.SampleShare > 0 {
				maxDF := min(v.Options.MaxChunkContents, max(2, int(v.Options.TemplateShare*float64(len(norms)))))
				scored = UnionScored(scored, SampleCandidates(norms, v.Options, maxDF, v.SampleShare))
			}
			r = run{scored, time.Since(start)}
			runs[key] = r
		}
		th := v.Options.Thresholds
		out = append(out, SweepResult{
			Variant:    v.Name,
			Candidates: len(r.scored),
			Counts:     CountPassing(p.Tally, r.scored, false, func(s index.Scores) bool { return s.Reported(th) }),
			Time:       r.time,
		})
	}
	return out, nil
}
