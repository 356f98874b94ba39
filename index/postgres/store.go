package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/pgdb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SchemaTable is the goose version table of the index's migrations.
const SchemaTable = "index_schema"

// maxAttempts bounds how many times a transaction aborted by a
// serialization failure, a deadlock or a lost race on a unique key is run.
const maxAttempts = 8

// Options configure a store.
type Options struct {
	// Scheme is the fingerprint scheme of the index using the store
	// (index.Options.Scheme). A database holding fingerprints of another
	// scheme is refused with index.ErrSchemeMismatch: this store does not
	// fingerprint again.
	Scheme uint32
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// Store is the shared PostgreSQL index store. It is safe for concurrent
// use, by many goroutines and many processes on one database.
type Store struct {
	pool   *pgxpool.Pool
	now    func() time.Time
	closed atomic.Bool
}

var (
	_ index.Store      = (*Store)(nil)
	_ index.MetaFinder = (*Store)(nil)
	_ index.Follower   = (*Store)(nil)
)

// New applies the index's migrations to the database of pool and returns
// the store. Close does not close pool, which the caller owns.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	if err := pgdb.Migrate(ctx, pool, migrations, "migrations", SchemaTable); err != nil {
		return nil, fmt.Errorf("open index store: %w", err)
	}
	s := &Store{pool: pool, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.checkScheme(ctx, opts.Scheme); err != nil {
		return nil, fmt.Errorf("open index store: %w", err)
	}
	return s, nil
}

// RecordedScheme returns the fingerprint scheme the index in pool's
// database records, or 0 when it records none (a new database), without
// changing anything. Callers pass it to index.Options.ForScheme before
// New, so that an index keeps the scheme it was built with when the
// defaults change.
func RecordedScheme(ctx context.Context, pool *pgxpool.Pool) (uint32, error) {
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('index_meta') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("read fingerprint scheme: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v string
	err := pool.QueryRow(ctx, "SELECT value FROM index_meta WHERE key = 'scheme'").Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read fingerprint scheme: %w", err)
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("read fingerprint scheme: %q: %w", v, err)
	}
	return uint32(n), nil
}

// checkScheme records scheme in a new store and refuses another.
func (s *Store) checkScheme(ctx context.Context, scheme uint32) error {
	want := strconv.FormatUint(uint64(scheme), 10)
	var got string
	err := s.pool.QueryRow(ctx, `INSERT INTO index_meta (key, value) VALUES ('scheme', $1)
		ON CONFLICT (key) DO UPDATE SET value = index_meta.value RETURNING value`, want).Scan(&got)
	if err != nil {
		return fmt.Errorf("record fingerprint scheme: %w", err)
	}
	if got != want {
		return fmt.Errorf("%w: the database holds scheme %s, the index uses %s", index.ErrSchemeMismatch, got, want)
	}
	return nil
}

// Close marks the store closed: later calls return index.ErrClosed. It
// does not close the pool.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// errClosed returns index.ErrClosed once the store is closed.
func (s *Store) errClosed() error {
	if s.closed.Load() {
		return index.ErrClosed
	}
	return nil
}

// retryable reports an error after which the whole transaction may run
// again: a serialization failure, a deadlock, or a unique key another
// writer took first (the next attempt sees its row).
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "40001", "40P01":
		return true
	case "23505":
		return pgErr.ConstraintName == "index_documents_idem_key" || pgErr.ConstraintName == "index_contents_text_sha256_key"
	}
	return false
}

// inTx runs fn in a READ COMMITTED transaction and commits it, running it
// again when retryable says so. A failed commit is not retried: whether it
// took effect is unknown, and the caller's retry finds out by the
// idempotency keys.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	if err := s.errClosed(); err != nil {
		return err
	}
	var err error
	for range maxAttempts {
		err = s.tx(ctx, fn)
		if !retryable(err) {
			return err
		}
	}
	return fmt.Errorf("%d attempts: %w", maxAttempts, err)
}

// tx runs fn in a transaction and commits it.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx) // the error that matters is fn's
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Stats returns counts of documents, contents and failed documents.
func (s *Store) Stats(ctx context.Context) (index.Stats, error) {
	var st index.Stats
	if err := s.errClosed(); err != nil {
		return st, err
	}
	err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM index_documents),
		(SELECT count(*) FROM index_contents), (SELECT count(*) FROM index_documents WHERE error <> '')`).
		Scan(&st.Documents, &st.Contents, &st.Failed)
	if err != nil {
		return st, fmt.Errorf("count documents: %w", err)
	}
	return st, nil
}
