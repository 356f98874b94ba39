package ingest

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
)

// ScanOptions configure a Scan.
type ScanOptions struct {
	// Dirs are the directories whose regular files are indexed.
	Dirs []string
	// IndexPath is the index file, opened as a bulk load (sqlite.Loader).
	IndexPath string
	// Durability of the index's commits.
	Durability sqlite.Durability
	// Index and Extract configure the index and the extraction. A scan
	// commits ScanBatch documents at most at a time, whatever
	// Index.MaxBatch says.
	Index   index.Options
	Extract extract.Options
	// Thresholds decide the near-copy pairs and families analysed.
	Thresholds index.Thresholds
	// Workers is how many files are in flight at most; InFlightBytes, how
	// many of their bytes (a larger file is indexed alone).
	Workers       int
	InFlightBytes int64
	// Logger receives the phases' timings (debug) and the store's logs;
	// nil discards them.
	Logger *slog.Logger
	// Progress, if not nil, is called with the files done and found, once
	// per file.
	Progress func(done, total int)
}

// ScanResult is what a Scan found: its analysis covers the pairs and
// families involving this scan's documents. The index is settled and
// closed in the background meanwhile: Close waits for it.
type ScanResult struct {
	Files    int                    // regular files found
	Scanned  map[index.DocID]string // this scan's documents, by the path reported
	Problems []FileError            // files that could not be fully indexed, in no order
	Counts   ScanCounts             // the files by what the index held of them
	Analysis *index.Analysis

	closed   chan struct{}
	closeErr error
}

// ScanCounts count a scan's files by what the index held of them before.
type ScanCounts struct {
	New       int // not indexed
	Changed   int // indexed in another version, which this one replaced
	Unchanged int // indexed in this version: nothing written
}

// Close waits for the index to be settled and closed, and returns what
// went wrong doing so.
func (r *ScanResult) Close() error {
	<-r.closed
	return r.closeErr
}

// ScanBatch is how many documents one of a scan's commits writes at
// most. A commit costs mostly the posting pages it rewrites, whatever its
// size: the indexing phase of a 50,000-file scan took 38 s in commits of
// 256 documents (the daemon's default, which keeps each document's wait
// short), 22.5 s in commits of 2,048, and no less in commits of 8,192.
const ScanBatch = 2048

// ScanWorkers is how many files a scan has in flight at most by default.
// Each waits for the group commit that stores it: twice ScanBatch lets
// the next batch be extracted and fingerprinted while one commits, rather
// than after (with 2 files per core in flight, commits held a few
// documents each and a scan of 10,000 files took 50 s of CPU on its
// commits; with 256, 16 s).
const ScanWorkers = 2 * ScanBatch

// ScanInFlightBytes bounds the memory those files hold: each holds its
// bytes and its text until committed, so many large files cannot exhaust
// memory however many are in flight.
const ScanInFlightBytes = 256 << 20

// Scan indexes every regular file under o.Dirs (incrementally: unchanged
// files are skipped) into the index at o.IndexPath, and analyses the
// pairs and families involving them. A file that cannot be read or
// extracted is recorded in the index with its error and listed in
// Problems. Into an empty index, the postings are inserted once, in key
// order, before the analysis, which reads them, rather than at each
// commit: 9 of the 22 s a 50,000-file scan spent indexing (sqlite.Loader).
func Scan(ctx context.Context, o ScanOptions) (*ScanResult, error) {
	sc, err := openScan(ctx, &o)
	if err != nil {
		return nil, err
	}
	res := &ScanResult{closed: make(chan struct{})}
	// settled, once settling, is the deferred work settled beside the
	// analysis: the close waits for it.
	settled, settling := make(chan error, 1), false
	defer func() {
		if res.Analysis == nil { // failed: close before returning
			if settling {
				<-settled
			}
			sc.Close()
		}
	}()
	start := time.Now()
	files := walkAll(o.Dirs, &res.Problems)
	res.Files = len(files)
	if res.Scanned, err = indexFiles(ctx, sc.Ingester, &o, files, &res.Problems, &res.Counts); err != nil {
		return nil, err
	}
	o.Logger.Debug("scan: files indexed", "files", len(files), "seconds", time.Since(start).Seconds())
	// The postings deferred during indexing are made searchable before
	// the analysis, which reads them: into an empty index they are
	// sorted in memory and read there. What the load deferred is then
	// written beside the analysis, by the writer, idle until the close
	// (3.5 s of a 50,000-file scan, which had followed the analysis).
	if err := sc.Store.SettlePostings(ctx); err != nil {
		return nil, err
	}
	o.Logger.Debug("scan: postings settled", "seconds", time.Since(start).Seconds())
	settling = true
	go func() { settled <- sc.Store.Settle(ctx) }()
	// Only pairs with this scan's documents are reported: scanned into a
	// large index, the rest of the index's pairs need not be scored.
	an, err := sc.Index.AnalyseInvolving(ctx, o.Thresholds, slices.Collect(maps.Keys(res.Scanned)))
	if err != nil {
		return nil, err
	}
	o.Logger.Debug("scan: analysed", "pairs", len(an.Pairs), "families", len(an.Families), "seconds", time.Since(start).Seconds())
	// The caller needs nothing more from the index: the store is closed
	// while it reports, once what the load deferred is settled. Closing
	// copies the log into the database and frees the page caches page by
	// page (2 CPU-s), which had followed the report.
	res.Analysis = an
	go func() {
		res.closeErr = errors.Join(<-settled, sc.Close())
		close(res.closed)
	}()
	return res, nil
}

// openScan opens the index at o.IndexPath as a bulk load, and the stage
// that extracts and indexes files into it.
func openScan(ctx context.Context, o *ScanOptions) (*Engine[*sqlite.Loader], error) {
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	iopts := o.Index
	iopts.Logger = o.Logger
	// A scan wants throughput, not the latency of each document: larger
	// commits rewrite each posting page fewer times.
	iopts.MaxBatch = ScanBatch
	// A scan queries no anchor lists one document at a time (its analysis
	// reads them whole): they are not loaded into memory.
	// An existing index keeps the scheme it was built with when only the
	// defaults of later sketch parameters differ.
	recorded, err := sqlite.RecordedScheme(ctx, o.IndexPath)
	if err != nil {
		return nil, err
	}
	iopts = iopts.ForScheme(recorded)
	load, err := sqlite.OpenLoader(ctx, o.IndexPath, sqlite.Options{Scheme: iopts.Scheme(), Durability: o.Durability, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return OpenEngine(ctx, load, o.IndexPath, iopts, o.Extract)
}
