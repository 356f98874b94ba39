// Package postgres is the policy store that several simdex replicas
// share: rules, holds, held documents, flags, runs and the hash-chained
// audit log in PostgreSQL, through pgx. It satisfies policy.Store as its
// SQLite twin (policy/sqlite) does, and adds what concurrent writers
// need:
//
//   - Uniqueness is the database's: a hold by its matter, a held document
//     by (matter, document), a flag by its natural key, each written with
//     INSERT … ON CONFLICT, so two replicas racing on one hold or flag
//     commit it once.
//   - The audit chain's head is one row that every appender locks (FOR
//     UPDATE) last in its transaction, after every other row it writes,
//     so appends from any number of replicas extend one chain without
//     deadlocking on each other.
//   - A flag transition that checks holds and a hold placement on the
//     same object serialise on a transaction-level advisory lock keyed by
//     the object, so a deletion cannot be approved beside a new hold.
//   - Serialization failures and deadlocks (SQLSTATE 40001, 40P01) are
//     retried a bounded number of times (pgdb.Retry).
//   - An ingest commit (AddHeldAndFlags) carries an idempotency key; when
//     the connection is lost and the outcome is unknown, the key is
//     looked up before trying again, so nothing is committed twice.
//
// Tables are prefixed policy_; the schema is migrated by goose into the
// version table policy_schema.
package postgres

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/policy"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL policy store. It is safe for concurrent use,
// by any number of processes sharing the database.
type Store struct {
	pool *pgxpool.Pool
	// beforeCommit, when set (by tests), runs in a keyed commit's
	// transaction just before COMMIT.
	beforeCommit func(ctx context.Context, tx pgx.Tx) error
}

var (
	_ policy.Store       = (*Store)(nil)
	_ policy.HoldChanges = (*Store)(nil)
)

// New migrates the policy schema in pool's database and returns the
// store. The pool stays the caller's: Close does not close it.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if err := pgdb.Migrate(ctx, pool, migrations, "migrations", "policy_schema"); err != nil {
		return nil, fmt.Errorf("open policy store: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Close implements policy.Store; it leaves the pool open.
func (s *Store) Close() error { return nil }

// Pool returns the store's pool, for tests that tamper with the tables.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

// tx runs fn in a READ COMMITTED transaction through pgdb.Retry: again
// when PostgreSQL aborted it (deadlock, serialization failure) or nothing
// was sent, never after a lost connection (the outcome is unknown: the
// caller decides).
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgdb.Retry(ctx, false, func(ctx context.Context) error { return pgx.BeginFunc(ctx, s.pool, fn) })
}

// PutRules implements policy.RuleStore.
func (s *Store) PutRules(ctx context.Context, origin string, rules []policy.RetentionRule, keeps []policy.KeepRule) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM policy_rule WHERE origin = $1`, origin)
	put := func(name string, keep bool, v any) error {
		body, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode rule %s: %w", name, err)
		}
		b.Queue(`INSERT INTO policy_rule (name, origin, keep, body) VALUES ($1, $2, $3, $4)
			ON CONFLICT (name) DO UPDATE SET origin = excluded.origin, keep = excluded.keep, body = excluded.body`,
			name, origin, keep, body)
		return nil
	}
	for _, r := range rules {
		if err := put(r.Name, false, r); err != nil {
			return err
		}
	}
	for _, k := range keeps {
		if err := put(k.Name, true, k); err != nil {
			return err
		}
	}
	err := s.tx(ctx, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	if err != nil {
		return fmt.Errorf("store rules of %s: %w", origin, err)
	}
	return nil
}

// Rules implements policy.RuleStore.
func (s *Store) Rules(ctx context.Context) ([]policy.RetentionRule, []policy.KeepRule, error) {
	rows, err := s.pool.Query(ctx, `SELECT keep, body FROM policy_rule ORDER BY name`)
	if err != nil {
		return nil, nil, fmt.Errorf("load rules: %w", err)
	}
	defer rows.Close()
	var rs []policy.RetentionRule
	var ks []policy.KeepRule
	for rows.Next() {
		var keep bool
		var body []byte
		if err := rows.Scan(&keep, &body); err != nil {
			return nil, nil, fmt.Errorf("load rules: %w", err)
		}
		if keep {
			var k policy.KeepRule
			if err := json.Unmarshal(body, &k); err != nil {
				return nil, nil, fmt.Errorf("decode rule: %w", err)
			}
			ks = append(ks, k)
			continue
		}
		var r policy.RetentionRule
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, nil, fmt.Errorf("decode rule: %w", err)
		}
		rs = append(rs, r)
	}
	return rs, ks, rows.Err()
}

// StartRun implements policy.RunStore.
func (s *Store) StartRun(ctx context.Context, r policy.Run) (int64, error) {
	r.Decisions = nil
	b, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("encode run: %w", err)
	}
	var id int64
	if err := s.pool.QueryRow(ctx, `INSERT INTO policy_run (started, body) VALUES ($1, $2) RETURNING id`,
		ns(r.Started), b).Scan(&id); err != nil {
		return 0, fmt.Errorf("store run: %w", err)
	}
	return id, nil
}

// FinishRun implements policy.RunStore.
func (s *Store) FinishRun(ctx context.Context, r policy.Run) error {
	r.Decisions = nil
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode run %d: %w", r.ID, err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE policy_run SET body = $1 WHERE id = $2`, b, r.ID)
	if err != nil {
		return fmt.Errorf("store run %d: %w", r.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: run %d", policy.ErrNotFound, r.ID)
	}
	return nil
}

// Runs implements policy.RunStore.
func (s *Store) Runs(ctx context.Context, limit int) ([]policy.Run, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, body FROM policy_run ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("load runs: %w", err)
	}
	defer rows.Close()
	var out []policy.Run
	for rows.Next() {
		var id int64
		var body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return nil, fmt.Errorf("load runs: %w", err)
		}
		var r policy.Run
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("decode run %d: %w", id, err)
		}
		r.ID = id
		out = append(out, r)
	}
	return out, rows.Err()
}
