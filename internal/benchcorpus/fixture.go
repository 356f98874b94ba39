package benchcorpus

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver for fixture checks

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/normalise"
	"github.com/simdex/simdex/index/sqlite"
)

// CacheDir returns where fixtures are kept: $SIMDEX_CACHE/bench, by
// default ~/.cache/simdex/bench.
func CacheDir() (string, error) {
	dir := os.Getenv("SIMDEX_CACHE")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the benchmark cache: %w", err)
		}
		dir = filepath.Join(home, ".cache", "simdex")
	}
	return filepath.Join(dir, "bench"), nil
}

// Marker is what a fixture was built from and how. A cached fixture is
// reused only when every field up to StoreSchema equals what this build
// of simdex would write.
type Marker struct {
	Generator int    `json:"generator"`
	Sources   string `json:"sources_sha256"`
	Normalise int    `json:"normalise_version"`
	// Scheme is the index's fingerprint scheme (index.Options.Scheme).
	Scheme uint32 `json:"scheme"`
	// StoreSchema is the SQLite store's schema version (PRAGMA
	// user_version of a store index/sqlite creates).
	StoreSchema int  `json:"store_schema"`
	Spec        Spec `json:"spec"`

	// How the fixture was built: informational.
	Built         time.Time `json:"built"`
	BuildSeconds  float64   `json:"build_seconds"`
	DocsPerSecond float64   `json:"docs_per_second"`
	// CPUSeconds is the CPU time of the building process (every thread):
	// on a shared machine, docs per CPU-second is the steadier figure.
	CPUSeconds float64 `json:"cpu_seconds"`
	Workers    int     `json:"workers"`
	Batch      int     `json:"batch"`
	CacheMiB   int     `json:"cache_mib"`
	GoMaxProcs int     `json:"gomaxprocs"`
	// MigratedFrom is the store schema the fixture was built with, when
	// it was migrated in place since; MigrateSeconds how long that took.
	MigratedFrom   int     `json:"migrated_from,omitempty"`
	MigrateSeconds float64 `json:"migrate_seconds,omitempty"`
}

// same reports whether m describes the fixture want asks for, and if not,
// the first difference.
func (m Marker) same(want Marker) (bool, string) {
	switch {
	case m.Generator != want.Generator:
		return false, fmt.Sprintf("generator %d, want %d", m.Generator, want.Generator)
	case m.Sources != want.Sources:
		return false, "source corpora changed"
	case m.Normalise != want.Normalise:
		return false, fmt.Sprintf("normalisation version %d, want %d", m.Normalise, want.Normalise)
	case m.Scheme != want.Scheme:
		return false, fmt.Sprintf("fingerprint scheme %d, want %d", m.Scheme, want.Scheme)
	case m.StoreSchema != want.StoreSchema:
		return false, fmt.Sprintf("store schema %d, want %d", m.StoreSchema, want.StoreSchema)
	case m.Spec != want.Spec:
		return false, fmt.Sprintf("spec %+v, want %+v", m.Spec, want.Spec)
	}
	return true, ""
}

// BuildOptions tune how a fixture is built.
type BuildOptions struct {
	// Workers is how many goroutines generate documents and call
	// index.Add; default GOMAXPROCS+1.
	Workers int
	// Batch is how many documents each index.Add call (one transaction)
	// carries; default one fiftieth of the documents, between 256 and
	// 16,384. Every transaction rewrites most pages of the posting tables
	// once they are large, so few large ones are much faster than many
	// small ones.
	Batch int
	// CacheMiB is the store writer's page cache; default 64 MiB plus 2 MiB
	// per thousand documents, so that the posting tables stay cached.
	CacheMiB int
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

func (o *BuildOptions) defaults(docs int) BuildOptions {
	var b BuildOptions
	if o != nil {
		b = *o
	}
	if b.Workers <= 0 {
		b.Workers = runtime.GOMAXPROCS(0) + 1
	}
	if b.Batch <= 0 {
		b.Batch = min(max(docs/50, 256), 16384)
	}
	if b.CacheMiB <= 0 {
		b.CacheMiB = 64 + 2*docs/1000
	}
	if b.Logger == nil {
		b.Logger = slog.New(slog.DiscardHandler)
	}
	return b
}

// Fixture is a built index of a Corpus in the cache. Benchmarks open it
// read-only by convention: write to a Clone.
type Fixture struct {
	// Dir is the fixture's directory; Path its SQLite index.
	Dir, Path string
	Corpus    *Corpus
	Marker    Marker
	ids       []index.DocID
}

// IndexOptions are the index options fixtures are built and opened with:
// the defaults.
func IndexOptions() index.Options { return index.DefaultOptions() }

// Ensure returns the fixture of spec, building it into the cache when it
// is missing or stale (its marker differs from what this build would
// write). Processes that ask for the same fixture at once wait for one
// build.
func Ensure(ctx context.Context, spec Spec, opts *BuildOptions) (*Fixture, error) {
	c, err := New(spec)
	if err != nil {
		return nil, err
	}
	o := opts.defaults(c.Len())
	spec = c.Spec()
	root, err := CacheDir()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("corpus-%d-seed%d-g%d-m%d", spec.Docs, spec.Seed, spec.Groups, spec.MaxMembers)
	if spec.KeepText {
		name += "-text"
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, fmt.Errorf("create benchmark cache %s: %w", root, err)
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return nil, fmt.Errorf("lock fixture %s: %w", dir, err)
	}
	defer unlock()
	want, err := expectedMarker(ctx, c)
	if err != nil {
		return nil, err
	}
	f := &Fixture{Dir: dir, Path: filepath.Join(dir, "index.db"), Corpus: c}
	reason, err := f.load(ctx, want)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		return f, nil
	}
	if migrated, err := f.migrate(ctx, want, o.Logger); err != nil {
		return nil, err
	} else if migrated {
		return f, nil
	}
	o.Logger.Info("building benchmark fixture", "dir", dir, "docs", spec.Docs, "why", reason)
	tmp := dir + ".tmp"
	for _, d := range []string{dir, tmp} {
		if err := os.RemoveAll(d); err != nil {
			return nil, fmt.Errorf("remove stale fixture %s: %w", d, err)
		}
	}
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return nil, fmt.Errorf("create fixture %s: %w", tmp, err)
	}
	m, ids, err := Build(ctx, c, filepath.Join(tmp, "index.db"), &o)
	if err != nil {
		return nil, err
	}
	m.Generator, m.Sources, m.Normalise, m.Scheme, m.StoreSchema = want.Generator, want.Sources, want.Normalise, want.Scheme, want.StoreSchema
	if err := writeIDs(filepath.Join(tmp, "ids.bin"), ids); err != nil {
		return nil, err
	}
	if err := writeMarker(tmp, m); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("install fixture %s: %w", dir, err)
	}
	f.Marker, f.ids = m, ids
	return f, nil
}

// load reads the cached fixture into f, or returns why it must be built.
func (f *Fixture) load(ctx context.Context, want Marker) (string, error) {
	m, err := readMarker(f.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return "not built yet", nil
	}
	if errors.Is(err, errBadMarker) {
		return err.Error(), nil
	}
	if err != nil {
		return "", err
	}
	if ok, why := m.same(want); !ok {
		return "stale: " + why, nil
	}
	// The marker could outlive a store replaced by hand: check the file.
	schema, scheme, err := storeVersion(ctx, f.Path)
	if err != nil {
		return "unreadable index: " + err.Error(), nil
	}
	if schema != want.StoreSchema || scheme != strconv.FormatUint(uint64(want.Scheme), 10) {
		return fmt.Sprintf("index file has schema %d and scheme %s", schema, scheme), nil
	}
	ids, err := readIDs(filepath.Join(f.Dir, "ids.bin"), want.Spec.Docs)
	if err != nil {
		return "unreadable ids: " + err.Error(), nil
	}
	f.Marker, f.ids = m, ids
	return "", nil
}

// migrate brings a fixture that differs from want only by an older store
// schema up to date in place, as an upgraded simdex would its index,
// instead of rebuilding it (15 minutes at 1,000,000 documents). It
// reports whether it did; each schema step is one transaction, and the
// marker is rewritten after them, so an interrupted migration is resumed.
func (f *Fixture) migrate(ctx context.Context, want Marker, log *slog.Logger) (bool, error) {
	m, err := readMarker(f.Dir)
	if err != nil {
		return false, nil // not built, or unreadable: build it
	}
	old := m.StoreSchema
	m.StoreSchema = want.StoreSchema
	if ok, _ := m.same(want); !ok || old >= want.StoreSchema {
		return false, nil
	}
	schema, scheme, err := storeVersion(ctx, f.Path)
	if err != nil || schema < old || schema > want.StoreSchema || scheme != strconv.FormatUint(uint64(want.Scheme), 10) {
		return false, nil
	}
	log.Info("migrating benchmark fixture", "dir", f.Dir, "from", schema, "to", want.StoreSchema)
	start := time.Now()
	st, err := sqlite.Open(ctx, f.Path, sqlite.Options{Scheme: want.Scheme, Durability: sqlite.Normal, Logger: log})
	if err != nil {
		return false, fmt.Errorf("migrate fixture %s: %w", f.Dir, err)
	}
	if err := st.Close(); err != nil {
		return false, fmt.Errorf("migrate fixture %s: %w", f.Dir, err)
	}
	m.MigratedFrom, m.MigrateSeconds = old, time.Since(start).Seconds()
	log.Info("migrated benchmark fixture", "dir", f.Dir, "seconds", m.MigrateSeconds)
	if err := writeMarker(f.Dir, m); err != nil {
		return false, err
	}
	reason, err := f.load(ctx, want)
	if err != nil {
		return false, err
	}
	if reason != "" {
		return false, fmt.Errorf("migrate fixture %s: still stale: %s", f.Dir, reason)
	}
	return true, nil
}

// errBadMarker reports a marker file that does not decode.
var errBadMarker = errors.New("unreadable marker")

// readMarker reads the marker of the fixture in dir.
func readMarker(dir string) (Marker, error) {
	var m Marker
	b, err := os.ReadFile(filepath.Join(dir, "marker.json"))
	if err != nil {
		return m, fmt.Errorf("read fixture marker: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %w", errBadMarker, err)
	}
	return m, nil
}

// writeMarker writes m as the marker of the fixture in dir, replacing any
// atomically.
func writeMarker(dir string, m Marker) error {
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode fixture marker: %w", err)
	}
	tmp := filepath.Join(dir, "marker.json.tmp")
	if err := writeFileSync(tmp, append(mb, '\n')); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "marker.json")); err != nil {
		return fmt.Errorf("write fixture marker: %w", err)
	}
	return nil
}

// expectedMarker is the marker a fixture of c built now would carry.
func expectedMarker(ctx context.Context, c *Corpus) (Marker, error) {
	schema, err := currentStoreSchema(ctx)
	if err != nil {
		return Marker{}, err
	}
	// The trained text is named by its hash (Sources), not its directory.
	spec := c.Spec()
	spec.Sources = ""
	return Marker{Generator: Generator, Sources: c.SourcesHash(), Normalise: normalise.Version,
		Scheme: IndexOptions().Scheme(), StoreSchema: schema, Spec: spec}, nil
}

// currentStoreSchema creates an empty store and reads its schema version:
// the version index/sqlite writes today.
func currentStoreSchema(ctx context.Context) (int, error) {
	dir, err := os.MkdirTemp("", "benchcorpus-probe-")
	if err != nil {
		return 0, fmt.Errorf("probe store schema: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "probe.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: IndexOptions().Scheme(), Durability: sqlite.Normal})
	if err != nil {
		return 0, fmt.Errorf("probe store schema: %w", err)
	}
	if err := st.Close(); err != nil {
		return 0, fmt.Errorf("probe store schema: %w", err)
	}
	v, _, err := storeVersion(ctx, path)
	return v, err
}

// storeVersion reads a store's schema version and fingerprint scheme
// without migrating it.
func storeVersion(ctx context.Context, path string) (int, string, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, "", fmt.Errorf("read store version: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, "", fmt.Errorf("read store version of %s: %w", path, err)
	}
	defer db.Close()
	var v int
	var scheme string
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, "", fmt.Errorf("read store version of %s: %w", path, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'scheme'").Scan(&scheme); err != nil {
		return 0, "", fmt.Errorf("read fingerprint scheme of %s: %w", path, err)
	}
	return v, scheme, nil
}

// Build indexes every document of c into a new SQLite store at path, from
// several goroutines in large batches, and returns the build's marker
// (without the version fields Ensure fills in) and the id each document
// got.
func Build(ctx context.Context, c *Corpus, path string, opts *BuildOptions) (Marker, []index.DocID, error) {
	o := opts.defaults(c.Len())
	iopts := IndexOptions()
	iopts.KeepText = c.Spec().KeepText
	// One transaction per Add call; a writer that finds several calls
	// queued commits them together.
	iopts.MaxBatch = 2 * o.Batch
	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: iopts.Scheme(), Durability: sqlite.Normal, WriteCacheMiB: o.CacheMiB})
	if err != nil {
		return Marker{}, nil, fmt.Errorf("build fixture: %w", err)
	}
	ix, err := index.New(ctx, st, iopts)
	if err != nil {
		st.Close()
		return Marker{}, nil, fmt.Errorf("build fixture: %w", err)
	}
	n := c.Len()
	ids := make([]index.DocID, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
		errOnce    sync.Once
		buildErr   error
	)
	fail := func(err error) {
		errOnce.Do(func() { buildErr = err; cancel() })
	}
	start, cpu0 := time.Now(), CPUTime()
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				lo := int(next.Add(int64(o.Batch))) - o.Batch
				if lo >= n {
					return
				}
				hi := min(lo+o.Batch, n)
				ins := make([]index.Input, hi-lo)
				for j := range ins {
					ins[j] = c.Input(lo + j)
				}
				res, err := ix.Add(ctx, ins)
				if err != nil {
					fail(fmt.Errorf("build fixture: add documents %d to %d: %w", lo, hi-1, err))
					return
				}
				for j, r := range res {
					if r.Err != nil {
						fail(fmt.Errorf("build fixture: document %d: %w", lo+j, r.Err))
						return
					}
					ids[lo+j] = r.ID
				}
				if d := done.Add(int64(len(res))); d*20/int64(n) != (d-int64(len(res)))*20/int64(n) {
					el := time.Since(start)
					o.Logger.Info("building benchmark fixture", "done", d, "of", n, "elapsed", el.Round(time.Second),
						"docs_per_s", int(float64(d)/el.Seconds()))
				}
			}
		}()
	}
	wg.Wait()
	closeErr := errors.Join(ix.Close(), st.Close())
	if buildErr != nil {
		return Marker{}, nil, buildErr
	}
	if closeErr != nil {
		return Marker{}, nil, fmt.Errorf("build fixture: close index: %w", closeErr)
	}
	if err := syncFile(path); err != nil {
		return Marker{}, nil, err
	}
	el := time.Since(start)
	return Marker{Spec: c.Spec(), Built: start.UTC().Round(time.Second), BuildSeconds: el.Seconds(),
		DocsPerSecond: float64(n) / el.Seconds(), CPUSeconds: (CPUTime() - cpu0).Seconds(), Workers: o.Workers, Batch: o.Batch, CacheMiB: o.CacheMiB, GoMaxProcs: runtime.GOMAXPROCS(0)}, ids, nil
}

// ID returns the index id of document i.
func (f *Fixture) ID(i int) index.DocID { return f.ids[i] }

// Seeds returns the ids of the seeds of the first n groups.
func (f *Fixture) Seeds(n int) []index.DocID {
	gs := f.Corpus.Groups()[:min(n, len(f.Corpus.Groups()))]
	out := make([]index.DocID, len(gs))
	for i, g := range gs {
		out[i] = f.ID(g.Seed)
	}
	return out
}

// Open opens the fixture's index. Close the index, then the store. Do not
// write to it (the cache would no longer match its marker): write to a
// Clone.
func (f *Fixture) Open(ctx context.Context) (*index.Index, *sqlite.Store, error) {
	return OpenIndex(ctx, f.Path)
}

// OpenIndex opens the index at path with the fixture's options.
func OpenIndex(ctx context.Context, path string) (*index.Index, *sqlite.Store, error) {
	opts := IndexOptions()
	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Normal})
	if err != nil {
		return nil, nil, fmt.Errorf("open fixture: %w", err)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("open fixture: %w", err)
	}
	return ix, st, nil
}

// Clone copies the fixture's index into dir (which must exist) and returns
// the copy's path, for benchmarks that write to the index.
func (f *Fixture) Clone(dir string) (string, error) {
	dst := filepath.Join(dir, "index.db")
	in, err := os.Open(f.Path)
	if err != nil {
		return "", fmt.Errorf("clone fixture: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return "", fmt.Errorf("clone fixture: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("clone fixture to %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("clone fixture to %s: %w", dst, err)
	}
	return dst, nil
}

func writeIDs(path string, ids []index.DocID) error {
	b := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint64(b, uint64(id))
	}
	return writeFileSync(path, b)
}

func readIDs(path string, n int) ([]index.DocID, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read fixture ids: %w", err)
	}
	if len(b) != 8*n {
		return nil, fmt.Errorf("read fixture ids %s: %d bytes, want %d", path, len(b), 8*n)
	}
	ids := make([]index.DocID, n)
	for i := range ids {
		ids[i] = index.DocID(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return ids, nil
}

func writeFileSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
