package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/ingest"
)

type scanFlags struct {
	index       string
	json        bool
	pairs       bool
	limit       int
	minScore    float64
	resemblance float64
	containment float64
	workers     int
	inFlight    int64
	durability  string
}

func newScanCmd(g *globals) *cobra.Command {
	f := &scanFlags{}
	cmd := &cobra.Command{
		Use:   "scan [flags] DIR...",
		Short: "Index the files under directories and report identical sets and near-copy families",
		Long: `scan extracts and fingerprints every regular file under each DIR into the
index (incrementally: unchanged files are skipped), then prints the sets of
identical documents and the families of near-copies that involve them.

By default it prints a summary: files (new, changed, or unchanged since
the index last saw them), errors, identical sets and the largest families,
at most --limit of each. --pairs adds every near-copy pair (at most
--limit, those scoring at least --min-score), and --json prints everything
as one JSON object.

Files are named relative to DIR, or with several DIRs under each DIR as
given; files indexed earlier and not scanned now are named the same way
(../other/a.txt), except in --json, which names them by their index key
(fs:/abs/path, s3:bucket/key).

A DIR that does not exist or cannot be read is refused before anything is
opened (exit status 2). A file that cannot be read or extracted (empty,
binary, too large, invalid text, encrypted…) is recorded in the index with
its error and listed in the report; a path that is not a regular file
(a pipe, a dangling link) is listed as not indexed. The scan goes on, and
the exit status is 1.`,
		Args: someArgs("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScan(cmd.Context(), g, f, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&f.index, "index", "", "index file (default: index.path, or data_dir/index.db)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the whole report as one JSON object")
	cmd.Flags().BoolVar(&f.pairs, "pairs", false, "list the near-copy pairs and every member of each set and family")
	cmd.Flags().IntVar(&f.limit, "limit", 20, "at most this many errors, sets, families (and pairs with --pairs) in the text report; 0: all")
	cmd.Flags().Float64Var(&f.minScore, "min-score", 0, "with --pairs, list only pairs whose resemblance or containment reaches this")
	cmd.Flags().Float64Var(&f.resemblance, "threshold", 0, "resemblance threshold (default: index.thresholds.resemblance)")
	cmd.Flags().Float64Var(&f.containment, "containment-threshold", 0, "containment threshold (default: index.thresholds.containment)")
	cmd.Flags().IntVar(&f.workers, "workers", ingest.ScanWorkers, "files in flight at most: read, extracted and waiting for their commit (more group more documents per commit)")
	cmd.Flags().Int64Var(&f.inFlight, "in-flight-bytes", ingest.ScanInFlightBytes, "bytes of files in flight at most (a larger file is indexed alone)")
	cmd.Flags().StringVar(&f.durability, "durability", "normal", "full: fsync every commit; normal: fsync at checkpoints (a crash of the process loses nothing)")
	return cmd
}

// fileError is one per-file problem in the report.
type fileError = ingest.FileError

func runScan(ctx context.Context, g *globals, f *scanFlags, dirs []string, stdout, stderr io.Writer) error {
	if f.workers < 1 || f.inFlight < 1 {
		return &exitError{code: 2, err: fmt.Errorf("--workers %d, --in-flight-bytes %d: both must be at least 1", f.workers, f.inFlight)}
	}
	if err := checkScanArgs(dirs); err != nil {
		return err
	}
	cfg, err := g.load()
	if err != nil {
		return err
	}
	th, err := thresholds(&cfg, f.resemblance, f.containment)
	if err != nil {
		return err
	}
	cfg.Index.Path = cmp.Or(f.index, cfg.Index.Path)
	logger := g.logger(cfg)
	start := time.Now()
	var bar *progressbar.ProgressBar
	xo := cfg.Extract
	xo.SpoolDir = cfg.SpoolDir()
	res, err := ingest.Scan(ctx, ingest.ScanOptions{Dirs: dirs, IndexPath: cfg.IndexPath(),
		Durability: cmp.Or(sqlite.Durability(f.durability), cfg.Index.Durability), Index: cfg.Index.Options,
		Extract: xo, Thresholds: th, Workers: f.workers, InFlightBytes: f.inFlight,
		Logger: logger, Progress: progress(stderr, &bar)})
	if bar != nil && !bar.IsFinished() { // interrupted
		bar.Finish()
	}
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer res.Close()
	rep := buildReport(res.Analysis, res.Scanned, res.Files)
	problems := res.Problems
	sort.Slice(problems, func(i, j int) bool { return problems[i].Path < problems[j].Path })
	rep.Errors = append([]fileError{}, problems...) // [] rather than null in JSON
	rep.counts = res.Counts
	rep.nameForText(res.Analysis, res.Scanned, dirs)
	if f.json {
		if err := rep.writeJSON(stdout); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("write report: %w", err)}
		}
	} else {
		rep.writeText(stdout, textOptions{pairs: f.pairs, limit: f.limit, minScore: f.minScore})
	}
	logger.Debug("scan: report written", "seconds", time.Since(start).Seconds())
	if err := res.Close(); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("close index: %w", err)}
	}
	if len(problems) > 0 {
		return &exitError{code: 1, err: rep.incomplete()}
	}
	return nil
}

// checkScanArgs refuses, before the index is opened, an argument that
// does not exist, cannot be read or is not a directory or a file: the
// scan reported it as if recorded in the index, which it was not.
func checkScanArgs(args []string) error {
	for _, a := range args {
		fi, err := os.Stat(a)
		if err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
			err = fmt.Errorf("not a directory or a regular file (%s)", fi.Mode().Type())
		}
		if err == nil { // a special file could block: opened only when regular or a directory
			var f *os.File
			if f, err = os.Open(a); err == nil {
				f.Close()
			}
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return &exitError{code: 2, err: fmt.Errorf("scan %s: %w (nothing was scanned)", a, err)}
		}
	}
	return nil
}

// incomplete is the error of a scan that could not index every file
// fully.
func (r *report) incomplete() error {
	var notIndexed int
	for _, b := range r.notIndexed {
		if b {
			notIndexed++
		}
	}
	var parts []string
	if n := len(r.Errors) - notIndexed; n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s could not be fully indexed", n, plural(r.Files, "file")))
	}
	if notIndexed > 0 {
		parts = append(parts, plural(notIndexed, "path")+" not indexed")
	}
	return fmt.Errorf("%s (listed in the report)", strings.Join(parts, ", "))
}

// progress returns the callback drawing *bar on stderr, if stderr is a
// terminal.
func progress(stderr io.Writer, bar **progressbar.ProgressBar) func(done, total int) {
	if fd, ok := stderr.(*os.File); !ok || !isatty.IsTerminal(fd.Fd()) {
		return nil
	}
	return func(done, total int) {
		if *bar == nil {
			*bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("indexing"),
				progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		if (*bar).Add(1); done == total {
			(*bar).Finish()
		}
	}
}

func thresholds(cfg *daemon.Config, resemblance, containment float64) (index.Thresholds, error) {
	th := cfg.Index.Thresholds
	th.Resemblance = cmp.Or(resemblance, th.Resemblance)
	th.Containment = cmp.Or(containment, th.Containment)
	if err := th.Validate(); err != nil {
		return th, &exitError{code: 2, err: fmt.Errorf("thresholds: %w", err)}
	}
	return th, nil
}
