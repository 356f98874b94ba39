// Package fs is the connector for a watched folder: the inbox of the
// embedded default and the easiest way to try simdex out.
//
// The Source polls: every Interval it walks the folder and compares each
// file's size and modification time with what it saw before. Polling is
// portable and also works where change notification does not (network and
// FUSE file systems, bind-mounted container volumes, trees larger than the
// inotify watch limit); its cost, one stat per file per interval, is small
// for an inbox.
//
// Semantics:
//
//   - A file is emitted as Created once it has been unchanged for Settle, so
//     that half-written files are not read: either its modification time is
//     at least Settle old, or the Source has seen the same size and
//     modification time for at least Settle. Writers that can should still
//     write elsewhere (or to a skipped temporary name) and rename.
//   - Event.Key is the path relative to Dir with '/' separators,
//     VersionID and ETag are the stamp "<mtime ns>-<size>", Size is the
//     size and Time the modification time. A change makes a new stamp and a
//     new event; Open fails with a Permanent connectors.ErrObjectMissing
//     error once the file no longer has the event's stamp (the newer event
//     follows, or a Removed one).
//   - A file that disappears is emitted as Removed, with the stamp of the
//     last version emitted.
//   - Dotfiles and dot-directories, and temporary files (*.tmp, *.part,
//     ~$*) are skipped; so are symbolic links and anything that is not a
//     regular file.
//   - A name that is not valid UTF-8 (a file named in Latin-1, say) is
//     emitted like any other, its Key holding the bytes as they are, so
//     that its Removed event names it the same way; ingest records such an
//     object in the index with ingest.ErrInvalidName rather than indexing
//     its text.
//   - Nothing is persisted: each Run starts by emitting every file present,
//     and relies on the pipeline's idempotency check to skip files already
//     indexed (their stamps, hence idempotency keys, are unchanged). Files
//     deleted while simdex was not running produce no Removed event; the
//     daemon's reconciliation must compare its index with the folder.
//   - Settlement: Done(nil) needs no action. Done with a transient error
//     makes the same version come again on a later poll, after a backoff
//     that doubles from Interval up to five minutes. Done with any other
//     error is logged and the file is not retried until it changes.
//   - If the folder or a subfolder cannot be read, the error is logged and
//     polling goes on; files under it are not reported as removed.
package fs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/connectors"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultInterval = 2 * time.Second
	DefaultSettle   = time.Second
)

// maxRetryDelay caps the backoff of transient failures.
const maxRetryDelay = 5 * time.Minute

// Errors callers branch on with errors.Is.
var (
	// ErrInvalidConfig is returned by New for a bad Config; the message
	// names the field.
	ErrInvalidConfig = errors.New("invalid fs source config")
	// ErrRunning is returned by Run when the Source is already running.
	ErrRunning = errors.New("source already running")
)

// Config configures a watched folder.
type Config struct {
	// Dir is the folder to watch. Required unless FS is set.
	Dir string
	// Name is Event.Source (default "fs:" + Dir).
	Name string
	// Interval is the time between polls (default 2s).
	Interval time.Duration
	// Settle is how long a file must stay unchanged before it is emitted
	// (default 1s).
	Settle time.Duration
	// FS is the file system to watch (default: the folder Dir, read like
	// os.DirFS but accepting names that are not valid UTF-8). It must
	// implement fs.ReadDirFS or fs.ReadDirFile directories, and Stat on
	// its files.
	FS iofs.FS
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
}

// Source is a watched folder. Create it with New.
type Source struct {
	cfg     Config
	log     *slog.Logger
	running atomic.Bool
}

var _ connectors.Source = (*Source)(nil)

// New validates cfg and applies defaults. It does no I/O: a missing folder
// is reported (and waited for) by Run.
func New(cfg Config) (*Source, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalidConfig, field, fmt.Sprintf(format, args...)))
	}
	if cfg.Dir == "" && cfg.FS == nil {
		bad("Dir", "must not be empty")
	}
	if cfg.Dir == "" && cfg.Name == "" {
		bad("Name", "must be set when Dir is empty")
	}
	if cfg.Interval < 0 {
		bad("Interval", "must not be negative, got %s", cfg.Interval)
	}
	if cfg.Settle < 0 {
		bad("Settle", "must not be negative, got %s", cfg.Settle)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Dir != "" {
		cfg.Dir = filepath.Clean(cfg.Dir)
	}
	if cfg.Name == "" {
		cfg.Name = "fs:" + cfg.Dir
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Settle == 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.FS == nil {
		cfg.FS = dirFS(cfg.Dir)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Source{cfg: cfg, log: cfg.Logger.With("component", "connector/fs", "source", cfg.Name)}, nil
}

// Run polls the folder and delivers events on out until ctx is cancelled,
// returning nil then. It starts by emitting every file present. It never
// closes out. Only one Run may be active at a time.
func (s *Source) Run(ctx context.Context, out chan<- connectors.Event) error {
	if !s.running.CompareAndSwap(false, true) {
		return fmt.Errorf("run %s: %w", s.cfg.Name, ErrRunning)
	}
	defer s.running.Store(false)
	w := newWatch(s)
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		for _, ev := range w.scan(s.cfg.Now()) {
			select {
			case out <- ev:
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
	}
}

// Reopen opens the file at path p (relative to the folder, as in its
// events) again, for a reviewer, if it is still the version versionID
// that an event delivered; otherwise the error wraps
// connectors.ErrObjectMissing. It declares no content type.
func (s *Source) Reopen(_ context.Context, p, versionID string) (io.ReadCloser, string, error) {
	st, err := parseStamp(versionID)
	if err != nil {
		return nil, "", &connectors.Error{Op: "open", Source: s.cfg.Name, Key: p, Kind: connectors.Invalid, Err: err}
	}
	f, err := open(s.cfg.FS, s.cfg.Name, p, st)
	return f, "", err
}

// stamp identifies a file version.
type stamp struct {
	mtime int64 // ns since the epoch
	size  int64
}

func (st stamp) String() string {
	return strconv.FormatInt(st.mtime, 10) + "-" + strconv.FormatInt(st.size, 10)
}

// parseStamp reads a stamp written by stamp.String.
func parseStamp(v string) (stamp, error) {
	m, n, ok := strings.Cut(v, "-")
	mtime, err1 := strconv.ParseInt(m, 10, 64)
	size, err2 := strconv.ParseInt(n, 10, 64)
	if !ok || err1 != nil || err2 != nil || size < 0 {
		return stamp{}, fmt.Errorf("version %q is not a file version (mtime-size)", v)
	}
	return stamp{mtime: mtime, size: size}, nil
}

// file is what a watch knows about one path.
type file struct {
	seen    stamp     // last observed
	since   time.Time // when seen was first observed
	emitted stamp     // last emitted; zero if none
	// A transient failure of the emitted version asks for it again at
	// retryAt; failures counts consecutive ones.
	retry    bool
	retryAt  time.Time
	failures int
}

// tombstone is a Removed event to emit again after a transient failure.
type tombstone struct {
	stamp    stamp
	pending  bool // emitted and not settled yet
	retryAt  time.Time
	failures int
}

// watch is the state of one Run. Done functions update it concurrently
// with scans.
type watch struct {
	s *Source

	mu       sync.Mutex
	files    map[string]*file
	removed  map[string]*tombstone
	reported map[string]bool // bad names already logged
	dirErr   bool            // the folder itself was unreadable last time
}

func newWatch(s *Source) *watch {
	return &watch{s: s, files: map[string]*file{}, removed: map[string]*tombstone{}, reported: map[string]bool{}}
}

// scan walks the folder once and returns the events due at now.
func (w *watch) scan(now time.Time) []connectors.Event {
	cfg := w.s.cfg
	present := map[string]stamp{}
	var unreadable []string // directories whose contents are unknown
	err := iofs.WalkDir(cfg.FS, ".", func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			w.report(p, "read folder; will retry on the next poll", err)
			unreadable = append(unreadable, p)
			if d != nil && d.IsDir() {
				return iofs.SkipDir
			}
			return nil
		}
		if p == "." {
			return nil
		}
		if skipName(d.Name()) {
			if d.IsDir() {
				return iofs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // directories are walked; links, devices, pipes skipped
		}
		info, err := d.Info()
		if errors.Is(err, iofs.ErrNotExist) {
			return nil // gone since the directory was read
		}
		if err != nil {
			w.report(p, "stat file; will retry on the next poll", err)
			unreadable = append(unreadable, p)
			return nil
		}
		present[p] = stamp{mtime: info.ModTime().UnixNano(), size: info.Size()}
		return nil
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if !w.dirErr {
			w.s.log.Error("read watched folder; will retry on the next poll", "dir", cfg.Dir, "err", err)
		}
		w.dirErr = true
		return nil // contents unknown: report nothing, remove nothing
	}
	if w.dirErr {
		w.s.log.Info("watched folder readable again", "dir", cfg.Dir)
		w.dirErr = false
	}
	var evs []connectors.Event
	for p, st := range present {
		f := w.files[p]
		if f == nil {
			f = &file{seen: st, since: now}
			w.files[p] = f
			delete(w.removed, p)
		} else if f.seen != st {
			f.seen, f.since = st, now
			f.retry, f.failures = false, 0
		}
		settled := now.Sub(time.Unix(0, st.mtime)) >= cfg.Settle || now.Sub(f.since) >= cfg.Settle
		due := f.seen != f.emitted || (f.retry && !now.Before(f.retryAt))
		if settled && due {
			f.emitted, f.retry = st, false
			evs = append(evs, w.created(p, st))
		}
	}
	for p, f := range w.files {
		if _, ok := present[p]; ok || under(p, unreadable) {
			continue
		}
		delete(w.files, p)
		if f.emitted != (stamp{}) {
			evs = append(evs, w.removedEvent(p, f.emitted, now))
		}
	}
	for p, ts := range w.removed {
		if _, ok := present[p]; ok {
			delete(w.removed, p)
			continue
		}
		if !ts.pending && !now.Before(ts.retryAt) {
			ts.pending = true
			evs = append(evs, w.removedEvent(p, ts.stamp, now))
		}
	}
	slices.SortFunc(evs, func(a, b connectors.Event) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), cmp.Compare(a.Kind, b.Kind))
	})
	return evs
}

// report logs a problem with p once per Run.
func (w *watch) report(p, msg string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reported[p] {
		return
	}
	w.reported[p] = true
	w.s.log.Error(msg, "path", strconv.Quote(p), "err", err)
}

// under reports whether p lies under one of dirs.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// skipName reports whether a file or directory name is ignored.
func skipName(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") ||
		strings.HasSuffix(lower, ".tmp") || strings.HasSuffix(lower, ".part")
}

func (w *watch) created(p string, st stamp) connectors.Event {
	cfg := w.s.cfg
	ev := connectors.Event{
		Source:    cfg.Name,
		Kind:      connectors.Created,
		Key:       p,
		VersionID: st.String(),
		ETag:      st.String(),
		Size:      st.size,
		Time:      time.Unix(0, st.mtime),
		Open: func(context.Context) (io.ReadCloser, error) {
			return open(cfg.FS, cfg.Name, p, st)
		},
	}
	ev.Done = func(_ context.Context, err error) { w.settleCreated(p, st, err) }
	return ev
}

func (w *watch) removedEvent(p string, st stamp, now time.Time) connectors.Event {
	return connectors.Event{
		Source:    w.s.cfg.Name,
		Kind:      connectors.Removed,
		Key:       p,
		VersionID: st.String(),
		Size:      -1,
		Time:      now,
		Done:      func(_ context.Context, err error) { w.settleRemoved(p, st, err) },
	}
}

func (w *watch) settleCreated(p string, st stamp, err error) {
	if err == nil {
		w.mu.Lock()
		if f := w.files[p]; f != nil && f.emitted == st {
			f.failures = 0
		}
		w.mu.Unlock()
		return
	}
	if !connectors.IsTransient(err) {
		w.s.log.Error("file not indexed; it will be retried when it changes", "path", p, "version", st.String(), "err", err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.files[p]
	if f == nil || f.emitted != st {
		return // removed or changed meanwhile: a newer event covers it
	}
	f.failures++
	f.retry = true
	f.retryAt = w.s.cfg.Now().Add(w.retryDelay(f.failures))
	w.s.log.Warn("file not indexed; will retry", "path", p, "version", st.String(), "retry_at", f.retryAt, "err", err)
}

func (w *watch) settleRemoved(p string, st stamp, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ts := w.removed[p]
	if err == nil || !connectors.IsTransient(err) {
		if err != nil {
			w.s.log.Error("removal not recorded; it will not be retried", "path", p, "err", err)
		}
		if ts != nil && ts.stamp == st {
			delete(w.removed, p)
		}
		return
	}
	if _, back := w.files[p]; back {
		return // the file reappeared; its Created event supersedes this one
	}
	if ts == nil {
		ts = &tombstone{stamp: st}
		w.removed[p] = ts
	}
	ts.pending = false
	ts.failures++
	ts.retryAt = w.s.cfg.Now().Add(w.retryDelay(ts.failures))
	w.s.log.Warn("removal not recorded; will retry", "path", p, "retry_at", ts.retryAt, "err", err)
}

// retryDelay is Interval doubled per earlier consecutive failure, capped.
func (w *watch) retryDelay(failures int) time.Duration {
	d := w.s.cfg.Interval
	for i := 1; i < failures && d < maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}

// open opens p if it still has stamp st.
func open(fsys iofs.FS, source, p string, st stamp) (io.ReadCloser, error) {
	fail := func(kind connectors.ErrorKind, err error) error {
		return &connectors.Error{Op: "open", Source: source, Key: p, Kind: kind, Err: err}
	}
	f, err := fsys.Open(p)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, fail(connectors.Permanent, fmt.Errorf("%w: %w", connectors.ErrObjectMissing, err))
	}
	if err != nil {
		return nil, fail(classify(err), err)
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fail(classify(err), err)
	}
	if got := (stamp{mtime: info.ModTime().UnixNano(), size: info.Size()}); got != st {
		_ = f.Close()
		return nil, fail(connectors.Permanent, fmt.Errorf("%w: %s changed since the event (now version %s, event version %s); a newer event follows",
			connectors.ErrObjectMissing, path.Base(p), got, st))
	}
	return f, nil
}

// dirFS is os.DirFS(dir) without its refusal of names that are not valid
// UTF-8 (io/fs.ValidPath), which Unix file systems hold: such a file must
// be listed, opened and recorded, not lost.
type dirFS string

var (
	_ iofs.ReadDirFS = dirFS("")
	_ iofs.StatFS    = dirFS("")
)

// path returns the OS path of name, refusing what fs.ValidPath refuses
// but invalid UTF-8.
func (d dirFS) path(op, name string) (string, error) {
	if !iofs.ValidPath(strings.ToValidUTF8(name, "\uFFFD")) {
		return "", &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	return filepath.Join(string(d), filepath.FromSlash(name)), nil
}

// Open opens the named file.
func (d dirFS) Open(name string) (iofs.File, error) {
	p, err := d.path("open", name)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// ReadDir lists the named directory, sorted by name.
func (d dirFS) ReadDir(name string) ([]iofs.DirEntry, error) {
	p, err := d.path("readdir", name)
	if err != nil {
		return nil, err
	}
	return os.ReadDir(p)
}

// Stat describes the named file.
func (d dirFS) Stat(name string) (iofs.FileInfo, error) {
	p, err := d.path("stat", name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

// classify tells errors that a retry may cure from those it will not.
func classify(err error) connectors.ErrorKind {
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return connectors.Permanent
	case errors.Is(err, iofs.ErrPermission):
		return connectors.Permanent
	}
	return connectors.Transient
}
