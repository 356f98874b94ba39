package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
)

type similarFlags struct {
	index       string
	json        bool
	resemblance float64
	containment float64
}

func newSimilarCmd(g *globals) *cobra.Command {
	f := &similarFlags{}
	cmd := &cobra.Command{
		Use:   "similar [flags] FILE|ID",
		Short: "Print all versions of one file: every stored copy and near-copy",
		Long: `similar prints every document in the index that is a copy or near-copy
of FILE (extracted and fingerprinted, not stored) or of the stored document
with id ID, with resemblance, containment in both directions, bytes in
common, SimHash distance and whether it is an exact duplicate. A FILE that
is a container (archive, e-mail) is compared by its own text and by every
attachment or member in it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSimilar(cmd.Context(), g, f, args[0], cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&f.index, "index", "", "index file (default: index.path, or data_dir/index.db)")
	cmd.Flags().BoolVar(&f.json, "json", false, `print {"matches": [...]}`)
	cmd.Flags().Float64Var(&f.resemblance, "threshold", 0, "resemblance threshold (default: index.thresholds.resemblance)")
	cmd.Flags().Float64Var(&f.containment, "containment-threshold", 0, "containment threshold (default: index.thresholds.containment)")
	return cmd
}

func runSimilar(ctx context.Context, g *globals, f *similarFlags, arg string, stdout io.Writer) error {
	cfg, err := g.load()
	if err != nil {
		return err
	}
	th, err := thresholds(&cfg, f.resemblance, f.containment)
	if err != nil {
		return err
	}
	cfg.Index.Path = cmp.Or(f.index, cfg.Index.Path)
	// One query: loading every anchor list would cost more than it saves.
	cfg.Index.AnchorsInMemory = false
	eng, err := daemon.OpenEngine(ctx, &cfg, g.logger(cfg))
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer eng.Close()

	var matches []api.Match
	if _, statErr := os.Stat(arg); statErr == nil {
		matches, err = similarToFile(ctx, eng, arg, th)
	} else if id, convErr := strconv.ParseInt(arg, 10, 64); convErr == nil {
		var ms []index.Match
		ms, err = eng.Index.Similar(ctx, index.DocID(id), th)
		matches = api.Matches(ms, "")
	} else {
		err = fmt.Errorf("%s: %w", arg, statErr)
	}
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if f.json {
		return printJSON(stdout, map[string]any{"matches": matches}) // never nil: [] for none
	}
	if len(matches) == 0 {
		fmt.Fprintln(stdout, "no copies or near-copies found")
		return nil
	}
	fmt.Fprintf(stdout, "%-8s %-6s %-13s %-13s %-9s %-4s %-5s %s\n", "id", "resem", "this in match", "match in this", "bytes", "ham", "exact", "name")
	for _, m := range matches {
		name := m.Name
		if m.Query != "" {
			name += "   (matches " + m.Query + ")"
		}
		fmt.Fprintf(stdout, "%-8d %5.0f%% %12.0f%% %12.0f%% %9d %4d %-5v %s\n", m.ID, 100*m.Resemblance, 100*m.ContainmentAB, 100*m.ContainmentBA, m.BytesInCommon, m.Hamming, m.Exact, name)
	}
	fmt.Fprintln(stdout, bytesLegend)
	return nil
}

// similarToFile extracts path and looks up the file and each of its
// children, without storing anything.
func similarToFile(ctx context.Context, eng *daemon.Engine, path string, th index.Thresholds) ([]api.Match, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	parts, err := ingest.SimilarToObject(ctx, eng.Index, eng.Extractor, extract.Object{Name: path, Reader: file}, th)
	return api.ObjectMatches(parts), err
}
