// Package sqlite is the embedded policy store: rules, holds, held
// documents, flags, runs and the hash-chained audit log in one SQLite
// database in WAL mode (data_dir/policy.db), with a single writer.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/simdex/simdex/internal/sqlitedb"
	"github.com/simdex/simdex/policy"
)

// migrations[i] upgrades the schema from version i to i+1.
var migrations = []string{
	`CREATE TABLE rule (
		name   TEXT PRIMARY KEY,
		origin TEXT NOT NULL,
		keep   INTEGER NOT NULL,
		body   TEXT NOT NULL
	);
	CREATE TABLE hold (
		matter   TEXT PRIMARY KEY,
		status   TEXT NOT NULL,
		released INTEGER NOT NULL DEFAULT 0,
		body     TEXT NOT NULL
	);
	CREATE TABLE held (
		matter  TEXT NOT NULL REFERENCES hold(matter),
		doc     INTEGER NOT NULL,
		object  TEXT NOT NULL,
		version TEXT NOT NULL,
		content INTEGER NOT NULL,
		seed    INTEGER NOT NULL,
		placed  INTEGER NOT NULL,
		body    TEXT NOT NULL,
		PRIMARY KEY (matter, doc)
	);
	CREATE INDEX held_object ON held(object);
	CREATE TABLE flag (
		id        INTEGER PRIMARY KEY,
		kind      TEXT NOT NULL,
		doc       INTEGER NOT NULL,
		rule      TEXT NOT NULL,
		matter    TEXT NOT NULL,
		status    TEXT NOT NULL,
		created   INTEGER NOT NULL,
		updated   INTEGER NOT NULL,
		actor     TEXT NOT NULL DEFAULT '',
		reason    TEXT NOT NULL DEFAULT '',
		published INTEGER NOT NULL DEFAULT 0,
		body      TEXT NOT NULL,
		UNIQUE (kind, doc, rule, matter)
	);
	CREATE INDEX flag_status ON flag(status, id);
	CREATE INDEX flag_unpublished ON flag(id) WHERE published = 0;
	CREATE TABLE run (
		id      INTEGER PRIMARY KEY,
		started INTEGER NOT NULL,
		body    TEXT NOT NULL
	);
	CREATE TABLE audit (
		seq     INTEGER PRIMARY KEY,
		time    INTEGER NOT NULL,
		actor   TEXT NOT NULL,
		action  TEXT NOT NULL,
		object  TEXT NOT NULL,
		reason  TEXT NOT NULL,
		details BLOB,
		prev    TEXT NOT NULL,
		hash    TEXT NOT NULL
	);
	CREATE TABLE counter (
		name  TEXT PRIMARY KEY,
		value INTEGER NOT NULL
	);
	INSERT INTO counter(name, value) VALUES ('holds', 0);`,
	// Version 2: the placements of holds not complete yet, one row per
	// hold from its creation until every near-copy is recorded and
	// enforced (policy.PendingPlacement). Holds stored before have none.
	`CREATE TABLE placement (
		matter   TEXT PRIMARY KEY REFERENCES hold(matter),
		recorded INTEGER NOT NULL DEFAULT 0,
		attempts INTEGER NOT NULL DEFAULT 0,
		error    TEXT NOT NULL DEFAULT '',
		next     INTEGER NOT NULL DEFAULT 0
	);`,
}

// Store is the SQLite policy store. It is safe for concurrent use; writes
// are serialised through one connection.
type Store struct {
	db *sql.DB
}

var _ policy.Store = (*Store)(nil)

// Open opens or creates the store at path and migrates its schema.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Policy, migrations)
	if err != nil {
		return nil, fmt.Errorf("open policy store %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DB returns the database, for tests that tamper with it.
func (s *Store) DB() *sql.DB { return s.db }

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

// tx runs fn in a write transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// PutRules implements policy.RuleStore.
func (s *Store) PutRules(ctx context.Context, origin string, rules []policy.RetentionRule, keeps []policy.KeepRule) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM rule WHERE origin = ?`, origin); err != nil {
			return fmt.Errorf("delete rules of %s: %w", origin, err)
		}
		put := func(name string, keep bool, v any) error {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO rule(name, origin, keep, body) VALUES (?, ?, ?, ?)
				ON CONFLICT(name) DO UPDATE SET origin = excluded.origin, keep = excluded.keep, body = excluded.body`,
				name, origin, keep, string(b)); err != nil {
				return fmt.Errorf("store rule %s: %w", name, err)
			}
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
		return nil
	})
}

// Rules implements policy.RuleStore.
func (s *Store) Rules(ctx context.Context) ([]policy.RetentionRule, []policy.KeepRule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT keep, body FROM rule ORDER BY name`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var rs []policy.RetentionRule
	var ks []policy.KeepRule
	for rows.Next() {
		var keep bool
		var body string
		if err := rows.Scan(&keep, &body); err != nil {
			return nil, nil, err
		}
		if keep {
			var k policy.KeepRule
			if err := json.Unmarshal([]byte(body), &k); err != nil {
				return nil, nil, fmt.Errorf("decode rule: %w", err)
			}
			ks = append(ks, k)
			continue
		}
		var r policy.RetentionRule
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			return nil, nil, fmt.Errorf("decode rule: %w", err)
		}
		rs = append(rs, r)
	}
	return rs, ks, rows.Err()
}

// bumpHolds moves the holds version on and returns the new one.
func bumpHolds(ctx context.Context, tx *sql.Tx) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, `UPDATE counter SET value = value + 1 WHERE name = 'holds' RETURNING value`).Scan(&v)
	return v, err
}

// CreateHold implements policy.HoldStore.
func (s *Store) CreateHold(ctx context.Context, h policy.Hold, seeds []policy.HeldDoc, a policy.AuditEntry) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO hold(matter, status, body) VALUES (?, ?, ?) ON CONFLICT(matter) DO NOTHING`,
			h.Matter, h.Status, string(b))
		if err != nil {
			return fmt.Errorf("store hold: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: %s", policy.ErrHoldExists, h.Matter)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO placement(matter) VALUES (?)`, h.Matter); err != nil {
			return fmt.Errorf("store placement of hold %s: %w", h.Matter, err)
		}
		if _, _, err := addHeld(ctx, tx, seeds); err != nil {
			return err
		}
		if _, err := bumpHolds(ctx, tx); err != nil {
			return err
		}
		return appendAudit(ctx, tx, a)
	})
}

// Placements implements policy.PlacementStore.
func (s *Store) Placements(ctx context.Context) ([]policy.PendingPlacement, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT matter, recorded, attempts, error, next FROM placement ORDER BY matter`)
	if err != nil {
		return nil, fmt.Errorf("load pending placements: %w", err)
	}
	defer rows.Close()
	var out []policy.PendingPlacement
	for rows.Next() {
		var p policy.PendingPlacement
		var next int64
		if err := rows.Scan(&p.Matter, &p.Recorded, &p.Attempts, &p.LastError, &next); err != nil {
			return nil, fmt.Errorf("load pending placements: %w", err)
		}
		p.Next = fromNS(next)
		out = append(out, p)
	}
	return out, rows.Err()
}

// UpdatePlacement implements policy.PlacementStore.
func (s *Store) UpdatePlacement(ctx context.Context, p policy.PendingPlacement) error {
	_, err := s.db.ExecContext(ctx, `UPDATE placement SET recorded = recorded OR ?, attempts = ?, error = ?, next = ? WHERE matter = ?`,
		p.Recorded, p.Attempts, p.LastError, ns(p.Next), p.Matter)
	if err != nil {
		return fmt.Errorf("store placement of hold %s: %w", p.Matter, err)
	}
	return nil
}

// FinishPlacement implements policy.PlacementStore.
func (s *Store) FinishPlacement(ctx context.Context, matter string, a policy.AuditEntry) (bool, error) {
	done := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM placement WHERE matter = ?`, matter)
		if err != nil {
			return fmt.Errorf("end placement of hold %s: %w", matter, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		done = true
		return appendAudit(ctx, tx, a)
	})
	return done, err
}

// ReleaseHold implements policy.HoldStore.
func (s *Store) ReleaseHold(ctx context.Context, r policy.Hold, a policy.AuditEntry) (policy.Hold, error) {
	var h policy.Hold
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var body string
		err := tx.QueryRowContext(ctx, `SELECT body FROM hold WHERE matter = ?`, r.Matter).Scan(&body)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: hold %s", policy.ErrNotFound, r.Matter)
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			return fmt.Errorf("decode hold: %w", err)
		}
		if h.Status == policy.HoldReleased {
			return fmt.Errorf("%w: %s on %s", policy.ErrHoldReleased, h.Matter, h.Released.Format(time.RFC3339))
		}
		h.Status, h.Released, h.ReleasedBy, h.ReleaseReason = policy.HoldReleased, r.Released, r.ReleasedBy, r.ReleaseReason
		b, err := json.Marshal(h)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE hold SET status = ?, released = ?, body = ? WHERE matter = ?`,
			h.Status, ns(h.Released), string(b), h.Matter); err != nil {
			return fmt.Errorf("store hold: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM placement WHERE matter = ?`, h.Matter); err != nil {
			return fmt.Errorf("end placement of hold %s: %w", h.Matter, err)
		}
		if _, err := bumpHolds(ctx, tx); err != nil {
			return err
		}
		return appendAudit(ctx, tx, a)
	})
	return h, err
}

func (s *Store) holdCount(ctx context.Context, h *policy.Hold) error {
	return s.db.QueryRowContext(ctx, `SELECT count(*) FROM held WHERE matter = ?`, h.Matter).Scan(&h.Held)
}

// Hold implements policy.HoldStore.
func (s *Store) Hold(ctx context.Context, matter string) (policy.Hold, error) {
	var body string
	err := s.db.QueryRowContext(ctx, `SELECT body FROM hold WHERE matter = ?`, matter).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return policy.Hold{}, fmt.Errorf("%w: hold %s", policy.ErrNotFound, matter)
	}
	if err != nil {
		return policy.Hold{}, err
	}
	var h policy.Hold
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return policy.Hold{}, fmt.Errorf("decode hold: %w", err)
	}
	return h, s.holdCount(ctx, &h)
}

// Holds implements policy.HoldStore.
func (s *Store) Holds(ctx context.Context, status policy.HoldStatus) ([]policy.Hold, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM hold WHERE ? = '' OR status = ? ORDER BY matter`, status, status)
	if err != nil {
		return nil, err
	}
	var out []policy.Hold
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			rows.Close()
			return nil, err
		}
		var h policy.Hold
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("decode hold: %w", err)
		}
		out = append(out, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if err := s.holdCount(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type heldBody struct {
	Document policy.DocRef `json:"document"`
	Object   policy.Object `json:"object"`
}

// addHeld records held documents and returns how many are new and, when
// seeds were among them, the holds version it moved to (else 0).
func addHeld(ctx context.Context, tx *sql.Tx, held []policy.HeldDoc) (int, int64, error) {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO held(matter, doc, object, version, content, seed, placed, body)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(matter, doc) DO UPDATE SET seed = 1 WHERE seed = 0 AND excluded.seed = 1`)
	if err != nil {
		return 0, 0, err
	}
	defer stmt.Close()
	n, seeds := 0, 0
	for _, d := range held {
		b, err := json.Marshal(heldBody{d.Document, d.Object})
		if err != nil {
			return 0, 0, err
		}
		res, err := stmt.ExecContext(ctx, d.Matter, d.Document.ID, d.Object.IndexKey, d.Object.VersionID, d.Content, d.Seed, ns(d.Placed), string(b))
		if err != nil {
			return 0, 0, fmt.Errorf("record held document %d for %s: %w", d.Document.ID, d.Matter, err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			n++
			if d.Seed {
				seeds++
			}
		}
	}
	var v int64
	if seeds > 0 {
		var err error
		if v, err = bumpHolds(ctx, tx); err != nil {
			return 0, 0, err
		}
	}
	return n, v, nil
}

// AddHeld implements policy.HoldStore. A document already held counts as
// new only when it becomes a seed.
func (s *Store) AddHeld(ctx context.Context, held []policy.HeldDoc) (int, error) {
	if len(held) == 0 {
		return 0, nil
	}
	var n int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, _, err = addHeld(ctx, tx, held)
		return err
	})
	return n, err
}

// HeldDocs implements policy.HoldStore.
func (s *Store) HeldDocs(ctx context.Context, matter string, seeds bool, fn func(policy.HeldDoc) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT content, seed, placed, body FROM held WHERE matter = ? AND (seed OR NOT ?) ORDER BY doc`, matter, seeds)
	if err != nil {
		return err
	}
	var out []policy.HeldDoc
	for rows.Next() {
		var d policy.HeldDoc
		var placed int64
		var body string
		if err := rows.Scan(&d.Content, &d.Seed, &placed, &body); err != nil {
			rows.Close()
			return err
		}
		var b heldBody
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			rows.Close()
			return fmt.Errorf("decode held document: %w", err)
		}
		d.Matter, d.Document, d.Object, d.Placed = matter, b.Document, b.Object, fromNS(placed)
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range out {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// HoldsOn implements policy.HoldStore. Holds are matched on the object,
// every version of it: a hold covers every version of a held object.
func (s *Store) HoldsOn(ctx context.Context, o policy.Object) ([]policy.Hold, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT h.body FROM hold h WHERE h.matter IN (SELECT matter FROM held WHERE object = ?)`, o.IndexKey)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []policy.Hold
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, err
		}
		var h policy.Hold
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			return nil, fmt.Errorf("decode hold: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// HoldsVersion implements policy.HoldStore.
func (s *Store) HoldsVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, `SELECT value FROM counter WHERE name = 'holds'`).Scan(&v)
	return v, err
}

// AddFlags implements policy.FlagStore.
func (s *Store) AddFlags(ctx context.Context, flags []policy.Flag, actor string, at time.Time) ([]policy.Flag, error) {
	_, added, err := s.AddHeldAndFlags(ctx, nil, flags, nil, actor, at)
	return added, err
}

// AddHeldAndFlags implements policy.IngestStore.
func (s *Store) AddHeldAndFlags(ctx context.Context, held []policy.HeldDoc, flags []policy.Flag, audit []policy.AuditEntry, actor string, at time.Time) (int64, []policy.Flag, error) {
	var (
		v     int64
		added []policy.Flag
	)
	if len(held)+len(flags)+len(audit) == 0 {
		return 0, nil, nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if len(held) > 0 {
			if _, v, err = addHeld(ctx, tx, held); err != nil {
				return err
			}
		}
		if len(flags) > 0 {
			if added, err = addFlags(ctx, tx, flags, actor, at); err != nil {
				return err
			}
		}
		for _, a := range audit {
			if err := appendAudit(ctx, tx, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return v, added, nil
}

// addFlags inserts the flags not stored yet, each with its audit entry,
// and returns them.
func addFlags(ctx context.Context, tx *sql.Tx, flags []policy.Flag, actor string, at time.Time) ([]policy.Flag, error) {
	var added []policy.Flag
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO flag(kind, doc, rule, matter, status, created, updated, body)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(kind, doc, rule, matter) DO NOTHING RETURNING id`)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	for _, f := range flags {
		f.Status, f.Created, f.Updated, f.Published, f.Actor, f.Reason = policy.StatusOpen, at.UTC(), at.UTC(), false, "", ""
		b, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		err = stmt.QueryRowContext(ctx, f.Kind, f.Document.ID, f.Rule, f.Matter, f.Status, ns(at), ns(at), string(b)).Scan(&f.ID)
		if errors.Is(err, sql.ErrNoRows) {
			continue // raised before
		}
		if err != nil {
			return nil, fmt.Errorf("store flag %s on %d: %w", f.Kind, f.Document.ID, err)
		}
		added = append(added, f)
		d, _ := json.Marshal(map[string]any{"document": f.Document, "object": f.Object, "source_document": f.Source, "evidence": f.Evidence})
		if err := appendAudit(ctx, tx, policy.AuditEntry{Time: at, Actor: actor, Action: policy.AuditFlagRaise,
			Object: fmt.Sprintf("flag:%d", f.ID), Reason: string(f.Kind) + " " + f.Rule + f.Matter, Details: d}); err != nil {
			return nil, err
		}
	}
	return added, nil
}

const flagCols = `id, status, created, updated, actor, reason, published, body`

func scanFlag(sc interface{ Scan(...any) error }) (policy.Flag, error) {
	var f policy.Flag
	var id, created, updated int64
	var status, actor, reason, body string
	var published bool
	if err := sc.Scan(&id, &status, &created, &updated, &actor, &reason, &published, &body); err != nil {
		return f, err
	}
	if err := json.Unmarshal([]byte(body), &f); err != nil {
		return f, fmt.Errorf("decode flag %d: %w", id, err)
	}
	f.ID, f.Status, f.Created, f.Updated, f.Actor, f.Reason, f.Published = id, policy.FlagStatus(status), fromNS(created), fromNS(updated), actor, reason, published
	return f, nil
}

// Flag implements policy.FlagStore.
func (s *Store) Flag(ctx context.Context, id int64) (policy.Flag, error) {
	f, err := scanFlag(s.db.QueryRowContext(ctx, `SELECT `+flagCols+` FROM flag WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return f, fmt.Errorf("%w: flag %d", policy.ErrNotFound, id)
	}
	return f, err
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]policy.Flag, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []policy.Flag
	for rows.Next() {
		f, err := scanFlag(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Flags implements policy.FlagStore.
func (s *Store) Flags(ctx context.Context, f policy.FlagFilter) ([]policy.Flag, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	add("id > ?", f.After)
	if f.Kind != "" {
		add("kind = ?", f.Kind)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.Matter != "" {
		add("matter = ?", f.Matter)
	}
	if f.Rule != "" {
		add("rule = ?", f.Rule)
	}
	if f.Document != 0 {
		add("doc = ?", f.Document)
	}
	if f.Matters != nil {
		cond := "matter IN (NULL"
		for _, m := range f.Matters {
			cond += ", ?"
			args = append(args, m)
		}
		where = append(where, cond+")")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	return s.query(ctx, `SELECT `+flagCols+` FROM flag WHERE `+strings.Join(where, " AND ")+` ORDER BY id LIMIT ?`, args...)
}

// Transition implements policy.FlagStore.
func (s *Store) Transition(ctx context.Context, t policy.Transition) (policy.Flag, error) {
	var f policy.Flag
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		f, err = scanFlag(tx.QueryRowContext(ctx, `SELECT `+flagCols+` FROM flag WHERE id = ?`, t.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: flag %d", policy.ErrNotFound, t.ID)
		}
		if err != nil {
			return err
		}
		ok := false
		for _, st := range t.From {
			ok = ok || f.Status == st
		}
		if !ok {
			return fmt.Errorf("%w: flag %d is %s, not %v", policy.ErrFlagState, t.ID, f.Status, t.From)
		}
		if t.CheckHolds {
			if err := checkHolds(ctx, tx, f.Object, t.ReleasedBefore); err != nil {
				return err
			}
		}
		f.Status, f.Actor, f.Reason, f.Updated = t.To, t.Actor, t.Reason, t.At.UTC()
		if _, err := tx.ExecContext(ctx, `UPDATE flag SET status = ?, actor = ?, reason = ?, updated = ? WHERE id = ?`,
			t.To, t.Actor, t.Reason, ns(t.At), t.ID); err != nil {
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
// released after releasedBefore, holds o, or a placement not yet recorded
// is pending (policy.ErrPlacementPending too).
func checkHolds(ctx context.Context, tx *sql.Tx, o policy.Object, releasedBefore time.Time) error {
	rows, err := tx.QueryContext(ctx, `SELECT h.matter, h.status, h.released FROM hold h
		WHERE h.matter IN (SELECT matter FROM held WHERE object = ?)`, o.IndexKey)
	if err != nil {
		return fmt.Errorf("check holds: %w", err)
	}
	var held []string
	for rows.Next() {
		var matter, status string
		var released int64
		if err := rows.Scan(&matter, &status, &released); err != nil {
			rows.Close()
			return fmt.Errorf("check holds: %w", err)
		}
		if status == string(policy.HoldActive) {
			held = append(held, matter)
		} else if !fromNS(released).Before(releasedBefore) {
			held = append(held, matter+" (released "+fromNS(released).Format(time.RFC3339)+", within the grace period or since the last evaluation)")
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check holds: %w", err)
	}
	if len(held) > 0 {
		return fmt.Errorf("%w: %s held for %s", policy.ErrLegalHold, o.IndexKey, strings.Join(held, ", "))
	}
	var placing []string
	rows, err = tx.QueryContext(ctx, `SELECT matter FROM placement WHERE NOT recorded ORDER BY matter`)
	if err != nil {
		return fmt.Errorf("check pending placements: %w", err)
	}
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			rows.Close()
			return fmt.Errorf("check pending placements: %w", err)
		}
		placing = append(placing, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check pending placements: %w", err)
	}
	return policy.PlacementRefusal(o, placing)
}

// Unpublished implements policy.FlagStore.
func (s *Store) Unpublished(ctx context.Context, limit int) ([]policy.Flag, error) {
	return s.query(ctx, `SELECT `+flagCols+` FROM flag WHERE published = 0 ORDER BY id LIMIT ?`, limit)
}

// MarkPublished implements policy.FlagStore.
func (s *Store) MarkPublished(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	// Losing the mark only publishes the flags again, which subscribers
	// must accept anyway: it need not wait for the disk.
	return sqlitedb.ExecUnsynced(ctx, s.db, `UPDATE flag SET published = 1 WHERE id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, args...)
}

// StartRun implements policy.RunStore.
func (s *Store) StartRun(ctx context.Context, r policy.Run) (int64, error) {
	r.Decisions = nil
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO run(started, body) VALUES (?, ?)`, ns(r.Started), string(b))
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// FinishRun implements policy.RunStore.
func (s *Store) FinishRun(ctx context.Context, r policy.Run) error {
	r.Decisions = nil
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE run SET body = ? WHERE id = ?`, string(b), r.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: run %d", policy.ErrNotFound, r.ID)
	}
	return nil
}

// Runs implements policy.RunStore.
func (s *Store) Runs(ctx context.Context, limit int) ([]policy.Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, body FROM run ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []policy.Run
	for rows.Next() {
		var id int64
		var body string
		if err := rows.Scan(&id, &body); err != nil {
			return nil, err
		}
		var r policy.Run
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			return nil, fmt.Errorf("decode run %d: %w", id, err)
		}
		r.ID = id
		out = append(out, r)
	}
	return out, rows.Err()
}

func appendAudit(ctx context.Context, tx *sql.Tx, entries ...policy.AuditEntry) error {
	var seq int64
	var prev string
	err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&seq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read audit head: %w", err)
	}
	for _, e := range entries {
		seq++
		e.Seq, e.Prev = seq, prev
		e.Time = e.Time.UTC()
		e.Hash = policy.ChainHash(prev, e)
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit(seq, time, actor, action, object, reason, details, prev, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.Seq, e.Time.UnixNano(), e.Actor, e.Action, e.Object, e.Reason, []byte(e.Details), e.Prev, e.Hash); err != nil {
			return fmt.Errorf("append audit entry %d: %w", e.Seq, err)
		}
		prev = e.Hash
	}
	return nil
}

// Append implements policy.AuditLog.
func (s *Store) Append(ctx context.Context, entries ...policy.AuditEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return appendAudit(ctx, tx, entries...) })
}

// Audit implements policy.AuditLog.
func (s *Store) Audit(ctx context.Context, from int64, fn func(policy.AuditEntry) error) error {
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT seq, time, actor, action, object, reason, details, prev, hash
			FROM audit WHERE seq >= ? ORDER BY seq LIMIT 1000`, from)
		if err != nil {
			return err
		}
		var page []policy.AuditEntry
		for rows.Next() {
			var e policy.AuditEntry
			var t int64
			var d []byte
			if err := rows.Scan(&e.Seq, &t, &e.Actor, &e.Action, &e.Object, &e.Reason, &d, &e.Prev, &e.Hash); err != nil {
				rows.Close()
				return err
			}
			e.Time = time.Unix(0, t).UTC()
			if len(d) > 0 {
				e.Details = d
			}
			page = append(page, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
		from = page[len(page)-1].Seq + 1
	}
}
