package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/sqlitedb"
)

// Durability chooses how commits reach the disk.
type Durability string

// Durability levels.
const (
	// Full fsyncs the write-ahead log at every commit: an acknowledged
	// document survives power loss. The default.
	Full Durability = "full"
	// Normal fsyncs at checkpoints only: a process crash loses nothing, a
	// power loss may lose the latest commits. For bulk scans.
	Normal Durability = "normal"
)

// Options configure a store.
type Options struct {
	// Scheme is the fingerprint scheme of the index using the store. A
	// store holding fingerprints of another scheme opens stale: its
	// fingerprints are made again from its kept texts by Refingerprint,
	// which index.New calls, and meanwhile its methods that read or write
	// fingerprints return index.ErrSchemeMismatch (rescheme.go).
	Scheme uint32
	// Durability defaults to Full.
	Durability Durability
	// Readers is the size of the read connection pool (default GOMAXPROCS+2).
	Readers int
	// WriteCacheMiB is the writer's page cache in MiB (default 64). A bulk
	// load whose posting tables outgrow it reads and spills pages at every
	// transaction; a cache that holds them (about 1 GiB per million
	// documents) keeps the load's speed flat.
	WriteCacheMiB int
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// Logger receives schema migrations, which can take a while on a large
	// index (about 35 s from version 3 to 4 at 1,000,000 documents); nil
	// discards them.
	Logger *slog.Logger
	// AnchorsInMemory keeps every anchor posting list in memory, for
	// long-running processes: loaded in the background after Open and
	// updated by each commit, about 6 bytes per posting (170 MB and 8 s to
	// load at 1,000,000 documents), for a third of the CPU of a
	// similarity query (memanchors.go).
	AnchorsInMemory bool
	// DeferBandShares leaves band_shares (bandshares.go) to be computed
	// once, when the store closes, instead of at each put: for bulk loads
	// of many near-copies, where each new content would update the rows of
	// dozens of others. Meanwhile queries look up every band key, and a
	// store opened without it after a crash computes them at open.
	DeferBandShares bool
	// DeferPostings leaves the chunk, band and anchor postings of a bulk
	// load into an empty index to be inserted once, in key order, when it
	// settles (SettleDeferred or Close), instead of at each commit: a
	// commit rewrites the posting pages its keys land on, scattered over
	// the tables, and that was 9 of the 22 s a 50,000-file scan spends
	// indexing. Meanwhile the load's contents are listed in
	// pending_postings and are found by id and by text, not as candidates
	// of similarity queries; a store opened after a crash posts them at
	// open, unless it defers postings too: it then carries the load on.
	// Ignored when the index holds posted contents at open: a live index
	// keeps every document findable as soon as it is committed. Implies
	// DeferBandShares, which are computed from the band postings.
	DeferPostings bool
}

// Store is the embedded SQLite index store. It is safe for concurrent use.
type Store struct {
	path        string
	w           *sql.DB // one connection: SQLite has one writer
	r           *sql.DB
	now         func() time.Time
	mu          sync.Mutex // serialises writers in this process
	close       sync.Once
	over        overfull                 // posting keys known to be boilerplate
	deferShares bool                     // Options.DeferBandShares
	deferPosts  bool                     // Options.DeferPostings, into an index with no content posted
	bulk        *bulkPieces              // a bulk load's text pieces, until settled
	bulkPosts   *bulkPostings            // a bulk load's postings, until settled
	bulkShares  *memShares               // band shares computed from them, until a write
	view        atomic.Pointer[bulkView] // bulkPosts sorted, until a write (bulkview.go)
	seen        *bulkSeen                // what a bulk load wrote (bulkseen.go); guarded by mu
	mem         *memAnchors              // nil unless Options.AnchorsInMemory
	memCtx      context.Context          // the loading of mem, stopped by Close
	memStop     context.CancelFunc
	memDone     chan struct{} // the latest load has ended; guarded by mu
	logger      *slog.Logger
	scheme      uint32                 // Options.Scheme
	stale       atomic.Pointer[string] // the scheme of the stored fingerprints, if not scheme
	memWanted   bool                   // Options.AnchorsInMemory

	rs, ws *statements // the readers' and the writer's prepared statements

	ckpt     *sql.DB       // the checkpointer's connection
	ckptWake chan struct{} // a commit happened
	ckptStop chan struct{}
	ckptDone chan struct{}
}

// checkpointEvery is the least time between two checkpoints, so that the
// pages that consecutive small commits rewrite are copied to the database
// once rather than at every commit.
const checkpointEvery = 100 * time.Millisecond

// walResetFrames is the log length (in pages of 4 KiB) above which the
// checkpointer holds the writer back once so that the log can start over.
// A variable for tests.
var walResetFrames = 16384

var _ index.Store = (*Store)(nil)

// indexKind marks the index's files, and refuses others with
// index.ErrNotIndex.
var indexKind = func() sqlitedb.Kind {
	k := sqlitedb.Index
	k.Err = index.ErrNotIndex
	return k
}()

// schemaVersion is the number of migrations this build knows.
var schemaVersion = len(migrations)

// Open opens or creates the store at path, migrating its schema forward.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Durability == "" {
		opts.Durability = Full
	}
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
	sync := "FULL"
	if opts.Durability == Normal {
		sync = "NORMAL"
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(" + sync + ")&_pragma=cache_size(-" + strconv.Itoa(opts.WriteCacheMiB*1024) + ")&_txlock=immediate" +
		"&_pragma=wal_autocheckpoint(0)" // checkpoints run beside the writer: see checkpoints
	s, err := openConns(ctx, path, dsn, sync, opts)
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

// openConns opens the store's connections, migrates its schema and checks its
// scheme; on error it closes whatever it opened.
func openConns(ctx context.Context, path, dsn, sync string, opts Options) (_ *Store, err error) {
	s := &Store{path: path, now: opts.Now, scheme: opts.Scheme}
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
	stale := s.stale.Load() != nil // Refingerprint posts everything again
	s.deferShares = opts.DeferBandShares && !stale
	if opts.DeferPostings && !stale {
		if err := s.beginBulk(ctx, path, opts.Logger); err != nil {
			return nil, err
		}
		// Band shares are computed from the band postings.
		s.deferShares = s.deferShares || s.deferPosts
	}
	// A bulk load that did not get to close, unless this one carries it on.
	if !s.deferPosts && !stale {
		if err := s.settlePostings(ctx, opts.Logger, slog.LevelInfo); err != nil {
			return nil, err
		}
	}
	if !s.deferShares && !stale {
		if err := s.settleBandShares(ctx, opts.Logger, slog.LevelInfo); err != nil {
			return nil, err
		}
	}
	// Readers do not map the file (mmap_size): it saved a fifth of a
	// read-only query's CPU at 10,000 documents, but while the daemon
	// writes, readers remap the growing file at every transaction and the
	// daemon's CPU per document grew by a tenth.
	if s.r, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)&_pragma=cache_size(-32768)"); err != nil {
		return nil, err
	}
	s.r.SetMaxOpenConns(opts.Readers)
	s.r.SetMaxIdleConns(opts.Readers)
	s.rs = newStatements(s.r)
	if s.ckpt, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=synchronous("+sync+")"); err != nil {
		return nil, err
	}
	s.ckpt.SetMaxOpenConns(1)
	s.ckpt.SetConnMaxLifetime(0)
	s.ckptWake, s.ckptStop, s.ckptDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	return s, nil
}

// checkpoints copies committed pages from the write-ahead log into the
// database on a connection of its own, after commits, at most once per
// checkpointEvery. SQLite's automatic checkpoints ran in the committing
// connection, so every few commits the single writer also copied pages:
// a sixth of a bulk scan's serial commit path. A passive checkpoint runs
// beside the writer (it never blocks it), and copies only what is
// committed: durability is the same.
func (s *Store) checkpoints(log *slog.Logger) {
	defer close(s.ckptDone)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for {
		select {
		case <-s.ckptWake:
		case <-s.ckptStop:
			return
		}
		logFrames, err := s.checkpoint()
		if err == nil && logFrames > walResetFrames {
			// Under a steady stream of commits the log is never wholly
			// copied when the writer starts its next transaction, and only
			// then can it start the log over: hold the writer once while
			// copying the rest.
			s.mu.Lock()
			_, err = s.checkpoint()
			s.mu.Unlock()
		}
		if err != nil {
			// The next commit tries again; the log only grows meanwhile.
			log.Warn("index checkpoint failed", "path", s.path, "err", err)
		}
		select {
		case <-time.After(checkpointEvery):
		case <-s.ckptStop:
			return
		}
	}
}

// checkpoint copies what it can of the log and returns the log's length
// in pages.
func (s *Store) checkpoint() (logFrames int, err error) {
	var busy, done int
	if err := s.ckpt.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &done); err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	return logFrames, nil
}

// committed wakes the checkpointer.
func (s *Store) committed() {
	select {
	case s.ckptWake <- struct{}{}:
	default: // already awake
	}
}

func (s *Store) migrate(ctx context.Context, log *slog.Logger) error {
	var v int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("%w: store has version %d, this simdex knows up to %d", index.ErrSchemaVersion, v, schemaVersion)
	}
	if log == nil || v == 0 { // a new store: nothing to report
		log = slog.New(slog.DiscardHandler)
	}
	for ; v < schemaVersion; v++ {
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

// Close releases the database. Further calls return index.ErrClosed.
func (s *Store) Close() error {
	var err error
	s.close.Do(func() {
		s.stopAnchors()
		err = s.SettleDeferred(context.Background())
		var c error
		if s.ckpt != nil {
			close(s.ckptStop)
			<-s.ckptDone
			c = s.ckpt.Close()
		}
		// The writer closes last: closing the last connection checkpoints
		// the whole log and removes it.
		err = errors.Join(err, c, s.rs.close(), s.r.Close(), s.ws.close(), s.w.Close())
		s.rs.wait()
		s.ws.wait()
	})
	return err
}

// beginBulk makes s a bulk load (Options.DeferPostings) if no content of
// the index is posted: it is empty, or holds a bulk load that did not get
// to settle (killed, or the machine lost), which s carries on, with the
// pending contents' postings and text pieces in memory as if it had stored
// them (posting them at open and loading the rest a document at a time
// made a rerun of a 50,000-file scan killed after 5 s take 71 s instead of
// 20). What it reads, it reads in one transaction of the writer, which no
// other process's write interleaves.
func (s *Store) beginBulk(ctx context.Context, path string, log *slog.Logger) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin a bulk load: %w", s.mapErr(err))
	}
	defer tx.Rollback()
	if s.deferPosts, err = nonePosted(ctx, tx); err != nil || !s.deferPosts {
		return err
	}
	if s.bulk, err = pendingPieces(ctx, tx); err != nil {
		return err
	}
	if s.bulkPosts, err = pendingInMemory(ctx, tx); err != nil {
		return err
	}
	if s.seen, err = newBulkSeen(ctx, tx); err != nil {
		return err
	}
	if n := len(s.bulkPosts.ids); n > 0 && log != nil {
		log.Info("carrying on a bulk load that did not settle", "path", path, "contents", n)
	}
	return nil
}

// SettleDeferred does now what a bulk load (Options.DeferPostings,
// Options.DeferBandShares) leaves to Close, so that the caller can do
// other work meanwhile: the writer's connection does it, and queries go
// on. Close then finds nothing to do, unless documents were put since.
func (s *Store) SettleDeferred(ctx context.Context) error {
	if s.deferPosts {
		if err := s.settlePostings(ctx, s.logger, slog.LevelDebug); err != nil {
			return err
		}
	}
	if err := s.settlePieces(ctx); err != nil {
		return err
	}
	if s.deferShares {
		return s.settleBandShares(ctx, s.logger, slog.LevelDebug)
	}
	return nil
}

// SettlePostings makes the postings a bulk load (Options.DeferPostings)
// has deferred searchable, and nothing else: a bulk load that analyses
// its postings next calls it. When they are every posting of the index,
// they are sorted in memory, where Groups, AnchorGroups and ChunkContents
// read them, and inserted by SettleDeferred or Close (bulkview.go);
// otherwise they are inserted now. Either way the band shares are left to
// Close.
func (s *Store) SettlePostings(ctx context.Context) error {
	if !s.deferPosts {
		return nil
	}
	if kept, err := s.keepPostings(ctx); err != nil || kept {
		return err
	}
	return s.settlePostings(ctx, s.logger, slog.LevelDebug)
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// postingKey truncates a 64-bit hash to the 31-bit posting key; candidates
// are verified against the full fingerprint, so collisions only add work.
func postingKey(h uint64) int64 { return int64(h >> 33) }

// Put commits entries in one transaction.
func (s *Store) Put(ctx context.Context, entries []index.Entry) ([]index.Committed, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("put documents: %w", s.mapErr(err))
	}
	var d anchorDelta
	out, released, err := s.put(ctx, tx, entries, &d)
	if err != nil {
		tx.Rollback()
		s.endBulkTx(false)
		return nil, fmt.Errorf("put documents: %w", s.mapErr(err))
	}
	if released {
		defer s.over.forget() // postings are gone once committed
		s.bulkPosts.release()
	}
	if err := s.commit(tx, &d); err != nil {
		s.endBulkTx(false)
		return nil, fmt.Errorf("put documents: commit: %w", s.mapErr(err))
	}
	s.endBulkTx(true)
	return out, nil
}

// endBulkTx keeps, when committed, or forgets what a transaction of a
// bulk load added to the store's memory (text pieces, postings); band
// shares computed before it no longer hold.
func (s *Store) endBulkTx(committed bool) {
	s.seen.end(committed)
	if !committed {
		s.bulk.discard()
		s.bulkPosts.discard()
		return
	}
	s.bulk.commit()
	s.bulkPosts.commit()
	s.bulkShares = nil
	s.dropView()
}

// commit commits a write transaction whose anchor changes are d, and
// brings the in-memory anchor lists up to it.
func (s *Store) commit(tx *sql.Tx, d *anchorDelta) error {
	// A failed commit changed nothing; had it changed the store after all,
	// the next commit would find the generation moved and load the lists.
	if err := tx.Commit(); err != nil {
		return err
	}
	s.committed()
	if d.bumped {
		s.committedAnchors(d)
	}
	return nil
}

// countAnchorChanges counts tx's changes to anchor postings, if any, in
// the anchor generation.
func countAnchorChanges(ctx context.Context, stmts *txStmts, d *anchorDelta) error {
	if len(d.ops) == 0 || d.bumped {
		return nil
	}
	before, err := bumpAnchorsGen(ctx, stmts)
	if err != nil {
		return err
	}
	d.before, d.bumped = before, true
	return nil
}

func (s *Store) mapErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "database is closed") {
		return errors.Join(index.ErrClosed, err)
	}
	return err
}

// put stores entries in tx; released reports that replacing older
// versions deleted postings.
func (s *Store) put(ctx context.Context, tx *sql.Tx, entries []index.Entry, d *anchorDelta) (out []index.Committed, released bool, err error) {
	out = make([]index.Committed, len(entries))
	now := s.now().UnixNano()
	var body []byte
	var posts postings
	stmts := txStmts{tx: tx, pool: s.ws, anchors: d}
	if s.deferShares {
		mark, err := stmts.prepare(ctx, "INSERT OR REPLACE INTO meta (key, value) VALUES ('"+bandSharesStaleKey+"', '1')")
		if err == nil {
			_, err = mark.ExecContext(ctx)
		}
		if err != nil {
			return nil, false, fmt.Errorf("mark band shares stale: %w", err)
		}
	}
	if err := stmts.texts(ctx, s.bulk).lookUp(ctx, &stmts, entries); err != nil {
		return nil, false, err
	}
	seen, err := s.seen.begin(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	for i := range entries {
		e := &entries[i]
		d := &e.Doc
		idem := d.IdempotencyKey()
		if seen == nil || !seen.newIdem(idem) {
			var existing int64
			var cid sql.NullInt64
			lookup, err := stmts.prepare(ctx, "SELECT id, content_id FROM documents WHERE idem = ?")
			if err != nil {
				return nil, false, err
			}
			err = lookup.QueryRowContext(ctx, idem).Scan(&existing, &cid)
			if err == nil {
				out[i] = index.Committed{ID: index.DocID(existing), Content: index.ContentID(cid.Int64), Duplicate: true}
				continue
			} else if !errors.Is(err, sql.ErrNoRows) {
				return nil, false, fmt.Errorf("look up %q: %w", d.Key, err)
			}
		}
		if !d.KeepVersions && e.Parent < 0 && (seen == nil || !seen.newKey(d.Key)) {
			// Removal deletes the postings of released contents: those
			// of this transaction's contents must be in place first, but
			// only when there is something to remove, so that postings
			// stay batched in the usual case of a new key.
			flush := func() error { return posts.flush(ctx, &stmts) }
			replaced, rel, err := s.removeTx(ctx, &stmts, d.Key, "", flush, stmts.anchors)
			if err != nil {
				return nil, false, err
			}
			out[i].Replaced = replaced
			released = released || rel
		}
		parent := sql.NullInt64{Int64: int64(d.Parent), Valid: d.Parent != 0}
		if e.Parent >= 0 {
			if e.Parent >= i {
				return nil, false, fmt.Errorf("entry %d: parent %d must come before it", i, e.Parent)
			}
			parent = sql.NullInt64{Int64: int64(out[e.Parent].ID), Valid: true}
		}
		var content sql.NullInt64
		var rawSHA, textSHA []byte
		var newContent int64 // created by this put
		rawSize := e.RawSize
		if e.RawSHA256 != ([32]byte{}) {
			rawSHA = e.RawSHA256[:]
		}
		if fp := e.Fingerprint; fp != nil {
			rawSHA, rawSize, textSHA = fp.RawSHA256[:], fp.RawSize, fp.TextSHA256[:]
			c, created, err := s.putContent(ctx, &stmts, seen, fp, e.Bands, &body, &posts)
			if err != nil {
				return nil, false, fmt.Errorf("store content of %q: %w", d.Key, err)
			}
			if e.Text != nil {
				if err := s.putText(ctx, &stmts, c, created, e.Text, e.Prepared); err != nil {
					return nil, false, fmt.Errorf("store text of %q: %w", d.Key, err)
				}
			}
			content = sql.NullInt64{Int64: int64(c), Valid: true}
			if created {
				newContent = int64(c)
			}
		}
		path, _ := json.Marshal(nonNil(d.Path))
		meta, _ := json.Marshal(d.Meta)
		insert, err := stmts.prepare(ctx, `INSERT INTO documents
			(key, version_id, idem, name, source, parent_id, path, media_type, meta, mod_time, indexed_at, error, keep_versions, raw_sha256, raw_size, content_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return nil, false, err
		}
		res, err := insert.ExecContext(ctx,
			d.Key, d.VersionID, idem, d.Name, d.Source, parent, string(path), d.MediaType, string(meta),
			unixNano(d.ModTime), now, d.Error, d.KeepVersions, rawSHA, rawSize, content)
		if err != nil {
			return nil, false, fmt.Errorf("insert %q: %w", d.Key, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, false, fmt.Errorf("insert %q: %w", d.Key, err)
		}
		out[i].ID, out[i].Content = index.DocID(id), index.ContentID(content.Int64)
		if seen != nil {
			seen.stored(id, idem, d.Key, textSHA, newContent)
		}
	}
	if err := stmts.tw.flush(ctx, &stmts); err != nil {
		return nil, false, err
	}
	if err := posts.flush(ctx, &stmts); err != nil {
		return nil, false, err
	}
	if err := countAnchorChanges(ctx, &stmts, stmts.anchors); err != nil {
		return nil, false, err
	}
	return out, released, nil
}

// txStmts binds the writer's prepared statements to a transaction, each
// once, on first use: parsing a statement costs about as much as running
// it, and put runs the same few for every document (a fifth of its CPU in
// a bulk load went to parsing them again).
type txStmts struct {
	tx      *sql.Tx
	pool    *statements
	m       map[string]*sql.Stmt
	anchors *anchorDelta // the anchor postings added, if they are tracked
	tw      *textWriter  // the texts stored, once one is
	bands   bandShares   // the band keys of the contents stored
}

// prepare returns the statement of query bound to the transaction (which
// closes it when it ends); without a pool, it is prepared in the
// transaction alone.
func (t *txStmts) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := t.m[query]; ok {
		return st, nil
	}
	var st *sql.Stmt
	var err error
	if t.pool != nil {
		st, err = t.pool.in(ctx, t.tx, query)
	} else if st, err = t.tx.PrepareContext(ctx, query); err != nil {
		err = fmt.Errorf("prepare statement: %w", err)
	}
	if err != nil {
		return nil, err
	}
	if t.m == nil {
		t.m = make(map[string]*sql.Stmt)
	}
	t.m[query] = st
	return st, nil
}

func nonNil(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// putContent stores fp's content once and counts a reference to it; the
// postings of a new content are added to posts.
//
// seen, when not nil, tells a text certainly not stored (not asked of
// the table) from one that may be (asked by content id first).
func (s *Store) putContent(ctx context.Context, stmts *txStmts, seen *bulkSeen, fp *index.Fingerprint, bands []uint64, buf *[]byte, posts *postings) (_ index.ContentID, created bool, err error) {
	var id int64
	var known, maybe = int64(0), true
	if seen != nil {
		known, maybe = seen.text(fp.TextSHA256[:])
	}
	if known != 0 {
		bump, err := stmts.prepare(ctx, "UPDATE contents SET refs = refs + 1 WHERE id = ? AND text_sha256 = ? RETURNING id")
		if err != nil {
			return 0, false, err
		}
		err = bump.QueryRowContext(ctx, known, fp.TextSHA256[:]).Scan(&id)
		if err == nil {
			return index.ContentID(id), false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, false, err
		}
	}
	if maybe {
		bump, err := stmts.prepare(ctx, "UPDATE contents SET refs = refs + 1 WHERE text_sha256 = ? RETURNING id")
		if err != nil {
			return 0, false, err
		}
		err = bump.QueryRowContext(ctx, fp.TextSHA256[:]).Scan(&id)
		if err == nil {
			return index.ContentID(id), false, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, false, err
		}
	}
	*buf = fp.AppendBody((*buf)[:0])
	keys := make([]int64, len(bands))
	bandBlob := make([]byte, 0, 4*len(bands))
	for i, b := range bands {
		keys[i] = postingKey(b)
		bandBlob = binary.LittleEndian.AppendUint32(bandBlob, uint32(keys[i]))
	}
	var shares shared
	if !s.deferShares {
		if shares, err = stmts.bands.shareOf(ctx, stmts, keys); err != nil {
			return 0, false, err
		}
	}
	anchors := fp.Anchors()
	insert, err := stmts.prepare(ctx, "INSERT INTO contents (text_sha256, text_size, simhash, body, bands, refs, anchors) VALUES (?, ?, ?, ?, ?, 1, ?) RETURNING id")
	if err != nil {
		return 0, false, err
	}
	err = insert.QueryRowContext(ctx,
		fp.TextSHA256[:], fp.TextSize, int64(fp.SimHash), *buf, bandBlob, len(anchors)).Scan(&id)
	if err != nil {
		return 0, false, err
	}
	if !s.deferShares {
		if err := stmts.bands.stored(ctx, stmts, id, keys, shares); err != nil {
			return 0, false, err
		}
	}
	if s.deferPosts {
		pend, err := stmts.prepare(ctx, "INSERT INTO pending_postings (content_id) VALUES (?)")
		if err == nil {
			_, err = pend.ExecContext(ctx, id)
		}
		if err != nil {
			return 0, false, fmt.Errorf("defer postings: %w", err)
		}
		s.bulkPosts.add(id, fp, keys)
		return index.ContentID(id), true, nil
	}
	posts.addContent(id, fp, keys)
	return index.ContentID(id), true, nil
}

// postings collects the postings of the contents a transaction stores, to
// be inserted together, in key order, several rows per statement. Keys
// are hashes: inserted as each content comes, every row lands on a random
// page of a large B-tree; in order, consecutive rows share pages, and a
// statement's execution is paid once for many rows. With the index cached,
// this halved the writer's CPU per document in a bulk load (514 -> 272 µs
// at 120,000 documents in 20,000-document transactions). The rows and the
// transaction are the same.
type postings [3][]posting

type posting struct {
	h, c int64
	n    int32 // anchors of content c, in samplePostings; the band's position in bandPostings
}

// Posting tables, as indexes of postings.
const (
	samplePostings = iota // stored in anchor_blocks (anchors.go)
	chunkPostings
	bandPostings
)

var postingTables = [...]string{samplePostings: "sample_postings", chunkPostings: "chunk_postings", bandPostings: "band_postings"}

// postingRows is the most postings one INSERT statement carries.
const postingRows = 64

// addContent adds the postings of content id: its anchors, chunks and
// band keys.
func (p *postings) addContent(id int64, fp *index.Fingerprint, bandKeys []int64) {
	anchors := fp.Anchors()
	for _, a := range anchors {
		p[samplePostings] = append(p[samplePostings], posting{postingKey(a), id, int32(len(anchors))})
	}
	for _, c := range fp.Chunks {
		p[chunkPostings] = append(p[chunkPostings], posting{h: postingKey(c.Hash), c: id})
	}
	for i, k := range bandKeys {
		p[bandPostings] = append(p[bandPostings], posting{h: k, c: id, n: int32(i)}) // n: the band's position, for bandSharesOf
	}
}

// flush inserts the collected postings and forgets them.
func (p *postings) flush(ctx context.Context, stmts *txStmts) error {
	for _, rows := range p {
		slices.SortFunc(rows, func(a, b posting) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.c, b.c)) })
	}
	return p.insert(ctx, stmts)
}

// insert inserts the collected postings, sorted by key and content, and
// forgets them.
func (p *postings) insert(ctx context.Context, stmts *txStmts) error {
	for t, rows := range p {
		if len(rows) == 0 {
			continue
		}
		if t == samplePostings {
			if err := addAnchorPostings(ctx, stmts, rows); err != nil {
				return err
			}
			p[t] = p[t][:0]
			continue
		}
		w := &rowWriter{ctx: ctx, stmts: stmts, insert: "INSERT OR IGNORE INTO " + postingTables[t] + " (h, c)", cols: 2}
		for _, r := range rows {
			if err := w.put(r.h, r.c); err != nil {
				return err
			}
		}
		if err := w.flush(); err != nil {
			return err
		}
		p[t] = p[t][:0]
	}
	return nil
}

// rowWriter inserts rows postingRows at a time, one statement each: a
// statement's execution is then paid once for many rows. Its statements
// (one per number of rows) are the writer's prepared ones.
type rowWriter struct {
	ctx    context.Context
	stmts  *txStmts
	insert string // "INSERT ... INTO table (columns)"
	cols   int
	args   []any
}

// put adds one row of w.cols values.
func (w *rowWriter) put(vals ...any) error {
	w.args = append(w.args, vals...)
	if len(w.args) == w.cols*postingRows {
		return w.flush()
	}
	return nil
}

// flush inserts the rows put since the last flush.
func (w *rowWriter) flush() error {
	if len(w.args) == 0 {
		return nil
	}
	st, err := w.stmts.prepare(w.ctx, w.sql(len(w.args)/w.cols))
	if err == nil {
		_, err = st.ExecContext(w.ctx, w.args...)
	}
	w.args = w.args[:0]
	if err != nil {
		return fmt.Errorf("%s: %w", w.insert, err)
	}
	return nil
}

func (w *rowWriter) sql(rows int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", w.cols), ", ") + "), "
	return w.insert + " VALUES " + strings.TrimSuffix(strings.Repeat(row, rows), ", ")
}

func insertPostings(ctx context.Context, tx *sql.Tx, table string, content int64, hashes []uint64) error {
	if len(hashes) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT OR IGNORE INTO "+table+" (h, c) VALUES (?, ?)")
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, h := range hashes {
		if _, err := stmt.ExecContext(ctx, postingKey(h), content); err != nil {
			return fmt.Errorf("insert %s: %w", table, err)
		}
	}
	return nil
}

// Remove deletes a document version (or every version of key) and its
// children.
func (s *Store) Remove(ctx context.Context, key, versionID string) ([]index.DocID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("remove %q: %w", key, s.mapErr(err))
	}
	var d anchorDelta
	stmts := &txStmts{tx: tx, pool: s.ws}
	ids, released, err := s.removeTx(ctx, stmts, key, versionID, nil, &d)
	if err == nil {
		err = countAnchorChanges(ctx, stmts, &d)
	}
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("remove %q: %w", key, s.mapErr(err))
	}
	if released {
		defer s.over.forget() // postings are gone once committed
		s.bulkPosts.release()
	}
	if err := s.commit(tx, &d); err != nil {
		return nil, fmt.Errorf("remove %q: commit: %w", key, s.mapErr(err))
	}
	s.bulkShares = nil
	s.dropView()
	return ids, nil
}

// removeTx deletes the versions of key (or versionID alone) and their
// children; released reports that contents, and so postings, were
// deleted. before, if not nil, runs once there is something to remove; d
// collects the anchor postings removed.
//
// Its lookups are prepared statements: every document a scan or the
// daemon puts runs the first, and parsing it took a tenth of the single
// writer's time.
func (s *Store) removeTx(ctx context.Context, stmts *txStmts, key, versionID string, before func() error, d *anchorDelta) (removed []index.DocID, released bool, err error) {
	tx := stmts.tx
	q := "SELECT id FROM documents WHERE key = ? AND parent_id IS NULL"
	args := []any{key}
	if versionID != "" {
		q += " AND version_id = ?"
		args = append(args, versionID)
	}
	roots, err := stmtIDs(ctx, stmts, q, args...)
	if err != nil {
		return nil, false, fmt.Errorf("find versions of %q: %w", key, err)
	}
	if len(roots) == 0 {
		return nil, false, nil
	}
	if before != nil {
		if err := before(); err != nil {
			return nil, false, err
		}
	}
	// The whole family: roots and every descendant.
	var all []int64
	frontier := roots
	for len(frontier) > 0 {
		all = append(all, frontier...)
		var next []int64
		for _, id := range frontier {
			kids, err := stmtIDs(ctx, stmts, "SELECT id FROM documents WHERE parent_id = ?", id)
			if err != nil {
				return nil, false, fmt.Errorf("find children of %d: %w", id, err)
			}
			next = append(next, kids...)
		}
		frontier = next
	}
	removed = make([]index.DocID, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- { // children first
		id := all[i]
		var cid sql.NullInt64
		if err := tx.QueryRowContext(ctx, "DELETE FROM documents WHERE id = ? RETURNING content_id", id).Scan(&cid); err != nil {
			return nil, false, fmt.Errorf("delete document %d: %w", id, err)
		}
		removed = append(removed, index.DocID(id))
		if cid.Valid {
			gone, err := releaseContent(ctx, stmts, cid.Int64, d)
			if err != nil {
				return nil, false, err
			}
			released = released || gone
		}
	}
	return removed, released, nil
}

// releaseContent drops one reference and deletes the content with its
// text and postings when none is left, which it reports; d collects the
// anchor postings removed.
func releaseContent(ctx context.Context, stmts *txStmts, cid int64, d *anchorDelta) (deleted bool, err error) {
	tx := stmts.tx
	var refs int64
	var body, bands []byte
	if err := tx.QueryRowContext(ctx, "UPDATE contents SET refs = refs - 1 WHERE id = ? RETURNING refs, body, bands", cid).Scan(&refs, &body, &bands); err != nil {
		return false, fmt.Errorf("release content %d: %w", cid, err)
	}
	if refs > 0 {
		return false, nil
	}
	// Its text goes with it (ON DELETE CASCADE), once it has let go of
	// its pieces.
	if err := releaseText(ctx, stmts, cid); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM contents WHERE id = ?", cid); err != nil {
		return false, fmt.Errorf("delete content %d: %w", cid, err)
	}
	var fp index.Fingerprint
	if err := fp.DecodeBody(body); err != nil {
		return false, fmt.Errorf("release content %d: %w", cid, err)
	}
	var keys []int64
	for _, c := range fp.Chunks {
		keys = append(keys, postingKey(c.Hash))
	}
	if err := deletePostings(ctx, tx, "chunk_postings", cid, keys); err != nil {
		return false, err
	}
	for _, a := range fp.Anchors() {
		if err := removeAnchor(ctx, tx, postingKey(a), cid); err != nil {
			return false, fmt.Errorf("delete anchors of content %d: %w", cid, err)
		}
		d.remove(postingKey(a), cid)
	}
	keys = bandKeys(bands)
	if err := stmts.bands.unshare(ctx, stmts, cid, keys); err != nil {
		return false, fmt.Errorf("release content %d: %w", cid, err)
	}
	return true, deletePostings(ctx, tx, "band_postings", cid, keys)
}

func deletePostings(ctx context.Context, tx *sql.Tx, table string, cid int64, keys []int64) error {
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE h = ? AND c = ?", k, cid); err != nil {
			return fmt.Errorf("delete %s of content %d: %w", table, cid, err)
		}
	}
	return nil
}

// stmtIDs runs the constant query, prepared once for the transaction's
// connection, and returns the ids it selects.
func stmtIDs(ctx context.Context, stmts *txStmts, query string, args ...any) ([]int64, error) {
	st, err := stmts.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// querier runs statements: a pool, a connection or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func queryIDs(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// scanIDs reads rows of one id each and closes rows.
func scanIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

const docColumns = `d.id, d.key, d.version_id, d.idem, d.name, d.source, d.parent_id, d.path, d.media_type, d.meta,
	d.mod_time, d.indexed_at, d.error, d.keep_versions, d.raw_sha256, d.raw_size, d.content_id, c.text_sha256, c.text_size`

const docFrom = ` FROM documents d LEFT JOIN contents c ON c.id = d.content_id `

func scanRecord(rows interface{ Scan(...any) error }) (*index.Record, error) {
	var r index.Record
	var parent, content, textSize sql.NullInt64
	var path, meta string
	var modTime, indexedAt int64
	var rawSHA, textSHA []byte
	err := rows.Scan(&r.ID, &r.Key, &r.VersionID, &r.Idempotency, &r.Name, &r.Source, &parent, &path, &r.MediaType, &meta,
		&modTime, &indexedAt, &r.Error, &r.KeepVersions, &rawSHA, &r.RawSize, &content, &textSHA, &textSize)
	if err != nil {
		return nil, err
	}
	r.Parent = index.DocID(parent.Int64)
	r.Content = index.ContentID(content.Int64)
	r.TextSize = textSize.Int64
	copy(r.RawSHA256[:], rawSHA)
	copy(r.TextSHA[:], textSHA)
	if modTime != 0 {
		r.ModTime = time.Unix(0, modTime).UTC()
	}
	r.IndexedAt = time.Unix(0, indexedAt).UTC()
	if err := json.Unmarshal([]byte(path), &r.Path); err != nil {
		return nil, fmt.Errorf("decode path of document %d: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(meta), &r.Meta); err != nil {
		return nil, fmt.Errorf("decode metadata of document %d: %w", r.ID, err)
	}
	return &r, nil
}

// records reads the documents selected by where, a constant clause.
func (s *Store) records(ctx context.Context, what, where string, args ...any) ([]*index.Record, error) {
	st, err := s.readStmt(ctx, "SELECT "+docColumns+docFrom+where)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, s.mapErr(err))
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, s.mapErr(err))
	}
	defer rows.Close()
	var out []*index.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, s.mapErr(err))
	}
	return out, nil
}

// Get returns the document with id.
func (s *Store) Get(ctx context.Context, id index.DocID) (*index.Record, error) {
	rs, err := s.records(ctx, fmt.Sprintf("get document %d", id), "WHERE d.id = ?", int64(id))
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("get document %d: %w", id, index.ErrNotFound)
	}
	return rs[0], nil
}

// Lookup returns the versions of key, newest first, or the document whose
// idempotency key is key.
func (s *Store) Lookup(ctx context.Context, key string) ([]*index.Record, error) {
	rs, err := s.records(ctx, fmt.Sprintf("look up %q", key), "WHERE d.key = ? ORDER BY d.id DESC", key)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		rs, err = s.records(ctx, fmt.Sprintf("look up %q", key), "WHERE d.idem = ?", key)
		if err != nil {
			return nil, err
		}
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("look up %q: %w", key, index.ErrNotFound)
	}
	return rs, nil
}

// ByContent returns every document version whose text is one of
// contents, by id. The contents travel as one JSON list, so that the
// statement's text stays the same (and prepared) whatever their number.
func (s *Store) ByContent(ctx context.Context, contents ...index.ContentID) ([]*index.Record, error) {
	if len(contents) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(contents)
	if err != nil {
		return nil, fmt.Errorf("documents of %d contents: %w", len(contents), err)
	}
	return s.records(ctx, fmt.Sprintf("documents of %d contents", len(contents)), "WHERE d.content_id IN (SELECT value FROM json_each(?)) ORDER BY d.id", string(list))
}

// Seen reports whether a document with this idempotency key is stored.
func (s *Store) Seen(ctx context.Context, idem string) (bool, error) {
	var one int
	st, err := s.readStmt(ctx, "SELECT 1 FROM documents WHERE idem = ?")
	if err == nil {
		err = st.QueryRowContext(ctx, idem).Scan(&one)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check %q: %w", idem, s.mapErr(err))
	}
	return true, nil
}

// Documents calls fn with every document version, by id.
func (s *Store) Documents(ctx context.Context, fn func(*index.Record) error) error {
	rows, err := s.reads(ctx).QueryContext(ctx, "SELECT "+docColumns+docFrom+"ORDER BY d.id")
	if err != nil {
		return fmt.Errorf("list documents: %w", s.mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return fmt.Errorf("list documents: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Candidates returns contents that share a band key or a chunk.
func (s *Store) Candidates(ctx context.Context, q index.CandidateQuery) ([]index.ContentID, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	if err := s.settleView(ctx); err != nil {
		return nil, fmt.Errorf("find candidates: %w", err)
	}
	gen := s.over.start(s.now())
	tx, end, err := s.readTx(ctx) // one read lock for every lookup
	if err != nil {
		return nil, fmt.Errorf("find candidates: %w", err)
	}
	defer end()
	seen := make(map[index.ContentID]struct{})
	var out []index.ContentID
	add := func(cs []int64) {
		for _, c := range cs {
			if _, ok := seen[index.ContentID(c)]; !ok {
				seen[index.ContentID(c)] = struct{}{}
				out = append(out, index.ContentID(c))
			}
		}
	}
	// A stored text's band keys that no other content holds need not be
	// looked up (bandshares.go); its content is a candidate by itself.
	// When the stored text's partners are listed, they are its band
	// candidates: no band key is looked up at all.
	self, mask, partners, known, err := s.storedBands(ctx, tx, q.TextSHA256, q.Content)
	if err != nil {
		return nil, fmt.Errorf("find candidates: %w", s.mapErr(err))
	}
	if self != 0 {
		add([]int64{self})
	}
	keys := make([]int64, 0, len(q.Bands))
	if self != 0 && known {
		add(partners)
	} else {
		for i, b := range q.Bands {
			if self == 0 || i >= maskBands || mask&(1<<i) != 0 {
				keys = append(keys, postingKey(b))
			}
		}
		lists, err := s.wholeLists(ctx, tx, "band_postings", keys)
		if err != nil {
			return nil, fmt.Errorf("find candidates by band: %w", s.mapErr(err))
		}
		for _, k := range keys {
			add(lists[k])
		}
	}
	keys = keys[:0]
	for _, h := range q.Chunks {
		keys = append(keys, postingKey(h))
	}
	// One more than allowed is fetched: a chunk held by more contents than
	// MaxChunkDocs is boilerplate and contributes no candidates.
	lists, err := s.boundedLists(ctx, tx, gen, "chunk_postings", keys, q.MaxChunkDocs)
	if err != nil {
		return nil, fmt.Errorf("find candidates by chunk: %w", s.mapErr(err))
	}
	for _, k := range keys {
		if cs := lists[k]; len(cs) <= q.MaxChunkDocs {
			add(cs)
		}
	}
	return out, nil
}

// Fingerprints loads the fingerprints of ids.
func (s *Store) Fingerprints(ctx context.Context, ids []index.ContentID, fn func(index.ContentID, *index.Fingerprint) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	// A list in one argument keeps the statement's text constant (and so
	// prepared once), whatever the number of ids.
	list, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("load fingerprints: %w", err)
	}
	st, err := s.readStmt(ctx, "SELECT id, text_sha256, text_size, simhash, body FROM contents WHERE id IN (SELECT value FROM json_each(?))")
	if err != nil {
		return fmt.Errorf("load fingerprints: %w", s.mapErr(err))
	}
	rows, err := st.QueryContext(ctx, string(list))
	if err != nil {
		return fmt.Errorf("load fingerprints: %w", s.mapErr(err))
	}
	if err := scanFingerprints(rows, fn); err != nil {
		return fmt.Errorf("load fingerprints: %w", err)
	}
	return nil
}

func scanFingerprints(rows *sql.Rows, fn func(index.ContentID, *index.Fingerprint) error) error {
	defer rows.Close()
	for rows.Next() {
		var id, simhash int64
		// Raw: the body is decoded and the hash copied before Next, and a
		// copy of each was a tenth of a search's garbage.
		var sha, body sql.RawBytes
		fp := new(index.Fingerprint)
		if err := rows.Scan(&id, &sha, &fp.TextSize, &simhash, &body); err != nil {
			return err
		}
		copy(fp.TextSHA256[:], sha)
		fp.SimHash = uint64(simhash)
		if err := fp.DecodeBody(body); err != nil {
			return fmt.Errorf("content %d: %w", id, err)
		}
		if err := fn(index.ContentID(id), fp); err != nil {
			return err
		}
	}
	return rows.Err()
}

// SimHashes calls fn with every content's SimHash, in SimHash order (that
// of the covering index it reads).
func (s *Store) SimHashes(ctx context.Context, fn func(index.ContentID, uint64) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	// From the covering index: a scan of contents would read every body.
	rows, err := s.reads(ctx).QueryContext(ctx, "SELECT id, simhash FROM contents INDEXED BY contents_simhash")
	if err != nil {
		return fmt.Errorf("read simhashes: %w", s.mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id, h int64
		if err := rows.Scan(&id, &h); err != nil {
			return fmt.Errorf("read simhashes: %w", err)
		}
		if err := fn(index.ContentID(id), uint64(h)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Groups calls fn with every set of contents sharing a band key or a chunk
// held by at most maxChunkDocs contents; with of, only the sets holding
// one of of.
func (s *Store) Groups(ctx context.Context, maxChunkDocs int, of []index.ContentID, fn func([]index.ContentID) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	if v, err := s.postingsView(ctx); err != nil || v != nil {
		if err != nil {
			return fmt.Errorf("group contents: %w", err)
		}
		return v.groups(maxChunkDocs, of, fn)
	}
	tx, end, keys, err := s.groupingTx(ctx, of)
	if err != nil {
		return fmt.Errorf("group contents: %w", err)
	}
	defer end()
	for i, table := range []string{"band_postings", "chunk_postings"} {
		limit := int(^uint(0) >> 1)
		if table == "chunk_postings" {
			limit = maxChunkDocs
		}
		var group []index.ContentID
		var cur int64 = -1
		flush := func() error {
			if len(group) >= 2 && len(group) <= limit {
				return fn(group)
			}
			return nil
		}
		err := s.postingsByKey(ctx, tx, "SELECT h, c FROM "+table, "h", of != nil, keys[i], func(rows *sql.Rows) error {
			var h, c int64
			if err := rows.Scan(&h, &c); err != nil {
				return err
			}
			if h != cur {
				if err := flush(); err != nil {
					return err
				}
				group, cur = group[:0], h
			}
			group = append(group, index.ContentID(c))
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("group %s: %w", table, s.mapErr(err))
		}
	}
	return nil
}

// groupKeys are posting keys, sorted and distinct: band keys, chunk keys
// and anchor keys.
type groupKeys [3][]int64

// groupingTx starts the read transaction Groups and AnchorGroups read
// in, and reads there the posting keys of of, when not nil: the keys and
// their postings are then of one moment.
func (s *Store) groupingTx(ctx context.Context, of []index.ContentID) (*sql.Tx, func(), groupKeys, error) {
	var keys groupKeys
	tx, end, err := s.readTx(ctx)
	if err != nil || of == nil {
		return tx, end, keys, err
	}
	if keys, err = s.groupKeysOf(ctx, tx, of); err != nil {
		end()
		return nil, nil, keys, err
	}
	return tx, end, keys, nil
}

// groupKeysBatch is how many keys one statement reads the postings of.
const groupKeysBatch = 8192

// groupKeysOf returns the posting keys of contents.
func (s *Store) groupKeysOf(ctx context.Context, tx *sql.Tx, contents []index.ContentID) (groupKeys, error) {
	var keys groupKeys
	for batch := range slices.Chunk(contents, groupKeysBatch) {
		list, err := json.Marshal(batch)
		if err != nil {
			return keys, err
		}
		rows, err := tx.QueryContext(ctx, "SELECT body, bands FROM contents WHERE id IN (SELECT value FROM json_each(?))", string(list))
		if err != nil {
			return keys, fmt.Errorf("read the keys of %d contents: %w", len(batch), s.mapErr(err))
		}
		var fp index.Fingerprint
		for rows.Next() {
			var body, bands []byte
			if err := rows.Scan(&body, &bands); err != nil {
				rows.Close()
				return keys, fmt.Errorf("read content keys: %w", err)
			}
			if err := fp.DecodeBody(body); err != nil {
				rows.Close()
				return keys, fmt.Errorf("read content keys: %w", err)
			}
			keys[0] = append(keys[0], bandKeys(bands)...)
			for _, c := range fp.Chunks {
				keys[1] = append(keys[1], postingKey(c.Hash))
			}
			for _, a := range fp.Anchors() {
				keys[2] = append(keys[2], postingKey(a))
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return keys, fmt.Errorf("read content keys: %w", err)
		}
	}
	for i := range keys {
		slices.Sort(keys[i])
		keys[i] = slices.Compact(keys[i])
	}
	return keys, nil
}

// postingsByKey runs query (a SELECT of a posting table, without WHERE or
// ORDER BY) in key order, every row or, when only, only the rows of keys,
// calling row for each.
func (s *Store) postingsByKey(ctx context.Context, tx *sql.Tx, query, order string, only bool, keys []int64, row func(*sql.Rows) error) error {
	each := func(rows *sql.Rows, err error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := row(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	if !only {
		return each(tx.QueryContext(ctx, query+" ORDER BY "+order))
	}
	for batch := range slices.Chunk(keys, groupKeysBatch) {
		list, err := json.Marshal(batch)
		if err != nil {
			return err
		}
		if err := each(tx.QueryContext(ctx, query+" WHERE h IN (SELECT value FROM json_each(?)) ORDER BY "+order, string(list))); err != nil {
			return err
		}
	}
	return nil
}

// AddTemplate stores t.
func (s *Store) AddTemplate(ctx context.Context, t index.Template) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chunks := make([]byte, 0, 8*len(t.Chunks))
	for _, c := range t.Chunks {
		chunks = binary.LittleEndian.AppendUint64(chunks, c)
	}
	samples := make([]byte, 0, 4*len(t.Samples))
	for _, c := range t.Samples {
		samples = binary.LittleEndian.AppendUint32(samples, c)
	}
	at := t.At
	if at.IsZero() {
		at = s.now()
	}
	var id int64
	err := s.w.QueryRowContext(ctx, "INSERT INTO templates (name, reason, actor, at, chunks, samples) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
		t.Name, t.Reason, t.Actor, at.UnixNano(), chunks, samples).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("add template %q: %w", t.Name, s.mapErr(err))
	}
	s.committed()
	return id, nil
}

// Templates returns every stored template.
func (s *Store) Templates(ctx context.Context) ([]index.Template, error) {
	rows, err := s.reads(ctx).QueryContext(ctx, "SELECT id, name, reason, actor, at, chunks, samples FROM templates ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("read templates: %w", s.mapErr(err))
	}
	defer rows.Close()
	var out []index.Template
	for rows.Next() {
		var t index.Template
		var at int64
		var chunks, samples []byte
		if err := rows.Scan(&t.ID, &t.Name, &t.Reason, &t.Actor, &at, &chunks, &samples); err != nil {
			return nil, fmt.Errorf("read templates: %w", err)
		}
		t.At = time.Unix(0, at).UTC()
		for ; len(chunks) >= 8; chunks = chunks[8:] {
			t.Chunks = append(t.Chunks, binary.LittleEndian.Uint64(chunks))
		}
		for ; len(samples) >= 4; samples = samples[4:] {
			t.Samples = append(t.Samples, binary.LittleEndian.Uint32(samples))
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// anchorShare is a content on two or more of a query's anchor lists: on
// how many, and how many anchors it has in all.
type anchorShare struct {
	c       int64
	shared  int32
	anchors int32
}

// anchorShares returns the contents on two or more of the lists of keys no
// longer than maxDocs, ascending: counted where the lists are, when they
// are in memory, else from the lists read from the blocks.
func (s *Store) anchorShares(ctx context.Context, tx *sql.Tx, gen uint64, keys []int64, maxDocs int) ([]anchorShare, error) {
	if s.mem != nil {
		at, err := s.readAnchorsGen(ctx, tx)
		if err != nil {
			return nil, err
		}
		if shares, ok := s.mem.shares(keys, maxDocs, at); ok {
			return shares, nil
		}
	}
	lists, err := s.anchorLists(ctx, tx, gen, keys, maxDocs)
	if err != nil {
		return nil, err
	}
	// Every posting of the lists that tell something, sorted by content:
	// a content's run is the anchors it shares with the query. Sorting
	// cost half what counting in a map did.
	return sharesOfSorted(sharedAnchors(lists, maxDocs)), nil
}

// sharesOfSorted returns the contents found two or more times in all,
// which is sorted by content.
func sharesOfSorted(all []anchorPosting) []anchorShare {
	var out []anchorShare
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].c == all[i].c {
			j++
		}
		if j-i >= 2 {
			out = append(out, anchorShare{all[i].c, int32(j - i), all[i].n})
		}
		i = j
	}
	return out
}

// sharedAnchors returns the postings of the lists no longer than maxDocs
// (longer ones are boilerplate, held by too many contents to tell
// anything), sorted by content. They are sorted as integers, content id
// above anchor count, which took a third of the time of sorting the
// structures, by radix on the id's bits alone (a query's tens of thousands
// of postings in two passes: a third of the time of slices.Sort, which
// was a tenth of an "all versions" query); ids too large for that (never
// seen: 2^40 contents) are sorted as structures.
func sharedAnchors(lists map[int64][]anchorPosting, maxDocs int) []anchorPosting {
	const countBits = 24
	total := 0
	for _, ps := range lists {
		if len(ps) <= maxDocs {
			total += len(ps)
		}
	}
	all := make([]anchorPosting, 0, total) // sized first: appends were most of a query's garbage
	packable := true
	for _, ps := range lists {
		if len(ps) > maxDocs {
			continue
		}
		for _, p := range ps {
			packable = packable && p.c < 1<<(63-countBits) && p.n < 1<<countBits
		}
		all = append(all, ps...)
	}
	if !packable {
		slices.SortFunc(all, func(a, b anchorPosting) int { return cmp.Compare(a.c, b.c) })
		return all
	}
	buf := make([]int64, 2*len(all))
	keys := buf[:len(all)]
	var most int64
	for i, p := range all {
		keys[i] = p.c<<countBits | int64(p.n)
		most = max(most, p.c)
	}
	keys = radixSortAbove(keys, buf[len(all):], countBits, bits.Len64(uint64(most)))
	for i, k := range keys {
		all[i] = anchorPosting{c: k >> countBits, n: int32(k & (1<<countBits - 1))}
	}
	return all
}

// radixSortAbove sorts keys, which are not negative, by their bits from
// lo to lo+width (the bits below lo keep their order: the sort is stable),
// in passes of radixBits, using scratch (as long as keys); it returns the
// slice holding the result, keys or scratch.
func radixSortAbove[K int64 | uint32](keys, scratch []K, lo, width int) []K {
	const radixBits = 11
	var count [1 << radixBits]int
	for shift := lo; shift < lo+width; shift += radixBits {
		clear(count[:])
		for _, k := range keys {
			count[k>>shift&(1<<radixBits-1)]++
		}
		sum := 0
		for i, n := range count {
			count[i] = sum
			sum += n
		}
		for _, k := range keys {
			d := k >> shift & (1<<radixBits - 1)
			scratch[count[d]] = k
			count[d]++
		}
		keys, scratch = scratch, keys
	}
	return keys
}

// ChunkContents counts the contents holding each chunk.
func (s *Store) ChunkContents(ctx context.Context, hashes []uint64) (map[uint64]int, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	// The view is taken as it is, without asking whether another process
	// has added contents since (postingsView): a scan's analysis asks for
	// each of its shared chunks, and the question cost more than the
	// counts. A count only decides whether a chunk is ubiquitous, held by
	// more than a share of all contents, which a few contents added
	// meanwhile hardly change; Groups and AnchorGroups do ask, and drop
	// the view.
	if v := s.view.Load(); v != nil {
		return v.chunkContents(hashes), nil
	}
	out := make(map[uint64]int, len(hashes))
	// One read transaction for every count, on one connection.
	tx, end, err := s.readTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("count chunk contents: %w", err)
	}
	defer end()
	stmt, err := s.rs.in(ctx, tx, "SELECT count(*) FROM chunk_postings WHERE h = ?")
	if err != nil {
		return nil, fmt.Errorf("count chunk contents: %w", s.mapErr(err))
	}
	for _, h := range hashes {
		if _, ok := out[h]; ok {
			continue
		}
		var n int
		if err := stmt.QueryRowContext(ctx, postingKey(h)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count chunk contents: %w", s.mapErr(err))
		}
		out[h] = n
	}
	return out, nil
}

// Stats counts documents and contents. A container with no text of its
// own (an archive, a message of attachments only) is stored as "empty
// text" but is no failure when its members were stored: it is not counted
// in Failed, as the pipeline's extraction-error metric does not count it.
func (s *Store) Stats(ctx context.Context) (index.Stats, error) {
	var st index.Stats
	err := s.reads(ctx).QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM documents),
		(SELECT count(*) FROM contents),
		(SELECT count(*) FROM documents d WHERE d.error != ''
			AND NOT (d.error = ? AND EXISTS (SELECT 1 FROM documents c WHERE c.parent_id = d.id)))`, index.ErrEmpty.Error()).Scan(&st.Documents, &st.Contents, &st.Failed)
	if err != nil {
		return st, fmt.Errorf("read stats: %w", s.mapErr(err))
	}
	return st, nil
}

// ErrInconsistent reports a store whose rows contradict each other.
var ErrInconsistent = errors.New("index store inconsistent")

// Check verifies the database file and the invariants a crash must never
// break: every document's content exists, every content's reference count
// matches its documents, every content has all its postings, and every
// text block's reference count matches the texts using it.
func (s *Store) Check(ctx context.Context) error {
	var res string
	if err := s.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("check index: %w", s.mapErr(err))
	}
	if res != "ok" {
		return fmt.Errorf("check index: %w: %s", ErrInconsistent, res)
	}
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM documents d WHERE d.content_id IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM contents c WHERE c.id = d.content_id)`).Scan(&n); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("check index: %w: %d documents without their content", ErrInconsistent, n)
	}
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM contents c
		WHERE c.refs != (SELECT count(*) FROM documents d WHERE d.content_id = c.id)`).Scan(&n); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("check index: %w: %d contents with a wrong reference count", ErrInconsistent, n)
	}
	// Contents a bulk load has not posted yet (Options.DeferPostings) have
	// no postings to check.
	rows, err := s.r.QueryContext(ctx, "SELECT id, body, bands FROM contents WHERE id NOT IN (SELECT content_id FROM pending_postings)")
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	defer rows.Close()
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	defer conn.Close()
	for rows.Next() {
		var id int64
		var body, bands []byte
		if err := rows.Scan(&id, &body, &bands); err != nil {
			return fmt.Errorf("check index: %w", err)
		}
		var fp index.Fingerprint
		if err := fp.DecodeBody(body); err != nil {
			return fmt.Errorf("check index: content %d: %w", id, err)
		}
		for _, c := range fp.Chunks {
			if err := expectPosting(ctx, conn, "chunk_postings", postingKey(c.Hash), id); err != nil {
				return err
			}
		}
		anchors := fp.Anchors()
		for _, a := range anchors {
			if err := expectAnchor(ctx, conn, postingKey(a), id, len(anchors)); err != nil {
				return err
			}
		}
		for _, k := range bandKeys(bands) {
			if err := expectPosting(ctx, conn, "band_postings", k, id); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	rows.Close()
	if err := checkBandShares(ctx, s.r); err != nil {
		return err
	}
	if err := checkTexts(ctx, s.r); err != nil {
		return err
	}
	return checkAnchorBlocks(ctx, s.r, conn)
}

func expectPosting(ctx context.Context, conn *sql.Conn, table string, h, c int64) error {
	var one int
	err := conn.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE h = ? AND c = ?", h, c).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check index: %w: content %d lacks a %s entry", ErrInconsistent, c, table)
	}
	if err != nil {
		return fmt.Errorf("check index: %w", err)
	}
	return nil
}

// backfills run after the SQL of a migration, in its transaction, keyed by
// the version they migrate to.
var backfills = map[int]func(context.Context, *sql.Tx) error{
	2: backfillAnchors,
	4: blockAnchors,
	6: backfillBandShares,
}

// backfillAnchors posts the anchors of contents stored before version 2.
func backfillAnchors(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, body FROM contents")
	if err != nil {
		return fmt.Errorf("post anchors: %w", err)
	}
	type content struct {
		id      int64
		anchors []uint64
	}
	var all []content
	for rows.Next() {
		var id int64
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			rows.Close()
			return fmt.Errorf("post anchors: %w", err)
		}
		var fp index.Fingerprint
		if err := fp.DecodeBody(body); err != nil {
			rows.Close()
			return fmt.Errorf("post anchors: content %d: %w", id, err)
		}
		all = append(all, content{id, fp.Anchors()})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
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

// AnchorCandidates implements index.Searcher.
func (s *Store) AnchorCandidates(ctx context.Context, anchors []uint64, maxDocs int, minShare float64, limit int) ([]index.ContentID, error) {
	if err := s.errStale(); err != nil {
		return nil, err
	}
	if len(anchors) == 0 || limit <= 0 {
		return nil, nil
	}
	if err := s.settleView(ctx); err != nil {
		return nil, fmt.Errorf("find anchor candidates: %w", err)
	}
	gen := s.over.start(s.now())
	// One read transaction for every lookup: each statement on its own
	// would take and release the WAL read lock (system calls) again.
	tx, end, err := s.readTx(ctx)
	if err != nil {
		return nil, fmt.Errorf("find anchor candidates: %w", err)
	}
	defer end()
	keys := make([]int64, 0, len(anchors))
	seen := make(map[int64]struct{}, len(anchors))
	for _, a := range anchors {
		k := postingKey(a)
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	queried := len(keys)
	shares, err := s.anchorShares(ctx, tx, gen, keys, maxDocs)
	if err != nil {
		return nil, fmt.Errorf("find anchor candidates: %w", s.mapErr(err))
	}
	type cand struct {
		id    int64
		share float64
	}
	var cands []cand
	for _, sh := range shares {
		smaller := min(queried, int(sh.anchors))
		if smaller == 0 {
			continue
		}
		if share := float64(sh.shared) / float64(smaller); share >= minShare {
			cands = append(cands, cand{sh.c, share})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.share > b.share:
			return -1
		case a.share < b.share:
			return 1
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(cands) > limit {
		cands = cands[:limit]
	}
	out := make([]index.ContentID, len(cands))
	for i, c := range cands {
		out[i] = index.ContentID(c.id)
	}
	return out, nil
}

// AnchorGroups implements index.Grouper.
func (s *Store) AnchorGroups(ctx context.Context, maxDocs int, of []index.ContentID, fn func([]index.ContentID, []int) error) error {
	if err := s.errStale(); err != nil {
		return err
	}
	if v, err := s.postingsView(ctx); err != nil || v != nil {
		if err != nil {
			return fmt.Errorf("group anchors: %w", err)
		}
		return v.anchorGroups(maxDocs, of, fn)
	}
	// One snapshot: the postings carry each content's anchor count.
	tx, end, keys, err := s.groupingTx(ctx, of)
	if err != nil {
		return fmt.Errorf("group anchors: %w", err)
	}
	defer end()
	var (
		group   []index.ContentID
		ns      []int
		cur     int64 = -1
		skipped bool
	)
	flush := func() error {
		if len(group) >= 2 && len(group) <= maxDocs {
			return fn(group, ns)
		}
		return nil
	}
	err = s.postingsByKey(ctx, tx, "SELECT h, first, n, ids FROM anchor_blocks", "h, first", of != nil, keys[2], func(rows *sql.Rows) error {
		b, err := scanBlock(rows)
		if err != nil {
			return err
		}
		if b.h != cur {
			if err := flush(); err != nil {
				return err
			}
			group, ns, cur, skipped = group[:0], ns[:0], b.h, false
		}
		if skipped || len(group) > maxDocs {
			skipped = true // boilerplate: stop collecting this anchor
			return nil
		}
		for _, p := range b.ps {
			group = append(group, index.ContentID(p.c))
			ns = append(ns, int(p.n))
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("group anchors: %w", s.mapErr(err))
	}
	return nil
}

// queryByKeys runs query in tx with keys as its first parameter, a JSON
// list (read with json_each), and args after: one statement for any
// number of keys, whose text stays constant.
func (s *Store) queryByKeys(ctx context.Context, tx *sql.Tx, query string, keys []int64, args ...any) (*sql.Rows, error) {
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	st, err := s.rs.in(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, append([]any{string(list)}, args...)...)
}

// wholeLists returns, for each key, every content posted under it in
// table, from a plain join: a row per posting, cheaper than postingLists's
// lists built as text when nothing bounds them (band keys are held by a
// content and its near-copies).
func (s *Store) wholeLists(ctx context.Context, tx *sql.Tx, table string, keys []int64) (map[int64][]int64, error) {
	out := make(map[int64][]int64, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.queryByKeys(ctx, tx, `SELECT p.h, p.c FROM (SELECT DISTINCT value FROM json_each(?)) j JOIN `+table+` p ON p.h = j.value`, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, c int64
		if err := rows.Scan(&k, &c); err != nil {
			return nil, err
		}
		out[k] = append(out[k], c)
	}
	return out, rows.Err()
}

// postingLists returns, for each key, the contents posted under it in
// table, at most limit+1 of them (so that a caller can tell a key held by
// more than limit contents), in one statement: a statement per key costs
// more in the driver than the lookups themselves.
func (s *Store) postingLists(ctx context.Context, tx *sql.Tx, table string, keys []int64, limit int) (map[int64][]int64, error) {
	out := make(map[int64][]int64, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.queryByKeys(ctx, tx, `SELECT j.value, (SELECT group_concat(c) FROM (SELECT c FROM `+table+` WHERE h = j.value LIMIT ?2))
		FROM (SELECT DISTINCT value FROM json_each(?1)) j`, keys, limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k int64
		var cs sql.NullString
		if err := rows.Scan(&k, &cs); err != nil {
			return nil, err
		}
		if !cs.Valid || cs.String == "" {
			continue
		}
		ids, err := parseIDs(cs.String)
		if err != nil {
			return nil, fmt.Errorf("posting list of %d: %w", k, err)
		}
		out[k] = ids
	}
	return out, rows.Err()
}
