package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/simdex/simdex/index"
)

// FileError is a file that a Scan could not find, read or fully index.
type FileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// scanFile is one file found under a scanned directory.
type scanFile struct {
	path string // as found
	rel  string // relative to its scanned directory (prefixed when several)
	info fs.FileInfo
}

// walkAll lists the regular files under dirs, adding what it could not
// list to problems.
func walkAll(dirs []string, problems *[]FileError) []scanFile {
	var files []scanFile
	for _, dir := range dirs {
		fs, errs := walk(dir, len(dirs) > 1)
		files = append(files, fs...)
		*problems = append(*problems, errs...)
	}
	return files
}

// indexing is what a scan's workers share.
type indexing struct {
	ing       *Ingester
	o         *ScanOptions
	files     []scanFile
	next      atomic.Int64 // the next file to index
	inFlight  *semaphore.Weighted
	preparing chan struct{}
	mu        sync.Mutex // guards what follows
	done      int
	scanned   map[index.DocID]string // this scan's documents → report path
	problems  *[]FileError
	counts    *ScanCounts
	fatal     error
}

// indexFiles indexes files, o.Workers at a time, and returns this scan's
// documents by the path reported; the files' errors are added to
// problems, the files counted in counts.
func indexFiles(ctx context.Context, ing *Ingester, o *ScanOptions, files []scanFile, problems *[]FileError, counts *ScanCounts) (map[index.DocID]string, error) {
	// Files are read and prepared on all cores but one, which is left to
	// the index's single writer: each waits for it, and with every core
	// preparing it waited for one behind them (see index.Index.Commit).
	x := &indexing{ing: ing, o: o, files: files, inFlight: semaphore.NewWeighted(o.InFlightBytes),
		preparing: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1)), scanned: map[index.DocID]string{}, problems: problems, counts: counts}
	var wg sync.WaitGroup
	for w := 0; w < o.Workers; w++ {
		wg.Go(func() { x.work(ctx) })
	}
	wg.Wait()
	if x.fatal != nil {
		return nil, x.fatal
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("scan interrupted: %w", err)
	}
	return x.scanned, nil
}

// work indexes files until none is left, ctx is done or a file fails.
func (x *indexing) work(ctx context.Context) {
	for {
		i := int(x.next.Add(1) - 1)
		if i >= len(x.files) || ctx.Err() != nil {
			return
		}
		sf := x.files[i]
		weight := min(max(sf.info.Size(), 1), x.o.InFlightBytes)
		if err := x.inFlight.Acquire(ctx, weight); err != nil {
			return // interrupted: reported by indexFiles
		}
		out, err := x.ing.ingestFile(ctx, x.preparing, sf)
		x.inFlight.Release(weight)
		if !x.record(sf, out, err) {
			return
		}
	}
}

// record notes what became of file sf, and reports whether to go on.
func (x *indexing) record(sf scanFile, out *Outcome, err error) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done++; x.o.Progress != nil {
		x.o.Progress(x.done, len(x.files))
	}
	if err != nil {
		if x.fatal == nil {
			x.fatal = err
		}
		return false
	}
	switch top := out.Results[0]; {
	case top.Duplicate:
		x.counts.Unchanged++
	case len(top.Replaced) > 0:
		x.counts.Changed++
	default:
		x.counts.New++
	}
	for j, r := range out.Results {
		// A child is named by its parent's report path followed by its
		// location inside it.
		name := sf.rel + out.Inputs[j].Doc.Key[len(out.Inputs[0].Doc.Key):]
		x.scanned[r.ID] = name
		if r.Err != nil {
			*x.problems = append(*x.problems, FileError{Path: name, Error: r.Err.Error()})
		}
	}
	return true
}

// walk lists the regular files under dir, following links to files.
// Unreadable directories, broken links, links to directories and special
// files (devices, pipes, sockets) are reported, never silently skipped.
func walk(dir string, prefix bool) ([]scanFile, []FileError) {
	var files []scanFile
	var errs []FileError
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, FileError{Path: path, Error: err.Error()})
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
			errs = append(errs, FileError{Path: path, Error: err.Error()})
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
		errs = append(errs, FileError{Path: dir, Error: err.Error()})
	}
	return files, errs
}

// ScanSource is the source of every document a scan indexes; its key is
// scanKeyPrefix followed by the file's absolute path, slash-separated.
const ScanSource = "scan"

const scanKeyPrefix = "fs:"

// ScanPath returns the path of the file a scan indexed as d (a child's,
// the file's path followed by its location inside it), and false when d
// was not indexed by a scan.
func ScanPath(d index.Doc) (string, bool) {
	p, ok := strings.CutPrefix(d.Key, scanKeyPrefix)
	return filepath.FromSlash(p), ok && d.Source == ScanSource
}

// ingestFile indexes one file. A file that cannot be opened is recorded in
// the index with its error, so that it is reported and never lost. It
// reads, extracts and fingerprints the file holding one of preparing's
// slots, and gives it back before waiting for the commit.
func (ing *Ingester) ingestFile(ctx context.Context, preparing chan struct{}, sf scanFile) (*Outcome, error) {
	abs, err := filepath.Abs(sf.path)
	if err != nil {
		abs = sf.path
	}
	obj := Object{Key: scanKeyPrefix + filepath.ToSlash(abs), Name: sf.rel, Source: ScanSource, ModTime: sf.info.ModTime(),
		VersionID: strconv.FormatInt(sf.info.ModTime().UnixNano(), 10) + "-" + strconv.FormatInt(sf.info.Size(), 10)}
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
