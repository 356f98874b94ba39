package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdex/simdex/index"
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
}

// Store is the embedded SQLite index store, live: each commit makes its
// documents findable. It is safe for concurrent use. A bulk load is a
// Loader (loader.go).
type Store struct {
	path      string
	w         *sql.DB // one connection: SQLite has one writer
	r         *sql.DB
	now       func() time.Time
	mu        sync.Mutex // serialises writers in this process
	close     sync.Once
	over      overfull        // posting keys known to be boilerplate
	mem       *memAnchors     // nil unless Options.AnchorsInMemory
	memCtx    context.Context // the loading of mem, stopped by Close
	memStop   context.CancelFunc
	memDone   chan struct{} // the latest load has ended; guarded by mu
	logger    *slog.Logger
	scheme    uint32                 // Options.Scheme
	stale     atomic.Pointer[string] // the scheme of the stored fingerprints, if not scheme
	memWanted bool                   // Options.AnchorsInMemory
	load      *Loader                // the bulk load under way, nil in a live store
	dirs      dirCache               // key prefixes' ids; guarded by mu

	rs, ws *statements // the readers' and the writer's prepared statements

	ckpt     *sql.DB       // the checkpointer's connection
	ckptWake chan struct{} // a commit happened
	ckptStop chan struct{}
	ckptDone chan struct{}
}

var _ index.Store = (*Store)(nil)

// Close settles the bulk load, if s is a Loader's, and releases the
// database. Further calls do nothing.
func (s *Store) Close() error {
	var err error
	s.close.Do(func() {
		s.stopAnchors() // the anchor lists no longer load while it settles
		if s.load != nil {
			err = s.load.Settle(context.Background())
		}
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

// Path returns the database file.
func (s *Store) Path() string { return s.path }

func (s *Store) mapErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "database is closed") {
		return errors.Join(index.ErrClosed, err)
	}
	return err
}

// checkpointEvery is the least time between two checkpoints, so that the
// pages that consecutive small commits rewrite are copied to the database
// once rather than at every commit.
const checkpointEvery = 100 * time.Millisecond

// walResetFrames is the log length (in pages of 4 KiB) above which the
// checkpointer holds the writer back once so that the log can start over.
// A variable for tests.
var walResetFrames = 16384

// checkpoints copies committed pages from the write-ahead log into the
// database on a connection of its own, after commits, at most once per
// checkpointEvery. SQLite's automatic checkpoints ran in the committing
// connection, so every few commits the single writer also copied pages:
// a sixth of a bulk scan's serial commit path. A passive checkpoint runs
// beside the writer (it never blocks it), and copies only what is
// committed: durability is the same.
func (s *Store) checkpoints(log *slog.Logger) {
	defer close(s.ckptDone)
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

// Config is what a configuration file sets of the store: under the
// daemon's index section, the keys path, durability and anchors_in_memory.
type Config struct {
	// Path of the database file; the daemon defaults it to
	// data_dir/index.db.
	Path string `mapstructure:"path"`
	// Durability is Full (fsync at every commit) or Normal.
	Durability Durability `mapstructure:"durability"`
	// AnchorsInMemory: see Options.AnchorsInMemory.
	AnchorsInMemory bool `mapstructure:"anchors_in_memory"`
}
