// Package pgdb opens the PostgreSQL database that the stores of a fleet of
// simdex replicas share, and brings each store's schema up to date with
// its own embedded migrations (goose), one version table per store, under
// a PostgreSQL advisory lock so that replicas starting together migrate
// once. KeyLocks serialise the work on one object key across replicas.
package pgdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// ErrAuthentication is returned by Open when the server refused the
// credentials of the connection string.
var ErrAuthentication = errors.New("PostgreSQL refused the credentials")

// ErrSchemaNewer is returned by Migrate when a newer release migrated the
// database and declared that releases as old as this one can no longer
// use it: running them could write what the newer code misreads. Run the
// newer release, or restore the database from before the upgrade.
var ErrSchemaNewer = errors.New("the database's schema is too new for this binary")

// CompatTable records, per version table, the oldest schema version whose
// code may still use the database (column oldest_reader). A migration only
// adds to a schema, and the release before it keeps working during a
// rolling upgrade; one that breaks older code says so, creating the table
// the first time (migrations run one at a time under goose's lock):
//
//	CREATE TABLE IF NOT EXISTS schema_compat (version_table text PRIMARY KEY, oldest_reader bigint NOT NULL);
//	INSERT INTO schema_compat VALUES ('index_schema', 7)
//	ON CONFLICT (version_table) DO UPDATE SET oldest_reader = excluded.oldest_reader;
const CompatTable = "schema_compat"

// ErrUnreachable is returned by Open when no server answered.
var ErrUnreachable = errors.New("PostgreSQL did not answer")

// Option changes how Open connects.
type Option func(*pgxpool.Config)

// WithTracer traces every query of the pool's connections (tests count
// round trips with one).
func WithTracer(t pgx.QueryTracer) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.Tracer = t }
}

// Open connects a pool to dsn and checks that the server answers and
// accepts its credentials. The error never contains the password.
func Open(ctx context.Context, dsn string, maxConns int32, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors quote the string, password included.
		return nil, errors.New("parse the PostgreSQL connection string: not a valid URL or key=value list")
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	for _, o := range opts {
		o(cfg)
	}
	where := fmt.Sprintf("%s@%s:%d/%s", cfg.ConnConfig.User, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL %s: %w", where, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL %s: %w", where, classify(err))
	}
	return pool, nil
}

// classify wraps err in ErrAuthentication or ErrUnreachable when it is one.
func classify(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000") {
		return fmt.Errorf("%w: %s", ErrAuthentication, pgErr.Message)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// Migrate applies the migrations in directory dir of fsys (files
// NNNNN_name.sql in goose's format; a store embeds them) that table does
// not record as applied yet. table
// names the store's version table, such as "index_schema". Replicas
// migrating at once wait for each other on an advisory lock. A database
// whose schema is newer than every migration in dir is used as it is when
// its CompatTable row allows this binary's last version, and refused with
// ErrSchemaNewer otherwise.
func Migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, dir, table string) error {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", table, err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return migrate(ctx, db, sub, table)
}

func migrate(ctx context.Context, db *sql.DB, fsys fs.FS, table string) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", table, err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName(table), goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrate %s: %w", table, err)
	}
	if err := refuseNewer(ctx, db, p, table); err != nil {
		return fmt.Errorf("migrate %s: %w", table, err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", table, err)
	}
	return nil
}

// refuseNewer returns ErrSchemaNewer when the database's version is
// beyond the last migration p knows and its CompatTable row declares that
// version too old to use it. Checked before Up, outside its lock:
// versions only grow, so a verdict stays true.
func refuseNewer(ctx context.Context, db *sql.DB, p *goose.Provider, table string) error {
	have, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	var known int64
	for _, s := range p.ListSources() {
		known = max(known, s.Version)
	}
	if have <= known {
		return nil
	}
	// No table, or no row: no migration declared older code unfit.
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT to_regclass($1) IS NOT NULL", CompatTable).Scan(&exists); err != nil {
		return fmt.Errorf("look for %s: %w", CompatTable, err)
	}
	if !exists {
		return nil
	}
	var oldest int64
	err = db.QueryRowContext(ctx, "SELECT oldest_reader FROM "+CompatTable+" WHERE version_table = $1", table).Scan(&oldest)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read %s: %w", CompatTable, err)
	}
	if known < oldest {
		return fmt.Errorf("%w: version %d needs code of version %d or later, this binary's is %d", ErrSchemaNewer, have, oldest, known)
	}
	return nil
}
