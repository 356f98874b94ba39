package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/policy"
)

// objectLockClass is the first key of the advisory locks that serialise
// hold placements and hold-checked flag transitions on one object (the
// second is the object's hashtext).
const objectLockClass = 0x706f6c69 // "poli"

// placementLockClass is the key of the advisory lock that serialises the
// creation of a hold (exclusive) with hold-checked flag transitions
// (shared): a transition either commits before the hold's pending
// placement or sees it. It is taken before any object lock.
const placementLockClass = 0x706c6163 // "plac"

// bumpHolds moves the holds version on and returns the new one. The
// counter row stays locked until the transaction ends, so versions
// commit in the order they are taken.
func bumpHolds(ctx context.Context, tx pgx.Tx) (int64, error) {
	var v int64
	err := tx.QueryRow(ctx, `UPDATE policy_counter SET value = value + 1 WHERE name = 'holds' RETURNING value`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("move holds version: %w", err)
	}
	return v, nil
}

// CreateHold implements policy.HoldStore.
func (s *Store) CreateHold(ctx context.Context, h policy.Hold, seeds []policy.HeldDoc, a policy.AuditEntry) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode hold %s: %w", h.Matter, err)
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, placementLockClass); err != nil {
			return fmt.Errorf("lock placements: %w", err)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO policy_hold (matter, status, hv, body) VALUES ($1, $2, 0, $3)
			ON CONFLICT (matter) DO NOTHING`, h.Matter, h.Status, b)
		if err != nil {
			return fmt.Errorf("store hold %s: %w", h.Matter, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s", policy.ErrHoldExists, h.Matter)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO policy_placement (matter) VALUES ($1)`, h.Matter); err != nil {
			return fmt.Errorf("store placement of hold %s: %w", h.Matter, err)
		}
		if _, _, err := addHeld(ctx, tx, seeds); err != nil {
			return err
		}
		v, err := bumpHolds(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE policy_hold SET hv = $1 WHERE matter = $2`, v, h.Matter); err != nil {
			return fmt.Errorf("store hold %s: %w", h.Matter, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE policy_held SET hv = $1 WHERE matter = $2 AND seed`, v, h.Matter); err != nil {
			return fmt.Errorf("store seeds of hold %s: %w", h.Matter, err)
		}
		return appendAudit(ctx, tx, a)
	})
}

// ReleaseHold implements policy.HoldStore.
func (s *Store) ReleaseHold(ctx context.Context, r policy.Hold, a policy.AuditEntry) (policy.Hold, error) {
	var h policy.Hold
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var body []byte
		err := tx.QueryRow(ctx, `SELECT body FROM policy_hold WHERE matter = $1 FOR UPDATE`, r.Matter).Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: hold %s", policy.ErrNotFound, r.Matter)
		}
		if err != nil {
			return fmt.Errorf("load hold %s: %w", r.Matter, err)
		}
		h = policy.Hold{}
		if err := json.Unmarshal(body, &h); err != nil {
			return fmt.Errorf("decode hold %s: %w", r.Matter, err)
		}
		if h.Status == policy.HoldReleased {
			return fmt.Errorf("%w: %s on %s", policy.ErrHoldReleased, h.Matter, h.Released.Format(time.RFC3339))
		}
		h.Status, h.Released, h.ReleasedBy, h.ReleaseReason = policy.HoldReleased, r.Released, r.ReleasedBy, r.ReleaseReason
		b, err := json.Marshal(h)
		if err != nil {
			return fmt.Errorf("encode hold %s: %w", h.Matter, err)
		}
		v, err := bumpHolds(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE policy_hold SET status = $1, released = $2, hv = $3, body = $4 WHERE matter = $5`,
			h.Status, ns(h.Released), v, b, h.Matter); err != nil {
			return fmt.Errorf("store hold %s: %w", h.Matter, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM policy_placement WHERE matter = $1`, h.Matter); err != nil {
			return fmt.Errorf("end placement of hold %s: %w", h.Matter, err)
		}
		return appendAudit(ctx, tx, a)
	})
	return h, err
}

// Placements implements policy.PlacementStore.
func (s *Store) Placements(ctx context.Context) ([]policy.PendingPlacement, error) {
	rows, err := s.pool.Query(ctx, `SELECT matter, recorded, attempts, error, next FROM policy_placement ORDER BY matter`)
	if err != nil {
		return nil, fmt.Errorf("load pending placements: %w", err)
	}
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (policy.PendingPlacement, error) {
		var p policy.PendingPlacement
		var next int64
		err := row.Scan(&p.Matter, &p.Recorded, &p.Attempts, &p.LastError, &next)
		p.Next = fromNS(next)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("load pending placements: %w", err)
	}
	return ps, nil
}

// UpdatePlacement implements policy.PlacementStore.
func (s *Store) UpdatePlacement(ctx context.Context, p policy.PendingPlacement) error {
	err := pgdb.Retry(ctx, true, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `UPDATE policy_placement SET recorded = recorded OR $1, attempts = $2, error = $3, next = $4
			WHERE matter = $5`, p.Recorded, p.Attempts, p.LastError, ns(p.Next), p.Matter)
		return err
	})
	if err != nil {
		return fmt.Errorf("store placement of hold %s: %w", p.Matter, err)
	}
	return nil
}

// FinishPlacement implements policy.PlacementStore. After a lost
// connection its caller's retry finds nothing pending and appends nothing.
func (s *Store) FinishPlacement(ctx context.Context, matter string, a policy.AuditEntry) (bool, error) {
	done := false
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM policy_placement WHERE matter = $1`, matter)
		if err != nil {
			return fmt.Errorf("end placement of hold %s: %w", matter, err)
		}
		if done = tag.RowsAffected() > 0; !done {
			return nil
		}
		return appendAudit(ctx, tx, a)
	})
	return done, err
}

const holdCols = `h.body, (SELECT count(*) FROM policy_held d WHERE d.matter = h.matter)`

func scanHold(row pgx.Row) (policy.Hold, error) {
	var body []byte
	var n int
	if err := row.Scan(&body, &n); err != nil {
		return policy.Hold{}, err
	}
	var h policy.Hold
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("decode hold: %w", err)
	}
	h.Held = n
	return h, nil
}

// Hold implements policy.HoldStore.
func (s *Store) Hold(ctx context.Context, matter string) (policy.Hold, error) {
	h, err := scanHold(s.pool.QueryRow(ctx, `SELECT `+holdCols+` FROM policy_hold h WHERE h.matter = $1`, matter))
	if errors.Is(err, pgx.ErrNoRows) {
		return h, fmt.Errorf("%w: hold %s", policy.ErrNotFound, matter)
	}
	if err != nil {
		return h, fmt.Errorf("load hold %s: %w", matter, err)
	}
	return h, nil
}

// Holds implements policy.HoldStore.
func (s *Store) Holds(ctx context.Context, status policy.HoldStatus) ([]policy.Hold, error) {
	return s.holds(ctx, s.pool, `SELECT `+holdCols+` FROM policy_hold h WHERE $1 = '' OR h.status = $1 ORDER BY h.matter`, string(status))
}

// HoldsOn implements policy.HoldStore. Holds are matched on the object,
// every version of it: a hold covers every version of a held object.
func (s *Store) HoldsOn(ctx context.Context, o policy.Object) ([]policy.Hold, error) {
	return s.holds(ctx, s.pool, `SELECT `+holdCols+` FROM policy_hold h
		WHERE h.matter IN (SELECT matter FROM policy_held WHERE object = $1) ORDER BY h.matter`, o.IndexKey)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (s *Store) holds(ctx context.Context, q querier, sql string, args ...any) ([]policy.Hold, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("load holds: %w", err)
	}
	defer rows.Close()
	var out []policy.Hold
	for rows.Next() {
		h, err := scanHold(rows)
		if err != nil {
			return nil, fmt.Errorf("load holds: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// HoldsVersion implements policy.HoldStore.
func (s *Store) HoldsVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.pool.QueryRow(ctx, `SELECT value FROM policy_counter WHERE name = 'holds'`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read holds version: %w", err)
	}
	return v, nil
}

// HoldsSince implements policy.HoldChanges: one snapshot (REPEATABLE
// READ) of the version, the holds changed after since and the seeds
// recorded after since. Versions commit in order (bumpHolds), so the
// snapshot holds every change up to its version and none after.
func (s *Store) HoldsSince(ctx context.Context, since int64) (policy.HoldDelta, error) {
	var d policy.HoldDelta
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT value FROM policy_counter WHERE name = 'holds'`).Scan(&d.Version); err != nil {
			return err
		}
		var err error
		if d.Holds, err = s.holds(ctx, tx, `SELECT `+holdCols+` FROM policy_hold h WHERE h.hv > $1 ORDER BY h.matter`, since); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+heldCols+` FROM policy_held WHERE seed AND hv > $1 ORDER BY matter, doc`, since)
		if err != nil {
			return err
		}
		d.Seeds, err = pgx.CollectRows(rows, scanHeld)
		return err
	})
	if err != nil {
		return policy.HoldDelta{}, fmt.Errorf("load hold changes since version %d: %w", since, err)
	}
	return d, nil
}

type heldBody struct {
	Document policy.DocRef `json:"document"`
	Object   policy.Object `json:"object"`
}

// queueHeld queues the recording of held documents on b and returns
// them in the order their results come back. It first queues the
// advisory locks of their objects, in one order, so that placements and
// hold-checked transitions on one object serialise without deadlocking;
// then the rows, in (matter, document) order, so that concurrent writers
// lock rows in one order.
func queueHeld(b *pgx.Batch, held []policy.HeldDoc) ([]policy.HeldDoc, error) {
	if len(held) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(held))
	for _, d := range held {
		keys = append(keys, d.Object.IndexKey)
	}
	b.Queue(`SELECT pg_advisory_xact_lock($1, k) FROM (SELECT DISTINCT hashtext(o) AS k FROM unnest($2::text[]) o) l ORDER BY k`,
		objectLockClass, keys)
	held = slices.Clone(held)
	slices.SortStableFunc(held, func(a, b policy.HeldDoc) int {
		return cmp.Or(cmp.Compare(a.Matter, b.Matter), cmp.Compare(a.Document.ID, b.Document.ID))
	})
	for _, d := range held {
		body, err := json.Marshal(heldBody{d.Document, d.Object})
		if err != nil {
			return nil, fmt.Errorf("encode held document %d: %w", d.Document.ID, err)
		}
		b.Queue(`INSERT INTO policy_held (matter, doc, object, version, content, seed, placed, body)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (matter, doc) DO UPDATE SET seed = true WHERE NOT policy_held.seed AND excluded.seed
			RETURNING seed`, d.Matter, d.Document.ID, d.Object.IndexKey, d.Object.VersionID, d.Content, d.Seed, ns(d.Placed), body)
	}
	return held, nil
}

// readHeld reads the results of queueHeld and returns how many documents
// are new (recorded, or turned into a seed) and the new seeds among them.
func readHeld(br pgx.BatchResults, held []policy.HeldDoc) (int, []policy.HeldDoc, error) {
	if len(held) == 0 {
		return 0, nil, nil
	}
	if _, err := br.Exec(); err != nil {
		return 0, nil, fmt.Errorf("lock held objects: %w", err)
	}
	n, fresh := 0, []policy.HeldDoc(nil)
	for _, d := range held {
		var seed bool
		err := br.QueryRow().Scan(&seed)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // held already
		}
		if err != nil {
			return 0, nil, fmt.Errorf("record held document %d for %s: %w", d.Document.ID, d.Matter, err)
		}
		n++
		if seed {
			fresh = append(fresh, d)
		}
	}
	return n, fresh, nil
}

// addHeld records held documents (queueHeld) and returns how many are new
// and the new seeds among them.
func addHeld(ctx context.Context, tx pgx.Tx, held []policy.HeldDoc) (int, []policy.HeldDoc, error) {
	if len(held) == 0 {
		return 0, nil, nil
	}
	b := &pgx.Batch{}
	sorted, err := queueHeld(b, held)
	if err != nil {
		return 0, nil, err
	}
	br := tx.SendBatch(ctx, b)
	n, fresh, err := readHeld(br, sorted)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("record held documents: %w", cerr)
	}
	return n, fresh, err
}

// markSeeds moves the holds version on for seeds just recorded and
// stamps them with it, returning it (0 when there were none).
func markSeeds(ctx context.Context, tx pgx.Tx, seeds []policy.HeldDoc) (int64, error) {
	if len(seeds) == 0 {
		return 0, nil
	}
	v, err := bumpHolds(ctx, tx)
	if err != nil {
		return 0, err
	}
	matters, docs := make([]string, len(seeds)), make([]int64, len(seeds))
	for i, d := range seeds {
		matters[i], docs[i] = d.Matter, int64(d.Document.ID)
	}
	if _, err := tx.Exec(ctx, `UPDATE policy_held h SET hv = $1 FROM unnest($2::text[], $3::bigint[]) AS s(matter, doc)
		WHERE h.matter = s.matter AND h.doc = s.doc`, v, matters, docs); err != nil {
		return 0, fmt.Errorf("stamp new seeds: %w", err)
	}
	return v, nil
}

// AddHeld implements policy.HoldStore. A document already held counts as
// new only when it becomes a seed.
func (s *Store) AddHeld(ctx context.Context, held []policy.HeldDoc) (int, error) {
	if len(held) == 0 {
		return 0, nil
	}
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var seeds []policy.HeldDoc
		var err error
		if n, seeds, err = addHeld(ctx, tx, held); err != nil {
			return err
		}
		_, err = markSeeds(ctx, tx, seeds)
		return err
	})
	return n, err
}

const heldCols = `matter, content, seed, placed, body`

func scanHeld(row pgx.CollectableRow) (policy.HeldDoc, error) {
	var d policy.HeldDoc
	var placed int64
	var body []byte
	if err := row.Scan(&d.Matter, &d.Content, &d.Seed, &placed, &body); err != nil {
		return d, err
	}
	var b heldBody
	if err := json.Unmarshal(body, &b); err != nil {
		return d, fmt.Errorf("decode held document: %w", err)
	}
	d.Document, d.Object, d.Placed = b.Document, b.Object, fromNS(placed)
	return d, nil
}

// heldPage is how many held documents HeldDocs reads at a time: fn runs
// between pages, with no connection held, and memory stays bounded.
const heldPage = 1000

// HeldDocs implements policy.HoldStore.
func (s *Store) HeldDocs(ctx context.Context, matter string, seeds bool, fn func(policy.HeldDoc) error) error {
	after := int64(-1 << 63)
	for {
		rows, err := s.pool.Query(ctx, `SELECT `+heldCols+` FROM policy_held
			WHERE matter = $1 AND (seed OR NOT $2) AND doc > $3 ORDER BY doc LIMIT $4`, matter, seeds, after, heldPage)
		if err != nil {
			return fmt.Errorf("load documents held for %s: %w", matter, err)
		}
		page, err := pgx.CollectRows(rows, scanHeld)
		if err != nil {
			return fmt.Errorf("load documents held for %s: %w", matter, err)
		}
		for _, d := range page {
			if err := fn(d); err != nil {
				return err
			}
		}
		if len(page) < heldPage {
			return nil
		}
		after = int64(page[len(page)-1].Document.ID)
	}
}
