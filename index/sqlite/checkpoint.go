package sqlite

import (
	"fmt"
	"log/slog"
	"time"
)

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
