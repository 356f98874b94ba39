package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
)

type similarFlags struct {
	index       string
	id          int64
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
attachment or member in it.

An argument that is a number and also names a file is refused as
ambiguous: say ./35 for the file, or --id 35 for the document.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("one FILE or ID expected, got %d: %q", len(args), strings.Join(args, " "))
			}
			return nil // none: parseSimilarArg wants --id
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := parseSimilarArg(f, args)
			if err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			return runSimilar(cmd.Context(), g, f, q, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&f.index, "index", "", "index file (default: index.path, or data_dir/index.db)")
	cmd.Flags().Int64Var(&f.id, "id", 0, "the stored document with this id, instead of FILE")
	cmd.Flags().BoolVar(&f.json, "json", false, `print {"matches": [...]}`)
	cmd.Flags().Float64Var(&f.resemblance, "threshold", 0, "resemblance threshold (default: index.thresholds.resemblance)")
	cmd.Flags().Float64Var(&f.containment, "containment-threshold", 0, "containment threshold (default: index.thresholds.containment)")
	return cmd
}

// similarQuery is what similar compares: a file, or a stored document.
type similarQuery struct {
	path string
	id   index.DocID
}

// parseSimilarArg reads similar's argument: FILE, ID or --id ID. A number
// that also names a file is refused, rather than taken as one of them.
func parseSimilarArg(f *similarFlags, args []string) (similarQuery, error) {
	switch {
	case f.id != 0 && len(args) > 0:
		return similarQuery{}, fmt.Errorf("give FILE or --id, not both")
	case f.id < 0:
		return similarQuery{}, fmt.Errorf("--id %d: document ids are positive", f.id)
	case f.id > 0:
		return similarQuery{id: index.DocID(f.id)}, nil
	case len(args) == 0:
		return similarQuery{}, fmt.Errorf("give a FILE, or a document ID (--id ID)")
	}
	arg := args[0]
	id, convErr := strconv.ParseInt(arg, 10, 64)
	fi, statErr := os.Stat(arg)
	switch {
	case statErr == nil && convErr == nil:
		return similarQuery{}, fmt.Errorf("%s is both a file here and a document id: say ./%s for the file, or --id %s for the document", arg, arg, arg)
	case statErr == nil && fi.IsDir():
		return similarQuery{}, fmt.Errorf("%s is a directory: similar compares one file (scan %s reports the copies in a folder)", arg, arg)
	case statErr == nil && !fi.Mode().IsRegular():
		return similarQuery{}, fmt.Errorf("%s is not a regular file (%s)", arg, fi.Mode().Type())
	case statErr == nil:
		return similarQuery{path: arg}, nil
	case convErr == nil && id > 0:
		return similarQuery{id: index.DocID(id)}, nil
	case errors.Is(statErr, fs.ErrNotExist):
		return similarQuery{}, fmt.Errorf("%s: no such file, and not a document id", arg)
	}
	return similarQuery{}, fmt.Errorf("%s: %w", arg, errors.Unwrap(statErr))
}

func runSimilar(ctx context.Context, g *globals, f *similarFlags, q similarQuery, stdout io.Writer) error {
	cfg, err := g.load()
	if err != nil {
		return err
	}
	th, err := thresholds(&cfg, f.resemblance, f.containment)
	if err != nil {
		return err
	}
	cfg.Index.Path = cmp.Or(f.index, cfg.Index.Path)
	if cfg.Store.Driver != daemon.DriverPostgres {
		if err := indexExists(cfg.IndexPath()); err != nil {
			return err
		}
	}
	// One query: loading every anchor list would cost more than it saves.
	cfg.Index.AnchorsInMemory = false
	eng, err := daemon.OpenEngine(ctx, &cfg, g.logger(cfg))
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer eng.Close()

	var matches []api.Match
	if q.path != "" {
		matches, err = similarToFile(ctx, eng, q.path, th)
	} else {
		var ms []index.Match
		ms, err = eng.Index.Similar(ctx, q.id, th)
		matches = api.Matches(ms, "")
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

// indexExists refuses an index file that does not exist: opened by
// similar, it would be created empty, and every query answered "no
// copies"; measured by stats, SQLite said only "unable to open".
func indexExists(path string) error {
	if _, err := os.Stat(path); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &exitError{code: 2, err: fmt.Errorf("index %s: %w (scan a folder into it first, or name another with --index)", path, err)}
	}
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
