package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/simdex/simdex/policy"
)

// commitResult is what an ingest commit returns, stored under its key so
// that a caller who lost the connection during COMMIT can learn it.
type commitResult struct {
	Version int64   `json:"version"`
	Flags   []int64 `json:"flags"`
}

// errCommitted reports that an earlier attempt of the same keyed commit
// has committed.
var errCommitted = errors.New("committed by an earlier attempt")

// AddHeldAndFlags implements policy.IngestStore. The commit carries a key
// of its own; when the connection is lost and the outcome is unknown, the
// key is looked up on another connection: found, the commit happened and
// its result is returned; not found, it did not (its transaction is
// rolled back when its session ends) and it runs again, a bounded number
// of times. So no flag, held document or audit entry is committed twice.
func (s *Store) AddHeldAndFlags(ctx context.Context, held []policy.HeldDoc, flags []policy.Flag, audit []policy.AuditEntry, actor string, at time.Time) (int64, []policy.Flag, error) {
	if len(held)+len(flags)+len(audit) == 0 {
		return 0, nil, nil
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	var err error
	for range attempts {
		var v int64
		var added []policy.Flag
		v, added, err = s.ingestOnce(ctx, key, held, flags, audit, actor, at)
		switch {
		case err == nil:
			return v, added, nil
		case errors.Is(err, errCommitted):
			return s.committed(ctx, key)
		case retryable(err):
			continue
		case !lostConnection(ctx, err):
			return 0, nil, err
		}
		v, added, cerr := s.committed(ctx, key)
		if cerr == nil {
			return v, added, nil
		}
		if !errors.Is(cerr, policy.ErrNotFound) {
			return 0, nil, fmt.Errorf("%w (and learn whether it committed: %w)", err, cerr)
		}
	}
	return 0, nil, fmt.Errorf("record held documents and flags: give up after %d attempts: %w", attempts, err)
}

// ingestOnce runs one attempt of a keyed ingest commit. Its locks are
// taken in the order every writer takes them: held objects, held rows,
// the holds counter, flags, the commit key, the audit head.
func (s *Store) ingestOnce(ctx context.Context, key []byte, held []policy.HeldDoc, flags []policy.Flag, audit []policy.AuditEntry, actor string, at time.Time) (int64, []policy.Flag, error) {
	var (
		v     int64
		added []policy.Flag
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, seeds, err := addHeld(ctx, tx, held)
		if err != nil {
			return err
		}
		if v, err = markSeeds(ctx, tx, seeds); err != nil {
			return err
		}
		var raised []policy.AuditEntry
		if len(flags) > 0 {
			if added, raised, err = addFlags(ctx, tx, flags, actor, at); err != nil {
				return err
			}
		}
		if err := putCommit(ctx, tx, key, v, added); err != nil {
			return err
		}
		if err := appendAudit(ctx, tx, append(raised, audit...)...); err != nil {
			return err
		}
		if s.beforeCommit != nil {
			return s.beforeCommit(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return v, added, nil
}

// putCommit records the commit's key and result, or fails with
// errCommitted when an earlier attempt recorded it. One commit in 256 also
// prunes keys older than a day, skipping those another commit prunes.
func putCommit(ctx context.Context, tx pgx.Tx, key []byte, v int64, added []policy.Flag) error {
	r := commitResult{Version: v, Flags: make([]int64, len(added))}
	for i, f := range added {
		r.Flags[i] = f.ID
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode commit result: %w", err)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO policy_commit (key, result) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, key, b)
	if err != nil {
		return fmt.Errorf("record commit key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errCommitted
	}
	if key[0] == 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM policy_commit WHERE key IN (SELECT key FROM policy_commit
			WHERE at < now() - interval '1 day' ORDER BY at LIMIT 1000 FOR UPDATE SKIP LOCKED)`); err != nil {
			return fmt.Errorf("prune commit keys: %w", err)
		}
	}
	return nil
}

// committed returns the result of the commit recorded under key, or
// policy.ErrNotFound when there is none.
func (s *Store) committed(ctx context.Context, key []byte) (int64, []policy.Flag, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT result FROM policy_commit WHERE key = $1`, key).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, fmt.Errorf("%w: commit key %x", policy.ErrNotFound, key)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("look up commit key %x: %w", key, err)
	}
	var r commitResult
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, nil, fmt.Errorf("decode commit result %x: %w", key, err)
	}
	if len(r.Flags) == 0 {
		return r.Version, nil, nil
	}
	added, err := s.query(ctx, `SELECT `+flagCols+` FROM policy_flag WHERE id = ANY($1) ORDER BY id`, r.Flags)
	return r.Version, added, err
}

// lostConnection reports whether err may have left a commit's outcome
// unknown: the connection failed (a network error, or the server ending
// the session), rather than the server refusing a statement.
func lostConnection(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code[:2] == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	return true
}
