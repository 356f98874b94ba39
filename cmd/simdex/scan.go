package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/sync/semaphore"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/internal/idmap"
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

By default it prints a summary: files, errors, identical sets and the
largest families, at most --limit of each. --pairs adds every near-copy
pair (at most --limit, those scoring at least --min-score), and --json
prints everything as one JSON object.

A file that cannot be read or extracted (empty, binary, too large, invalid
text, encrypted…) is recorded in the index with its error and listed in the
report; the scan goes on, and the exit status is 1.`,
		Args: cobra.MinimumNArgs(1),
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
	cmd.Flags().IntVar(&f.workers, "workers", scanWorkers, "files in flight at most: read, extracted and waiting for their commit (more group more documents per commit)")
	cmd.Flags().Int64Var(&f.inFlight, "in-flight-bytes", scanInFlightBytes, "bytes of files in flight at most (a larger file is indexed alone)")
	cmd.Flags().StringVar(&f.durability, "durability", "normal", "full: fsync every commit; normal: fsync at checkpoints (a crash of the process loses nothing)")
	return cmd
}

// scanFile is one file found under a scanned directory.
type scanFile struct {
	path string // as found
	rel  string // relative to its scanned directory (prefixed when several)
	info fs.FileInfo
}

// fileError is one per-file problem in the report.
type fileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

func runScan(ctx context.Context, g *globals, f *scanFlags, dirs []string, stdout, stderr io.Writer) error {
	if f.workers < 1 || f.inFlight < 1 {
		return &exitError{code: 2, err: fmt.Errorf("--workers %d, --in-flight-bytes %d: both must be at least 1", f.workers, f.inFlight)}
	}
	cfg, err := g.load()
	if err != nil {
		return err
	}
	th, err := thresholds(&cfg, f.resemblance, f.containment)
	if err != nil {
		return err
	}
	if f.index != "" {
		cfg.Index.Path = f.index
	}
	logger := g.logger(cfg)
	// A scan queries no anchor lists one document at a time (its analysis
	// reads them whole): loading them into memory would be wasted.
	cfg.Index.AnchorsInMemory = false
	// Into an empty index, the postings are inserted once, in key order,
	// before the analysis (which reads them) rather than at each commit:
	// 9 of the 22 s a 50,000-file scan spent indexing. Band shares are
	// then computed once, at close, too (keeping them up to date at each
	// put cost a third more time on a corpus of many near-copies). Into
	// an index that holds documents already, both are kept up to date at
	// each put: computing the band shares of the whole index at close took
	// a scan of one file into a million documents 43 s.
	cfg.Index.DeferPostings = true
	// A scan wants throughput, not the latency of each document: larger
	// commits rewrite each posting page fewer times.
	cfg.Index.MaxBatch = scanBatch
	eng, err := daemon.OpenEngine(ctx, &cfg, f.durability, logger)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	// settling, once started, is the deferred work settled beside the
	// analysis: Close waits for it.
	var settling chan error
	defer func() {
		if settling != nil {
			<-settling
		}
		eng.Close()
	}()

	start := time.Now()
	var files []scanFile
	var problems []fileError
	for _, dir := range dirs {
		fs, errs := walk(dir, len(dirs) > 1)
		files = append(files, fs...)
		problems = append(problems, errs...)
	}
	var bar *progressbar.ProgressBar
	if fd, ok := stderr.(*os.File); ok && isatty.IsTerminal(fd.Fd()) {
		bar = progressbar.NewOptions(len(files), progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("indexing"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
	}
	workers, budget := f.workers, f.inFlight
	inFlight := semaphore.NewWeighted(budget)
	// Files are read and prepared on all cores but one, which is left to
	// the index's single writer: each waits for it, and with every core
	// preparing it waited for one behind them (see index.Index.Commit).
	preparing := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))
	var (
		mu      sync.Mutex
		scanned = map[index.DocID]string{} // this scan's documents → report path
		next    atomic.Int64
		wg      sync.WaitGroup
		fatal   error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) || ctx.Err() != nil {
					return
				}
				sf := files[i]
				weight := min(max(sf.info.Size(), 1), budget)
				if err := inFlight.Acquire(ctx, weight); err != nil {
					return // interrupted: reported below
				}
				out, err := ingestFile(ctx, eng.Ingester, preparing, sf)
				inFlight.Release(weight)
				mu.Lock()
				if bar != nil {
					bar.Add(1)
				}
				if err != nil {
					if fatal == nil {
						fatal = err
					}
					mu.Unlock()
					return
				}
				for j, r := range out.Results {
					name := sf.rel
					if j > 0 {
						name = reportName(sf.rel, out.Inputs[j].Doc.Key, out.Inputs[0].Doc.Key)
					}
					scanned[r.ID] = name
					if r.Err != nil {
						problems = append(problems, fileError{Path: name, Error: r.Err.Error()})
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
	if fatal != nil {
		return &exitError{code: 2, err: fatal}
	}
	if err := ctx.Err(); err != nil {
		return &exitError{code: 2, err: fmt.Errorf("scan interrupted: %w", err)}
	}
	logger.Debug("scan: files indexed", "files", len(files), "seconds", time.Since(start).Seconds())
	// The postings deferred during indexing are made searchable before
	// the analysis, which reads them: into an empty index they are
	// sorted in memory and read there. What the load deferred is then
	// written beside the analysis, by the writer, idle until the close
	// (3.5 s of a 50,000-file scan, which had followed the analysis).
	if err := eng.Store.SettlePostings(ctx); err != nil {
		return &exitError{code: 2, err: err}
	}
	logger.Debug("scan: postings settled", "seconds", time.Since(start).Seconds())
	settled := make(chan error, 1)
	settling = settled
	go func() { settled <- eng.Store.SettleDeferred(ctx) }()
	// Only pairs with this scan's documents are reported: scanned into a
	// large index, the rest of the index's pairs need not be scored.
	an, err := eng.Index.AnalyseInvolving(ctx, th, slices.Collect(maps.Keys(scanned)))
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	logger.Debug("scan: analysed", "pairs", len(an.Pairs), "families", len(an.Families), "seconds", time.Since(start).Seconds())
	// The report needs nothing more from the index: the store is closed
	// while the report is built and written, once what the load deferred
	// is settled. Closing copies the log into the database and frees the
	// page caches page by page (2 CPU-s), which had followed the report.
	closed := make(chan error, 1)
	settling = nil // Close, beside the report, waits for it
	go func() { closed <- errors.Join(<-settled, eng.Close()) }()
	rep := buildReport(an, scanned, len(files))
	sort.Slice(problems, func(i, j int) bool { return problems[i].Path < problems[j].Path })
	rep.Errors = append([]fileError{}, problems...) // [] rather than null in JSON
	if f.json {
		if err := rep.writeJSON(stdout); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("write report: %w", err)}
		}
	} else {
		rep.writeText(stdout, textOptions{pairs: f.pairs, limit: f.limit, minScore: f.minScore})
	}
	logger.Debug("scan: report written", "seconds", time.Since(start).Seconds())
	if err := <-closed; err != nil {
		return &exitError{code: 2, err: fmt.Errorf("close index: %w", err)}
	}
	if len(problems) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d files could not be fully indexed (listed in the report)", len(problems), len(files))}
	}
	return nil
}

// scanBatch is how many documents one of a scan's commits writes at
// most. A commit costs mostly the posting pages it rewrites, whatever its
// size: the indexing phase of a 50,000-file scan took 38 s in commits of
// 256 documents (the daemon's default, which keeps each document's wait
// short), 22.5 s in commits of 2,048, and no less in commits of 8,192.
const scanBatch = 2048

// scanWorkers is how many files a scan has in flight at most by default.
// Each waits for the group commit that stores it: twice scanBatch lets
// the next batch be extracted and fingerprinted while one commits, rather
// than after (with 2 files per core in flight, commits held a few
// documents each and a scan of 10,000 files took 50 s of CPU on its
// commits; with 256, 16 s).
const scanWorkers = 2 * scanBatch

// scanInFlightBytes bounds the memory those files hold: each holds its
// bytes and its text until committed, so many large files cannot exhaust
// memory however many are in flight.
const scanInFlightBytes = 256 << 20

// reportName names a child for the report: its parent's report path
// followed by the child's location inside it.
func reportName(parentRel, childKey, parentKey string) string {
	return parentRel + childKey[len(parentKey):]
}

// walk lists the regular files under dir, following links to files.
// Unreadable directories, broken links, links to directories and special
// files (devices, pipes, sockets) are reported, never silently skipped.
func walk(dir string, prefix bool) ([]scanFile, []fileError) {
	var files []scanFile
	var errs []fileError
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, fileError{Path: path, Error: err.Error()})
			if d != nil && d.IsDir() && path != dir {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			// A link to a file is indexed as that file; a link to a
			// directory is not followed (it could loop) but reported.
			info, err = os.Stat(path)
			if err == nil && info.IsDir() {
				err = errors.New("symbolic link to a directory: not followed (scan the directory itself)")
			}
		}
		if err == nil && !info.Mode().IsRegular() {
			err = fmt.Errorf("not a regular file (%s): skipped", info.Mode().Type())
		}
		if err != nil {
			errs = append(errs, fileError{Path: path, Error: err.Error()})
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			rel = path
		}
		rel = filepath.ToSlash(rel)
		if prefix {
			rel = filepath.ToSlash(filepath.Join(dir, rel))
		}
		files = append(files, scanFile{path: path, rel: rel, info: info})
		return nil
	})
	if err != nil {
		errs = append(errs, fileError{Path: dir, Error: err.Error()})
	}
	return files, errs
}

// ingestFile indexes one file. A file that cannot be opened is recorded in
// the index with its error, so that it is reported and never lost. It
// reads, extracts and fingerprints the file holding one of preparing's
// slots, and gives it back before waiting for the commit.
func ingestFile(ctx context.Context, ing *ingest.Ingester, preparing chan struct{}, sf scanFile) (*ingest.Outcome, error) {
	abs, err := filepath.Abs(sf.path)
	if err != nil {
		abs = sf.path
	}
	obj := ingest.Object{
		Key:       "fs:" + filepath.ToSlash(abs),
		VersionID: strconv.FormatInt(sf.info.ModTime().UnixNano(), 10) + "-" + strconv.FormatInt(sf.info.Size(), 10),
		Name:      sf.rel,
		Source:    "scan",
		ModTime:   sf.info.ModTime(),
	}
	select {
	case preparing <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("index %s: %w", sf.path, ctx.Err())
	}
	file, err := os.Open(sf.path)
	if err != nil {
		obj.Body = &failingReader{err: fmt.Errorf("open %s: %w", sf.path, err)}
	} else {
		obj.Body = file
	}
	p, err := ing.Prepare(ctx, obj)
	if file != nil {
		file.Close()
	}
	<-preparing
	if err != nil {
		return nil, err
	}
	return ing.Commit(ctx, p)
}

// failingReader makes an unreadable file flow through extraction, which
// records the error on the document.
type failingReader struct{ err error }

func (r *failingReader) Read([]byte) (int, error) { return 0, r.err }

func thresholds(cfg *daemon.Config, resemblance, containment float64) (index.Thresholds, error) {
	th := cfg.Index.Thresholds
	if resemblance != 0 {
		th.Resemblance = resemblance
	}
	if containment != 0 {
		th.Containment = containment
	}
	if err := th.Validate(); err != nil {
		return th, &exitError{code: 2, err: fmt.Errorf("thresholds: %w", err)}
	}
	return th, nil
}

// report is what scan prints.
type report struct {
	Files     int          `json:"files"`
	Documents int          `json:"documents"`
	Errors    []fileError  `json:"errors"`
	Identical [][]string   `json:"identical"`
	Families  []familyJSON `json:"families"`

	// pairs are the near-copy and identical pairs, written as the
	// report's "pairs" (pairJSON) and naming documents by their number
	// in names.
	pairs []reportPair
	names []string
}

type familyJSON struct {
	Pivot          string   `json:"pivot"`
	Members        []string `json:"members"`
	Links          int      `json:"links"`
	AvgResemblance float64  `json:"avg_resemblance"`
}

// pairJSON is one element of the report's "pairs".
type pairJSON struct {
	A             string  `json:"a"`
	B             string  `json:"b"`
	Resemblance   float64 `json:"resemblance"`
	ContainmentAB float64 `json:"containment_ab"`
	ContainmentBA float64 `json:"containment_ba"`
	BytesInCommon int64   `json:"bytes_in_common"`
	Hamming       int     `json:"hamming"`
	Exact         bool    `json:"exact"`
}

// reportPair is a pair as the report keeps it until it is written: its
// names by number and its scores as printed, in thousandths. A
// 50,000-file scan reports 3.5 million pairs, each placed at random in
// name order as it is found: as pairJSON values (88 bytes) that was
// 310 MB of fresh memory, a page fault every 46 pairs; as reportPairs
// (24 bytes), 84 MB.
type reportPair struct {
	bytesInCommon int64
	// a and b are numbers in report.names, a's name first in name order.
	a, b                                      int32
	resemblance, containmentAB, containmentBA uint16
	hamming                                   uint8
	exact                                     bool
}

// newReportPair keeps the scores of a ~ b, given in a's direction.
func newReportPair(a, b int32, s *index.Scores, ab, ba float64) reportPair {
	return reportPair{bytesInCommon: s.BytesInCommon, a: a, b: b, resemblance: milli(s.Resemblance),
		containmentAB: milli(ab), containmentBA: milli(ba), hamming: uint8(min(max(s.Hamming, 0), 64)), exact: s.Exact}
}

// json returns p as the report prints it.
func (p *reportPair) json(names []string) pairJSON {
	return pairJSON{A: names[p.a], B: names[p.b], Resemblance: fromMilli(p.resemblance), ContainmentAB: fromMilli(p.containmentAB),
		ContainmentBA: fromMilli(p.containmentBA), BytesInCommon: p.bytesInCommon, Hamming: int(p.hamming), Exact: p.exact}
}

// pairList returns the report's pairs as it prints them.
func (r *report) pairList() []pairJSON {
	out := make([]pairJSON, len(r.pairs))
	for i := range r.pairs {
		out[i] = r.pairs[i].json(r.names)
	}
	return out
}

// buildReport keeps what involves this scan's documents; documents
// indexed earlier are named by their key (fs:data/inbox/a.txt,
// s3:bucket/a.txt): their names alone (a.txt) could not be told from this
// scan's paths.
func buildReport(an *index.Analysis, scanned map[index.DocID]string, files int) *report {
	rep := &report{Files: files, Documents: len(scanned), Errors: []fileError{}, Identical: [][]string{}, Families: []familyJSON{}}
	rn := newReportNames(an, scanned)
	involves := func(ids []index.DocID) bool {
		return slices.ContainsFunc(ids, func(id index.DocID) bool { return rn.scanned[rn.num.Get(id)] })
	}
	// Each content's documents by name number, looked up by content id
	// rather than in ByContent for each of millions of pairs.
	var docsOf idmap.Map[index.ContentID, []int32]
	docsOf.Init(len(an.ByContent), maps.Keys(an.ByContent))
	for c, ids := range an.ByContent {
		nums := make([]int32, len(ids))
		for i, id := range ids {
			nums[i] = rn.num.Get(id)
		}
		docsOf.Set(c, nums)
	}
	// Every pair of documents the report lists, by name number: identical
	// texts first, then the near-copy pairs of contents, each standing for
	// the pairs of their documents.
	each := func(fn func(a, b int32, s *index.Scores)) {
		for _, set := range an.Identical {
			if !involves(set) {
				continue
			}
			s := index.Scores{Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1, BytesInCommon: an.Documents[set[0]].TextSize, Exact: true}
			for i := range set {
				for j := i + 1; j < len(set); j++ {
					fn(rn.num.Get(set[i]), rn.num.Get(set[j]), &s)
				}
			}
		}
		for k := range an.Pairs {
			p := &an.Pairs[k]
			bs := docsOf.Get(p.B)
			for _, na := range docsOf.Get(p.A) {
				for _, nb := range bs {
					if rn.scanned[na] || rn.scanned[nb] {
						fn(na, nb, &p.Scores)
					}
				}
			}
		}
	}
	// The millions of pairs of a large scan are sorted by name without
	// comparing names: counted by the rank of their first name, placed
	// where that rank's run starts, then sorted within each run by the
	// rank of the second (sort.Slice comparing names took a 50,000-file
	// scan's report 2 s; growing the list by appending copied it at each
	// doubling).
	start := make([]int, len(rn.names)+1)
	each(func(a, b int32, _ *index.Scores) { start[min(rn.rank[a], rn.rank[b])+1]++ })
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	rep.pairs = make([]reportPair, start[len(rn.names)])
	next := slices.Clone(start[:len(rn.names)])
	each(func(a, b int32, s *index.Scores) {
		ab, ba := s.ContainmentAB, s.ContainmentBA
		if rn.rank[a] > rn.rank[b] {
			a, b, ab, ba = b, a, ba, ab
		}
		i := next[rn.rank[a]]
		next[rn.rank[a]]++
		rep.pairs[i] = newReportPair(a, b, s, ab, ba)
	})
	// The runs are sorted in two halves of the pairs at once: the other
	// core is idle by then.
	bySecond := func(p, q reportPair) int { return cmp.Compare(rn.rank[p.b], rn.rank[q.b]) }
	sortRuns := func(from, to int) {
		for r := from; r < to; r++ {
			if lo, hi := start[r], start[r+1]; hi-lo > 1 {
				slices.SortFunc(rep.pairs[lo:hi], bySecond)
			}
		}
	}
	half, _ := slices.BinarySearch(start, len(rep.pairs)/2)
	half = min(half, len(rn.names))
	var wg sync.WaitGroup
	wg.Go(func() { sortRuns(0, half) })
	sortRuns(half, len(rn.names))
	wg.Wait()
	for _, set := range an.Identical {
		if !involves(set) {
			continue
		}
		var names []string
		for _, id := range set {
			names = append(names, rn.names[rn.num.Get(id)])
		}
		sort.Strings(names)
		rep.Identical = append(rep.Identical, names)
	}
	for _, fam := range an.Families {
		if !involves(fam.Members) {
			continue
		}
		fj := familyJSON{Pivot: rn.names[rn.num.Get(fam.Pivot)], Links: fam.Links, AvgResemblance: round(fam.AvgResemblance)}
		for _, m := range fam.Members {
			fj.Members = append(fj.Members, rn.names[rn.num.Get(m)])
		}
		sort.Strings(fj.Members)
		rep.Families = append(rep.Families, fj)
	}
	// In name order, not id order: ids follow the order files were
	// committed in, which concurrent extraction varies from run to run,
	// and two scans of the same files should print the same report.
	slices.SortFunc(rep.Identical, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	slices.SortStableFunc(rep.Families, func(a, b familyJSON) int {
		if c := cmp.Compare(len(b.Members), len(a.Members)); c != 0 {
			return c
		}
		return strings.Compare(a.Pivot, b.Pivot)
	})
	rep.names = rn.names
	return rep
}

// reportNames numbers the documents of an analysis and ranks their report
// names (this scan's paths, or the keys of documents indexed
// earlier) in name order, ties by id.
type reportNames struct {
	num     idmap.Map[index.DocID, int32]
	names   []string
	scanned []bool
	rank    []int32
}

func newReportNames(an *index.Analysis, scanned map[index.DocID]string) *reportNames {
	rn := &reportNames{}
	ids := slices.Sorted(maps.Keys(an.Documents))
	rn.num.Init(len(ids), slices.Values(ids))
	for _, id := range ids {
		name, ok := scanned[id]
		if !ok {
			name = an.Documents[id].Key
		}
		rn.num.Set(id, int32(len(rn.names)))
		rn.names = append(rn.names, name)
		rn.scanned = append(rn.scanned, ok)
	}
	order := make([]int32, len(rn.names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := strings.Compare(rn.names[a], rn.names[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // numbered in id order
	})
	rn.rank = make([]int32, len(order))
	for r, n := range order {
		rn.rank[n] = int32(r)
	}
	return rn
}

func round(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

// milli is x in thousandths, rounded as round rounds it. Scores are
// between 0 and 1; anything else is kept within what a uint16 holds.
func milli(x float64) uint16 {
	switch {
	case !(x > 0): // NaN too
		return 0
	case x >= math.MaxUint16/1000.0:
		return math.MaxUint16
	}
	return uint16(x*1000 + 0.5)
}

// fromMilli is the score k thousandths, as round would have returned it.
func fromMilli(k uint16) float64 { return float64(k) / 1000 }

// textOptions chooses what the text report shows.
type textOptions struct {
	pairs    bool    // every member and the pair table, not a summary
	limit    int     // at most this many rows per section; 0: all
	minScore float64 // pairs scoring less (resemblance and both containments) are left out
}

// shown returns how many of n rows a section shows under limit.
func (o textOptions) shown(n int) int {
	if o.limit > 0 && n > o.limit {
		return o.limit
	}
	return n
}

// more prints "… and N more" when a section was cut.
func more(w io.Writer, shown, n int, hint string) {
	if n > shown {
		fmt.Fprintf(w, "  … and %d more (%s)\n", n-shown, hint)
	}
}

func (r *report) writeText(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "%d files, %d documents indexed (attachments and archive members included), %d with errors\n", r.Files, r.Documents, len(r.Errors))
	if len(r.Errors) > 0 {
		fmt.Fprintln(w, "\nErrors (recorded in the index for manual review):")
		k := o.shown(len(r.Errors))
		for _, e := range r.Errors[:k] {
			fmt.Fprintf(w, "  %s: %s\n", e.Path, e.Error)
		}
		more(w, k, len(r.Errors), "--limit 0 lists them all")
	}
	r.writeSets(w, o)
	r.writeFamilies(w, o)
	if o.pairs {
		r.writePairs(w, o)
	} else if len(r.pairs) > 0 {
		fmt.Fprintln(w, "\n--pairs lists every near-copy pair with its scores; --json prints the whole report.")
	}
}

// writeSets prints the identical sets, largest first.
func (r *report) writeSets(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "\nIdentical sets: %d\n", len(r.Identical))
	sets := slices.Clone(r.Identical)
	slices.SortStableFunc(sets, func(a, b []string) int { return len(b) - len(a) })
	k := o.shown(len(sets))
	for i, set := range sets[:k] {
		if o.pairs {
			fmt.Fprintf(w, "  [%d] %d copies\n", i+1, len(set))
			for _, n := range set {
				fmt.Fprintf(w, "      %s\n", n)
			}
			continue
		}
		fmt.Fprintf(w, "  [%d] %d copies of %s\n", i+1, len(set), set[0])
	}
	more(w, k, len(sets), "--limit 0 lists them all")
}

// writeFamilies prints the near-copy families, largest first.
func (r *report) writeFamilies(w io.Writer, o textOptions) {
	fmt.Fprintf(w, "\nNear-copy families: %d\n", len(r.Families))
	fams := slices.Clone(r.Families)
	slices.SortStableFunc(fams, func(a, b familyJSON) int { return len(b.Members) - len(a.Members) })
	k := o.shown(len(fams))
	for i, f := range fams[:k] {
		fmt.Fprintf(w, "  [%d] %d documents, %d links, average resemblance %.0f%%, pivot %s\n", i+1, len(f.Members), f.Links, 100*f.AvgResemblance, f.Pivot)
		if o.pairs {
			for _, m := range f.Members {
				fmt.Fprintf(w, "      %s\n", m)
			}
		}
	}
	more(w, k, len(fams), "--limit 0 lists them all")
}

// writePairs prints the near-copy pairs scoring at least o.minScore.
func (r *report) writePairs(w io.Writer, o textOptions) {
	var rows []pairJSON
	for i := range r.pairs {
		if r.pairs[i].exact {
			continue
		}
		p := r.pairs[i].json(r.names)
		if max(p.Resemblance, p.ContainmentAB, p.ContainmentBA) >= o.minScore {
			rows = append(rows, p)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNear-copy pairs: %d\n", len(rows))
	fmt.Fprintf(w, "  %-6s %-6s %-6s %-9s %-4s %s\n", "resem", "a in b", "b in a", "bytes", "ham", "a ~ b")
	k := o.shown(len(rows))
	for _, p := range rows[:k] {
		fmt.Fprintf(w, "  %5.0f%% %5.0f%% %5.0f%% %9d %4d  %s ~ %s\n", 100*p.Resemblance, 100*p.ContainmentAB, 100*p.ContainmentBA, p.BytesInCommon, p.Hamming, p.A, p.B)
	}
	more(w, k, len(rows), "--limit 0 lists them all, --min-score keeps the closest")
	fmt.Fprintln(w, bytesLegend)
}

// bytesLegend follows a table of scores: a reviewer who sees 0 bytes in
// common beside a containment of 98 % (a one-word edit of a 1 KB text,
// whose only chunk the edit changed) should know why.
const bytesLegend = "  (bytes: text in whole chunks both share, a lower bound; a short text edited anywhere may share none)"
