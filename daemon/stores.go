package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/auth"
	authpg "github.com/simdex/simdex/auth/postgres"
	authsqlite "github.com/simdex/simdex/auth/sqlite"
	indexpg "github.com/simdex/simdex/index/postgres"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/lease"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/notifier"
	notifierpg "github.com/simdex/simdex/notifier/postgres"
	notifiersqlite "github.com/simdex/simdex/notifier/sqlite"
	"github.com/simdex/simdex/policy"
	policypg "github.com/simdex/simdex/policy/postgres"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
)

// policyStore is the policy store the daemon opens: the policy engine's
// store, closed with the daemon.
type policyStore interface {
	policy.Store
	Close() error
}

// postgres reports whether the stores are in the shared PostgreSQL.
func (c *Config) postgres() bool { return c.Store.Driver == DriverPostgres }

// storeAttrs names the stores in log lines: the index file on the
// embedded default, or PostgreSQL and where its connection string comes
// from (never the string, which holds a password).
func (c *Config) storeAttrs() []any {
	if c.postgres() {
		return []any{"store", DriverPostgres, "dsn", c.Store.Postgres.Source()}
	}
	return []any{"index", c.IndexPath()}
}

// connectPostgres reads the DSN and connects a pool of maxConns; a refused
// password or an unreachable server is an error naming the DSN's key.
func connectPostgres(ctx context.Context, cfg *Config, maxConns int32, opts ...pgdb.Option) (*pgxpool.Pool, error) {
	dsn, err := cfg.PostgresDSN(os.Getenv, os.ReadFile)
	if err != nil {
		return nil, err
	}
	pool, err := pgdb.Open(ctx, dsn, maxConns, opts...)
	if errors.Is(err, pgdb.ErrAuthentication) {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, cfg.Store.Postgres.Source(), err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Store.Postgres.Source(), err)
	}
	return pool, nil
}

// openDatabase connects to the fleet's PostgreSQL when store.driver is
// postgres: a pool for the stores, a pool for the object-key locks (so a
// worker holding a key's lock never waits for a connection that only
// another lock holder could free), and the singletons' leases.
func (d *Daemon) openDatabase(ctx context.Context, p *parts) error {
	if !d.cfg.postgres() {
		return nil
	}
	pool, err := connectPostgres(ctx, &d.cfg, int32(d.cfg.Store.Postgres.MaxConns), d.pgOpts...)
	if err != nil {
		return err
	}
	p.onClose(pool.Close)
	keys, err := connectPostgres(ctx, &d.cfg, int32(d.cfg.Pipeline.Workers)+2, d.pgOpts...)
	if err != nil {
		return err
	}
	p.onClose(keys.Close)
	l, err := lease.NewPostgres(ctx, pool, lease.PostgresOptions{Logger: d.logger, Registerer: d.reg})
	if err != nil {
		return fmt.Errorf("open leases: %w", err)
	}
	p.pool, p.keys, p.lease = pool, pgdb.NewKeyLocks(keys, "simdex/object-key"), l
	return nil
}

// openIndexStore opens the index store store.driver names.
func openIndexStore(ctx context.Context, cfg *Config, logger *slog.Logger, pool *pgxpool.Pool) (indexStore, string, error) {
	// An existing index keeps the scheme it was built with when only the
	// defaults of later sketch parameters differ (index.Options.ForScheme).
	var recorded uint32
	var err error
	if cfg.postgres() {
		recorded, err = indexpg.RecordedScheme(ctx, pool)
	} else {
		recorded, err = sqlite.RecordedScheme(ctx, cfg.IndexPath())
	}
	if err != nil {
		return nil, "", err
	}
	opts := cfg.Index.Options
	if o := opts.ForScheme(recorded); o.Scheme() != opts.Scheme() {
		logger.Info("index keeps the fingerprint scheme it was built with", "scheme", recorded, "minhash_bits", o.Sketch.FullBits(), "sample_floor", o.Sketch.SampleFloor)
		opts, cfg.Index.Options = o, o
	}
	if cfg.postgres() {
		st, err := indexpg.New(ctx, pool, indexpg.Options{Scheme: opts.Scheme()})
		if err != nil {
			return nil, "", fmt.Errorf("open index store in PostgreSQL: %w", err)
		}
		return st, "in PostgreSQL", nil
	}
	st, err := sqlite.Open(ctx, cfg.IndexPath(), sqlite.Options{
		Scheme: opts.Scheme(), Durability: cfg.Index.Durability, Logger: logger,
		AnchorsInMemory: cfg.Index.AnchorsInMemory,
	})
	if err != nil {
		return nil, "", err
	}
	return st, cfg.IndexPath(), nil
}

// pooledStore is an index store with the pool it alone uses: closing it
// closes both.
type pooledStore struct {
	indexStore
	pool *pgxpool.Pool
}

func (s pooledStore) Close() error {
	err := s.indexStore.Close()
	s.pool.Close()
	return err
}

// registerAnchorGauge exports whether the SQLite store's anchor lists are
// in memory; other stores keep none.
func (d *Daemon) registerAnchorGauge(p *parts, st indexStore) error {
	sq, ok := st.(*sqlite.Store)
	if !ok {
		return nil
	}
	anchors := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "simdex_index_anchor_lists_in_memory",
		Help: "Whether queries read the anchor posting lists from memory (index.anchors_in_memory, once loaded): 1, or 0 while they load or when they are read from disk.",
	}, func() float64 {
		if sq.AnchorsInMemory() {
			return 1
		}
		return 0
	})
	if err := d.reg.Register(anchors); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	p.onClose(func() { d.reg.Unregister(anchors) })
	return nil
}

// openOutbox opens the notifier's outbox store.driver names.
func (d *Daemon) openOutbox(ctx context.Context, p *parts) (notifier.Outbox, func() error, error) {
	if d.cfg.postgres() {
		o, err := notifierpg.New(ctx, p.pool, notifierpg.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("open notifier outbox in PostgreSQL: %w", err)
		}
		return o, o.Close, nil
	}
	o, err := notifiersqlite.Open(ctx, d.cfg.OutboxPath())
	if err != nil {
		return nil, nil, fmt.Errorf("open notifier outbox %s: %w", d.cfg.OutboxPath(), err)
	}
	return o, o.Close, nil
}

// openPolicyStore opens the policy store store.driver names.
func openPolicyStore(ctx context.Context, cfg *Config, pool *pgxpool.Pool) (policyStore, error) {
	if cfg.postgres() {
		st, err := policypg.New(ctx, pool)
		if err != nil {
			return nil, fmt.Errorf("open policy store in PostgreSQL: %w", err)
		}
		return st, nil
	}
	st, err := policysqlite.Open(ctx, cfg.PolicyPath())
	if err != nil {
		return nil, fmt.Errorf("open policy store %s: %w", cfg.PolicyPath(), err)
	}
	return st, nil
}

// tokenStore is the token store the daemon opens.
type tokenStore interface {
	auth.Store
	Close() error
}

// openTokenStore opens the token store store.driver names.
func openTokenStore(ctx context.Context, cfg *Config, pool *pgxpool.Pool) (tokenStore, error) {
	if cfg.postgres() {
		st, err := authpg.New(ctx, pool)
		if err != nil {
			return nil, fmt.Errorf("open token store in PostgreSQL: %w", err)
		}
		return st, nil
	}
	st, err := authsqlite.Open(ctx, cfg.TokensPath())
	if err != nil {
		return nil, fmt.Errorf("open token store %s: %w", cfg.TokensPath(), err)
	}
	return st, nil
}
