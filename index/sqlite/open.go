package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/sqlitedb"
)

// indexKind marks the index's files, and refuses others with
// index.ErrNotIndex.
var indexKind = func() sqlitedb.Kind {
	k := sqlitedb.Index
	k.Err = index.ErrNotIndex
	return k
}()

// SchemaVersion is the schema version this code writes: an index opened
// by it is migrated up to this version, and one of a later version is
// refused (index.ErrSchemaVersion).
var SchemaVersion = len(migrations)

// Open opens or creates the live store at path, migrating its schema
// forward and settling what a bulk load that did not get to close left.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	return openStore(ctx, path, opts, nil)
}

// openStore opens the store at path for l, the bulk load beginning, or nil.
func openStore(ctx context.Context, path string, opts Options, l *Loader) (*Store, error) {
	opts.Durability = cmp.Or(opts.Durability, Full)
	if opts.Durability != Full && opts.Durability != Normal {
		return nil, fmt.Errorf("open index %s: durability %q: want %q or %q", path, opts.Durability, Full, Normal)
	}
	if opts.Readers <= 0 {
		opts.Readers = runtime.GOMAXPROCS(0) + 2
	}
	if opts.WriteCacheMiB <= 0 {
		opts.WriteCacheMiB = 64
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	// Before anything writes: the pragmas below would turn another
	// application's database into a WAL file, and the migrations would add
	// tables to it.
	if err := sqlitedb.Claim(ctx, path, indexKind); err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	// The index holds extracted texts: owner only, log included.
	if err := sqlitedb.MakePrivate(path); err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	if err := setPageSize(ctx, path); err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	sync := "FULL"
	if opts.Durability == Normal {
		sync = "NORMAL"
	}
	dsn := sqlitedb.URI(path, "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"+
		"&_pragma=synchronous("+sync+")&_pragma=cache_size(-"+strconv.Itoa(opts.WriteCacheMiB*1024)+")&_txlock=immediate"+
		"&_pragma=wal_autocheckpoint(0)") // checkpoints run beside the writer: see checkpoints
	s, err := openConns(ctx, path, dsn, sync, opts, l)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	go s.checkpoints(opts.Logger)
	s.memWanted = opts.AnchorsInMemory
	if opts.AnchorsInMemory && s.stale.Load() == nil { // else once fingerprinted again
		s.startAnchors()
	}
	s.committed() // a log left by a crash or a migration
	return s, nil
}

// openConns opens the store's connections, migrates its schema, checks its
// scheme and begins l's load; on error it closes whatever it opened.
func openConns(ctx context.Context, path, dsn, sync string, opts Options, l *Loader) (_ *Store, err error) {
	s := &Store{path: path, now: opts.Now, scheme: opts.Scheme, load: l}
	defer func() {
		if err == nil {
			return
		}
		if s.r != nil {
			s.rs.close()
			s.r.Close()
			s.rs.wait()
		}
		if s.w != nil {
			s.ws.close()
			s.w.Close()
			s.ws.wait()
		}
	}()
	if s.w, err = sql.Open("sqlite", dsn); err != nil {
		return nil, err
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetConnMaxLifetime(0)
	s.ws = newStatements(s.w)
	if err := s.migrate(ctx, opts.Logger); err != nil {
		return nil, err
	}
	if err := sqlitedb.Mark(ctx, s.w, indexKind); err != nil {
		return nil, err
	}
	if err := s.checkScheme(ctx, opts.Scheme); err != nil {
		return nil, err
	}
	s.logger = opts.Logger
	if err := s.begin(ctx, l); err != nil {
		return nil, err
	}
	if err := s.openReaders(path, sync, opts.Readers); err != nil {
		return nil, err
	}
	return s, nil
}

// begin begins l's load, if l is not nil, and settles what a bulk load
// that did not get to close left, unless l carries it on. A stale store
// does neither: Refingerprint posts everything again.
func (s *Store) begin(ctx context.Context, l *Loader) error {
	if s.stale.Load() != nil {
		return nil
	}
	if l != nil {
		if err := l.begin(ctx, s); err != nil || l.deferred {
			return err
		}
	}
	if err := s.settlePostings(ctx, slog.LevelInfo); err != nil {
		return err
	}
	return s.settleBandShares(ctx, slog.LevelInfo)
}

// openReaders opens the readers' and the checkpointer's connections.
func (s *Store) openReaders(path, sync string, readers int) (err error) {
	// Readers do not map the file (mmap_size): it saved a fifth of a
	// read-only query's CPU at 10,000 documents, but while the daemon
	// writes, readers remap the growing file at every transaction and the
	// daemon's CPU per document grew by a tenth.
	if s.r, err = sql.Open("sqlite", sqlitedb.URI(path, "_pragma=busy_timeout(10000)&_pragma=query_only(1)&_pragma=cache_size(-32768)")); err != nil {
		return err
	}
	s.r.SetMaxOpenConns(readers)
	s.r.SetMaxIdleConns(readers)
	s.rs = newStatements(s.r)
	if s.ckpt, err = sql.Open("sqlite", sqlitedb.URI(path, "_pragma=busy_timeout(10000)&_pragma=synchronous("+sync+")")); err != nil {
		return err
	}
	s.ckpt.SetMaxOpenConns(1)
	s.ckpt.SetConnMaxLifetime(0)
	s.ckptWake, s.ckptStop, s.ckptDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	return nil
}

func (s *Store) checkScheme(ctx context.Context, scheme uint32) error {
	var got string
	err := s.w.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'scheme'").Scan(&got)
	want := strconv.FormatUint(uint64(scheme), 10)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = s.w.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('scheme', ?)", want)
		if err != nil {
			return fmt.Errorf("record fingerprint scheme: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read fingerprint scheme: %w", err)
	case got != want:
		s.stale.Store(&got) // see Refingerprint
	}
	return nil
}

func (s *Store) migrate(ctx context.Context, log *slog.Logger) error {
	var v int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: store has version %d, this simdex knows up to %d", index.ErrSchemaVersion, v, SchemaVersion)
	}
	if v == 0 { // a new store: nothing to report
		log = slog.New(slog.DiscardHandler)
	}
	for ; v < SchemaVersion; v++ {
		// Each step is one transaction: a crash leaves the previous version,
		// and the next open carries on from there.
		start := time.Now()
		log.Info("migrating index schema", "path", s.path, "from", v, "to", v+1)
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if fill := backfills[v+1]; fill != nil {
			if err := fill(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		log.Info("migrated index schema", "path", s.path, "to", v+1, "seconds", time.Since(start).Seconds())
	}
	return nil
}

// backfills run after the SQL of a migration, in its transaction, keyed by
// the version they migrate to.
var backfills = map[int]func(context.Context, *sql.Tx) error{
	2:  backfillAnchors,
	4:  blockAnchors,
	6:  backfillBandShares,
	11: compactDocuments,
	13: addOrigin,
}

// backfillAnchors posts the anchors of contents stored before version 2.
func backfillAnchors(ctx context.Context, tx *sql.Tx) error {
	type content struct {
		id      int64
		anchors []uint64
	}
	var all []content
	rows, err := tx.QueryContext(ctx, "SELECT id, body FROM contents")
	err = eachRow(rows, err, func(rows *sql.Rows) error {
		var id int64
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		var fp index.Fingerprint
		if err := fp.DecodeBody(body); err != nil {
			return fmt.Errorf("content %d: %w", id, err)
		}
		all = append(all, content{id, fp.Anchors()})
		return nil
	})
	if err != nil {
		return fmt.Errorf("post anchors: %w", err)
	}
	for _, c := range all {
		if err := insertPostings(ctx, tx, "sample_postings", c.id, c.anchors); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE contents SET anchors = ? WHERE id = ?", len(c.anchors), c.id); err != nil {
			return fmt.Errorf("post anchors: %w", err)
		}
	}
	return nil
}

// pageSize is the page size of a new index. Contents rows (a fingerprint,
// about 1.8 KB) fit two to a 4 KB page with a fifth of it unused; larger
// pages leave less room unused at the end of each (docs/BENCHMARKS.md).
const pageSize = 8192

// setPageSize gives a new, empty index file pageSize: it must be set
// before the first write, which the writer's pragmas make (journal_mode
// sorts before page_size). An existing index keeps its page size.
func setPageSize(ctx context.Context, path string) error {
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		return err
	}
	db, err := sql.Open("sqlite", sqlitedb.URI(path, "_pragma=busy_timeout(10000)"))
	if err != nil {
		return fmt.Errorf("set page size: %w", err)
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "PRAGMA page_size = "+strconv.Itoa(pageSize)+"; VACUUM")
	if err != nil {
		return fmt.Errorf("set page size: %w", err)
	}
	return nil
}
