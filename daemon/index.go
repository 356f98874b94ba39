package daemon

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

// Engine is the index with its store and the ingest stage, opened from a
// configuration.
type Engine struct {
	Store     *sqlite.Store
	Index     *index.Index
	Extractor *extract.Extractor
	Ingester  *ingest.Ingester
}

// OpenEngine opens the embedded store at cfg.IndexPath() and the index
// over it. durability, when not empty, overrides cfg.Index.Durability.
func OpenEngine(ctx context.Context, cfg *Config, durability string, logger *slog.Logger) (*Engine, error) {
	opts := cfg.Index.Options
	opts.Logger = logger
	dur := cmp.Or(sqlite.Durability(durability), cfg.Index.Durability)
	st, err := sqlite.Open(ctx, cfg.IndexPath(), sqlite.Options{
		Scheme: opts.Scheme(), Durability: dur, Logger: logger,
		AnchorsInMemory: cfg.Index.AnchorsInMemory,
	})
	if err != nil {
		return nil, err
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open index %s: %w", cfg.IndexPath(), err)
	}
	xo := cfg.Extract
	xo.SpoolDir = cfg.SpoolDir()
	ex, err := extract.New(xo)
	if err != nil {
		ix.Close()
		st.Close()
		return nil, fmt.Errorf("configure extraction: %w", err)
	}
	return &Engine{Store: st, Index: ix, Extractor: ex, Ingester: ingest.New(ex, ix)}, nil
}

// Close stops the index and closes the store.
func (e *Engine) Close() error {
	e.Index.Close()
	return e.Store.Close()
}
