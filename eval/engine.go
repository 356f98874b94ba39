package eval

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
)

// loose reports every candidate the index finds: any score passes, so the
// thresholds can be applied afterwards, and the candidate set (which does
// not depend on thresholds) is the engine's own.
var loose = index.Thresholds{Scope: index.Scope{Resemblance: 1e-12, Containment: 1e-12}, Hamming: 64}

// RunEngine adds texts to a fresh index with opts, in a SQLite store under
// dir, then asks the index for the versions of every document (Similar),
// and returns every (queried, found) pair with its scores. Texts are
// extracted text; the index normalises them. Every text must be non-empty
// after normalisation.
func RunEngine(ctx context.Context, dir string, opts index.Options, names []string, texts [][]byte) ([]Scored[index.Scores], error) {
	return runEngine(ctx, dir, opts, names, texts, len(texts))
}

// runEngine is RunEngine asking only for the versions of the first
// queries documents.
func runEngine(ctx context.Context, dir string, opts index.Options, names []string, texts [][]byte, queries int) ([]Scored[index.Scores], error) {
	st, err := sqlite.Open(ctx, filepath.Join(dir, "index.db"), sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		return nil, fmt.Errorf("run engine: %w", err)
	}
	defer st.Close()
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		return nil, fmt.Errorf("run engine: %w", err)
	}
	defer ix.Close()
	ids := make([]index.DocID, len(texts))
	pos := make(map[index.DocID]int32, len(texts))
	const batch = 64
	for lo := 0; lo < len(texts); lo += batch {
		hi := min(lo+batch, len(texts))
		ins := make([]index.Input, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ins = append(ins, index.Input{
				Doc:     index.Doc{Key: fmt.Sprintf("eval:%d", i), Name: names[i], Source: "eval"},
				RawSize: int64(len(texts[i])),
				Text:    texts[i],
				Parent:  -1,
			})
		}
		res, err := ix.Add(ctx, ins)
		if err != nil {
			return nil, fmt.Errorf("run engine: add documents %d-%d: %w", lo, hi-1, err)
		}
		for k, r := range res {
			if r.Err != nil {
				return nil, fmt.Errorf("run engine: add %s: %w", names[lo+k], r.Err)
			}
			ids[lo+k] = r.ID
			pos[r.ID] = int32(lo + k)
		}
	}
	var out []Scored[index.Scores]
	for i, id := range ids[:queries] {
		ms, err := ix.Similar(ctx, id, loose)
		if err != nil {
			return nil, fmt.Errorf("run engine: versions of %s: %w", names[i], err)
		}
		for _, m := range ms {
			j, ok := pos[m.Record.ID]
			if !ok {
				return nil, fmt.Errorf("run engine: versions of %s: unknown document %d", names[i], m.Record.ID)
			}
			out = append(out, Scored[index.Scores]{Pair{int32(i), j}, m.Scores})
		}
	}
	return out, nil
}
