package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/internal/pgdb"
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
// of its own, recorded in its transaction. When the connection is lost
// and the outcome is unknown, the key is looked up on another connection:
// found, the commit happened and its stored result is returned; not
// found, it did not (its transaction is rolled back when its session
// ends) and it runs again, through pgdb.Retry. A run again whose earlier
// attempt is still committing waits for it on the key and, if it
// committed, returns its result. So no flag, held document or audit
// entry is committed twice.
func (s *Store) AddHeldAndFlags(ctx context.Context, held []policy.HeldDoc, flags []policy.Flag, audit []policy.AuditEntry, actor string, at time.Time) (int64, []policy.Flag, error) {
	if len(held)+len(flags)+len(audit) == 0 {
		return 0, nil, nil
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	var (
		v     int64
		added []policy.Flag
	)
	err := pgdb.Retry(ctx, true, func(ctx context.Context) error {
		var err error
		v, added, err = s.ingestOnce(ctx, key, held, flags, audit, actor, at)
		switch {
		case errors.Is(err, errCommitted):
			v, added, err = s.committed(ctx, key)
		case err != nil && pgdb.ConnectionLost(err):
			if cv, cadded, cerr := s.committed(ctx, key); cerr == nil {
				v, added, err = cv, cadded, nil
			}
		}
		return err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("record held documents and flags: %w", err)
	}
	return v, added, nil
}

// ingestOnce runs one attempt of a keyed ingest commit in four round
// trips: BEGIN; one batch that locks the held objects, records the held
// documents and the flags, records the key and locks the audit head; one
// batch that appends the audit entries and stores the result under the
// key; COMMIT. Its locks are taken in the order every writer takes them:
// held objects, held rows, the holds counter, flags, the key, the audit
// head. A commit that adds seeds (rare: a hold's selector matching an
// upload) records them first and moves the holds version, in two round
// trips more.
func (s *Store) ingestOnce(ctx context.Context, key []byte, held []policy.HeldDoc, flags []policy.Flag, audit []policy.AuditEntry, actor string, at time.Time) (int64, []policy.Flag, error) {
	var (
		v     int64
		added []policy.Flag
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		if slices.ContainsFunc(held, func(d policy.HeldDoc) bool { return d.Seed }) {
			_, seeds, err := addHeld(ctx, tx, held)
			if err != nil {
				return err
			}
			if v, err = markSeeds(ctx, tx, seeds); err != nil {
				return err
			}
			held = nil
		}
		sorted, err := queueHeld(b, held)
		if err != nil {
			return err
		}
		order, err := queueFlags(b, flags, at)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO policy_commit (key, result) VALUES ($1, '{}') ON CONFLICT (key) DO NOTHING`, key)
		queueHead(b)
		br := tx.SendBatch(ctx, b)
		var raised []policy.AuditEntry
		seq, prev, err := readIngest(br, sorted, flags, order, actor, at, &added, &raised)
		if cerr := br.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("record held documents and flags: %w", cerr)
		}
		if err != nil {
			return err
		}
		if err := finishIngest(ctx, tx, key, v, added, seq, prev, append(raised, audit...)); err != nil {
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

// readIngest reads the first batch of ingestOnce: it sets the flags added
// and their audit entries and returns the audit head, or errCommitted
// when an earlier attempt recorded the key.
func readIngest(br pgx.BatchResults, held []policy.HeldDoc, flags []policy.Flag, order []int, actor string, at time.Time,
	added *[]policy.Flag, raised *[]policy.AuditEntry) (int64, string, error) {
	if _, _, err := readHeld(br, held); err != nil {
		return 0, "", err
	}
	var err error
	if *added, *raised, err = readFlags(br, flags, order, actor, at); err != nil {
		return 0, "", err
	}
	tag, err := br.Exec()
	if err != nil {
		return 0, "", fmt.Errorf("record commit key: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return 0, "", errCommitted
	}
	return readHead(br)
}

// finishIngest appends entries after the head (seq, prev) and stores the
// commit's result under its key. One commit in 256 also prunes keys older
// than a day, skipping those another commit prunes.
func finishIngest(ctx context.Context, tx pgx.Tx, key []byte, v int64, added []policy.Flag, seq int64, prev string, entries []policy.AuditEntry) error {
	r := commitResult{Version: v, Flags: make([]int64, len(added))}
	for i, f := range added {
		r.Flags[i] = f.ID
	}
	res, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode commit result: %w", err)
	}
	b := &pgx.Batch{}
	if len(entries) > 0 {
		queueAudit(b, seq, prev, entries)
	}
	b.Queue(`UPDATE policy_commit SET result = $2 WHERE key = $1`, key, res)
	if key[0] == 0 {
		b.Queue(`DELETE FROM policy_commit WHERE key IN (SELECT key FROM policy_commit
			WHERE at < now() - interval '1 day' ORDER BY at LIMIT 1000 FOR UPDATE SKIP LOCKED)`)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("append audit entries and store the commit result: %w", err)
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
