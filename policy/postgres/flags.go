package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/policy"
)

// AddFlags implements policy.FlagStore.
func (s *Store) AddFlags(ctx context.Context, flags []policy.Flag, actor string, at time.Time) ([]policy.Flag, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	var added []policy.Flag
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var audit []policy.AuditEntry
		var err error
		if added, audit, err = addFlags(ctx, tx, flags, actor, at); err != nil {
			return err
		}
		return appendAudit(ctx, tx, audit...)
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// addFlags inserts the flags not stored yet (queueFlags) and returns them
// with the audit entry of each, for the caller to append last.
func addFlags(ctx context.Context, tx pgx.Tx, flags []policy.Flag, actor string, at time.Time) ([]policy.Flag, []policy.AuditEntry, error) {
	b := &pgx.Batch{}
	order, err := queueFlags(b, flags, at)
	if err != nil {
		return nil, nil, err
	}
	br := tx.SendBatch(ctx, b)
	added, audit, err := readFlags(br, flags, order, actor, at)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("store flags: %w", cerr)
	}
	return added, audit, err
}

// queueFlags queues the insertion of flags on b, in natural-key order so
// that concurrent writers lock in one order, and returns that order.
func queueFlags(b *pgx.Batch, flags []policy.Flag, at time.Time) ([]int, error) {
	order := make([]int, len(flags))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := &flags[i], &flags[j]
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Document.ID, b.Document.ID),
			cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Matter, b.Matter))
	})
	for _, i := range order {
		f := opened(flags[i], at)
		body, err := json.Marshal(f)
		if err != nil {
			return nil, fmt.Errorf("encode flag %s on %d: %w", f.Kind, f.Document.ID, err)
		}
		b.Queue(`INSERT INTO policy_flag (kind, doc, rule, matter, status, created, updated, body)
			VALUES ($1, $2, $3, $4, $5, $6, $6, $7) ON CONFLICT (kind, doc, rule, matter) DO NOTHING RETURNING id`,
			f.Kind, f.Document.ID, f.Rule, f.Matter, f.Status, ns(at), body)
	}
	return order, nil
}

// opened is f as raised at at: open, unpublished, unresolved.
func opened(f policy.Flag, at time.Time) policy.Flag {
	f.Status, f.Created, f.Updated, f.Published, f.Actor, f.Reason = policy.StatusOpen, at.UTC(), at.UTC(), false, "", ""
	return f
}

// readFlags reads the results of queueFlags and returns the flags
// inserted, in the order given, with the audit entry of each.
func readFlags(br pgx.BatchResults, flags []policy.Flag, order []int, actor string, at time.Time) ([]policy.Flag, []policy.AuditEntry, error) {
	idOf := make([]int64, len(flags))
	for _, i := range order {
		err := br.QueryRow().Scan(&idOf[i])
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, nil, fmt.Errorf("store flag %s on %d: %w", flags[i].Kind, flags[i].Document.ID, err)
		}
	}
	var added []policy.Flag
	var audit []policy.AuditEntry
	for i := range flags {
		if idOf[i] == 0 {
			continue // raised before
		}
		f := opened(flags[i], at)
		f.ID = idOf[i]
		added = append(added, f)
		audit = append(audit, raiseEntry(f, actor, at))
	}
	return added, audit, nil
}

// raiseEntry is the audit entry of raising f, as the SQLite store writes it.
func raiseEntry(f policy.Flag, actor string, at time.Time) policy.AuditEntry {
	d, _ := json.Marshal(map[string]any{"document": f.Document, "object": f.Object, "source_document": f.Source, "evidence": f.Evidence})
	return policy.AuditEntry{Time: at, Actor: actor, Action: policy.AuditFlagRaise,
		Object: fmt.Sprintf("flag:%d", f.ID), Reason: string(f.Kind) + " " + f.Rule + f.Matter, Details: d}
}

const flagCols = `id, status, created, updated, actor, reason, published, body`

func scanFlag(row pgx.Row) (policy.Flag, error) {
	var f policy.Flag
	var id, created, updated int64
	var status, actor, reason string
	var published bool
	var body []byte
	if err := row.Scan(&id, &status, &created, &updated, &actor, &reason, &published, &body); err != nil {
		return f, err
	}
	if err := json.Unmarshal(body, &f); err != nil {
		return f, fmt.Errorf("decode flag %d: %w", id, err)
	}
	f.ID, f.Status, f.Created, f.Updated, f.Actor, f.Reason, f.Published = id, policy.FlagStatus(status), fromNS(created), fromNS(updated), actor, reason, published
	return f, nil
}

func collectFlag(row pgx.CollectableRow) (policy.Flag, error) { return scanFlag(row) }

// Flag implements policy.FlagStore.
func (s *Store) Flag(ctx context.Context, id int64) (policy.Flag, error) {
	f, err := scanFlag(s.pool.QueryRow(ctx, `SELECT `+flagCols+` FROM policy_flag WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return f, fmt.Errorf("%w: flag %d", policy.ErrNotFound, id)
	}
	if err != nil {
		return f, fmt.Errorf("load flag %d: %w", id, err)
	}
	return f, nil
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]policy.Flag, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("load flags: %w", err)
	}
	fs, err := pgx.CollectRows(rows, collectFlag)
	if err != nil {
		return nil, fmt.Errorf("load flags: %w", err)
	}
	return fs, nil
}

// Flags implements policy.FlagStore.
func (s *Store) Flags(ctx context.Context, f policy.FlagFilter) ([]policy.Flag, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	add("id > $%d", f.After)
	if f.Kind != "" {
		add("kind = $%d", string(f.Kind))
	}
	if f.Status != "" {
		add("status = $%d", string(f.Status))
	}
	if f.Matter != "" {
		add("matter = $%d", f.Matter)
	}
	if f.Rule != "" {
		add("rule = $%d", f.Rule)
	}
	if f.Document != 0 {
		add("doc = $%d", int64(f.Document))
	}
	if f.Matters != nil {
		add("matter = ANY($%d)", f.Matters)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	return s.query(ctx, fmt.Sprintf(`SELECT `+flagCols+` FROM policy_flag WHERE %s ORDER BY id LIMIT $%d`,
		strings.Join(where, " AND "), len(args)), args...)
}

// Unpublished implements policy.FlagStore.
func (s *Store) Unpublished(ctx context.Context, limit int) ([]policy.Flag, error) {
	return s.query(ctx, `SELECT `+flagCols+` FROM policy_flag WHERE NOT published ORDER BY id LIMIT $1`, limit)
}

// MarkPublished implements policy.FlagStore.
func (s *Store) MarkPublished(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `UPDATE policy_flag SET published = true WHERE id = ANY($1) AND NOT published`, ids); err != nil {
		return fmt.Errorf("mark %d flags published: %w", len(ids), err)
	}
	return nil
}

// Transition implements policy.FlagStore. The flag's row is locked first;
// with t.CheckHolds the object's advisory lock is taken before the holds
// are read, so a hold placement on the object (which takes it too) either
// committed before the check or waits until the change has committed.
func (s *Store) Transition(ctx context.Context, t policy.Transition) (policy.Flag, error) {
	var f policy.Flag
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		f, err = scanFlag(tx.QueryRow(ctx, `SELECT `+flagCols+` FROM policy_flag WHERE id = $1 FOR UPDATE`, t.ID))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: flag %d", policy.ErrNotFound, t.ID)
		}
		if err != nil {
			return fmt.Errorf("load flag %d: %w", t.ID, err)
		}
		if !slices.Contains(t.From, f.Status) {
			return fmt.Errorf("%w: flag %d is %s, not %v", policy.ErrFlagState, t.ID, f.Status, t.From)
		}
		if t.CheckHolds {
			if err := checkHolds(ctx, tx, f.Object, t.ReleasedBefore); err != nil {
				return err
			}
		}
		f.Status, f.Actor, f.Reason, f.Updated = t.To, t.Actor, t.Reason, t.At.UTC()
		if _, err := tx.Exec(ctx, `UPDATE policy_flag SET status = $1, actor = $2, reason = $3, updated = $4 WHERE id = $5`,
			string(t.To), t.Actor, t.Reason, ns(t.At), t.ID); err != nil {
			return fmt.Errorf("update flag %d: %w", t.ID, err)
		}
		return appendAudit(ctx, tx, t.Audit)
	})
	if err != nil {
		return policy.Flag{}, err
	}
	return f, nil
}

// checkHolds fails with policy.ErrLegalHold when an active hold, or one
// released after releasedBefore, holds o, under o's advisory lock, or a
// placement not yet recorded is pending (policy.PlacementRefusal), under
// the shared placement lock that hold creation takes exclusively.
func checkHolds(ctx context.Context, tx pgx.Tx, o policy.Object, releasedBefore time.Time) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1, 0)`, placementLockClass); err != nil {
		return fmt.Errorf("lock placements: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, objectLockClass, o.IndexKey); err != nil {
		return fmt.Errorf("lock object %s: %w", o.IndexKey, err)
	}
	rows, err := tx.Query(ctx, `SELECT h.matter, h.status, h.released FROM policy_hold h
		WHERE h.matter IN (SELECT matter FROM policy_held WHERE object = $1) ORDER BY h.matter`, o.IndexKey)
	if err != nil {
		return fmt.Errorf("check holds: %w", err)
	}
	var held []string
	var matter, status string
	var released int64
	_, err = pgx.ForEachRow(rows, []any{&matter, &status, &released}, func() error {
		if status == string(policy.HoldActive) {
			held = append(held, matter)
		} else if !fromNS(released).Before(releasedBefore) {
			held = append(held, matter+" (released "+fromNS(released).Format(time.RFC3339)+", within the grace period or since the last evaluation)")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check holds: %w", err)
	}
	if len(held) > 0 {
		return fmt.Errorf("%w: %s held for %s", policy.ErrLegalHold, o.IndexKey, strings.Join(held, ", "))
	}
	rows, err = tx.Query(ctx, `SELECT matter FROM policy_placement WHERE NOT recorded ORDER BY matter`)
	if err != nil {
		return fmt.Errorf("check pending placements: %w", err)
	}
	placing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("check pending placements: %w", err)
	}
	return policy.PlacementRefusal(o, placing)
}
