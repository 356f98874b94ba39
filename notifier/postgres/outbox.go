// Package postgres is the notifier outbox of a fleet of simdex replicas:
// alerts and their deliveries in the PostgreSQL database the replicas
// share. It satisfies notifier.Outbox as notifier/sqlite does; importers
// alias it notifierpg.
//
// Enqueue is idempotent on (alert id, channel) through unique keys and
// INSERT … ON CONFLICT DO NOTHING, so replicas that raise one alert at once
// record one delivery per channel. Claim is one statement that locks due
// rows with FOR UPDATE SKIP LOCKED and leases them: dispatchers on
// different replicas never claim one delivery, and a delivery whose
// dispatcher died is due again when its lease ends. A delivery is due by
// the dispatcher's clock (the time Claim is given), but its lease is
// measured on the database's clock, the one clock every replica shares: a
// replica whose clock runs ahead cannot take a delivery another one holds,
// and one whose clock lags does not hold a dead replica's deliveries
// longer. A claim carries a token: one whose answer was lost with its
// connection is repeated with that token, at once or at the next Claim,
// and takes back the deliveries it had leased. Delivery
// stays at least once (a replica that dies between sending and recording
// leaves its deliveries to be sent again), so receivers deduplicate by the
// alert id every message carries.
package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/notifier"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SchemaTable is the goose version table of this store's migrations.
const SchemaTable = "notifier_schema"

// Outbox is the PostgreSQL outbox. It is safe for concurrent use, and by
// several processes on one database.
type Outbox struct {
	pool *pgxpool.Pool
	now  func() time.Time

	mu sync.Mutex
	// lost is the token of a claim that failed: it may have committed, so
	// the next Claim repeats it ("" when none is outstanding).
	lost string
}

var _ notifier.Outbox = (*Outbox)(nil)

// Options configure an Outbox; the zero value is the default.
type Options struct {
	// Now is the clock that dates enqueued deliveries (default time.Now).
	Now func() time.Time
}

// New migrates the outbox schema in pool's database and returns the
// outbox. The pool stays the caller's.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Outbox, error) {
	if err := pgdb.Migrate(ctx, pool, migrations, "migrations", SchemaTable); err != nil {
		return nil, fmt.Errorf("open outbox: %w", err)
	}
	o := &Outbox{pool: pool, now: opts.Now}
	if o.now == nil {
		o.now = time.Now
	}
	return o, nil
}

// Close releases nothing: the pool belongs to the caller. It exists so
// that the outbox closes like its SQLite twin.
func (o *Outbox) Close() error { return nil }

// Enqueue implements notifier.Outbox: the alert and its deliveries in one
// transaction sent as one batch. Enqueueing again changes nothing, so a
// caller that lost its connection during the commit may simply retry.
func (o *Outbox) Enqueue(ctx context.Context, a notifier.Alert, due map[string]time.Time) error {
	body, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode alert %s: %w", a.ID, err)
	}
	now := o.now()
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO notifier_alert (id, body, created) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
		a.ID, string(body), a.Created)
	// Channels in order, so that two replicas enqueueing one alert lock
	// its deliveries in the same order.
	chans := make([]string, 0, len(due))
	for ch := range due {
		chans = append(chans, ch)
	}
	slices.Sort(chans)
	for _, ch := range chans {
		at := due[ch]
		if at.IsZero() {
			at = now
		}
		b.Queue(`INSERT INTO notifier_delivery (alert, channel, status, next_attempt, created)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (alert, channel) DO NOTHING`,
			a.ID, ch, notifier.StatusPending, at, now)
	}
	err = pgdb.Retry(ctx, true, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	})
	if err != nil {
		return fmt.Errorf("enqueue alert %s: %w", a.ID, err)
	}
	return nil
}

// claimQuery locks up to $2 pending deliveries due at $1 and not leased
// (or leased by the claim of token $4), skipping those another dispatcher
// has locked, and leases them for $3 microseconds of the database's clock
// to token $4, returning them with their alert.
// The row locks last until the statement commits, by which time the rows
// are leased: no other claim can take them (a claim that waited for one
// re-reads it and finds it leased).
const claimQuery = `WITH due AS (
		SELECT id FROM notifier_delivery
		WHERE status = 'pending' AND next_attempt <= $1
			AND (claimed_until IS NULL OR claimed_until <= statement_timestamp() OR claimed_by = $4)
		ORDER BY next_attempt, id
		LIMIT $2
		FOR UPDATE SKIP LOCKED)
	UPDATE notifier_delivery d SET claimed_until = statement_timestamp() + $3 * interval '1 microsecond', claimed_by = $4
	FROM due, notifier_alert a
	WHERE d.id = due.id AND a.id = d.alert
	RETURNING d.id, d.alert, d.channel, d.status, d.attempts, d.next_attempt, d.last_error, d.created, a.body`

// Claim implements notifier.Outbox. The lease runs on the database's
// clock; now decides only which deliveries are due.
func (o *Outbox) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]notifier.Claimed, error) {
	if limit <= 0 {
		return nil, nil
	}
	token, err := o.claimToken()
	if err != nil {
		return nil, err
	}
	var out []notifier.Claimed
	// Claiming again after a lost connection is safe: a claim that did
	// commit is repeated with its token and takes its deliveries back.
	err = pgdb.Retry(ctx, true, func(ctx context.Context) error {
		rows, err := o.pool.Query(ctx, claimQuery, now, limit, lease.Microseconds(), token)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanClaimed)
		return err
	})
	if err != nil {
		o.mu.Lock()
		o.lost = token
		o.mu.Unlock()
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	slices.SortFunc(out, func(a, b notifier.Claimed) int {
		if c := a.NextAttempt.Compare(b.NextAttempt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// claimToken returns the token of the last claim that failed, which may
// have leased deliveries before its answer was lost, or a new one.
func (o *Outbox) claimToken() (string, error) {
	o.mu.Lock()
	token := o.lost
	o.lost = ""
	o.mu.Unlock()
	if token != "" {
		return token, nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make claim token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func scanClaimed(r pgx.CollectableRow) (notifier.Claimed, error) {
	var c notifier.Claimed
	var body string
	if err := r.Scan(&c.ID, &c.AlertID, &c.Channel, &c.Status, &c.Attempts, &c.NextAttempt, &c.LastError, &c.Created, &body); err != nil {
		return c, err
	}
	c.NextAttempt, c.Created = c.NextAttempt.UTC(), c.Created.UTC()
	if err := json.Unmarshal([]byte(body), &c.Alert); err != nil {
		return c, fmt.Errorf("decode alert %s: %w", c.AlertID, err)
	}
	return c, nil
}

// update sets columns of the deliveries ids that match where, in one
// transaction: all of them or, when one is missing, none
// (notifier.ErrNotFound).
func (o *Outbox) update(ctx context.Context, op string, ids []int64, set, where string, args ...any) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return nil
	}
	q := `UPDATE notifier_delivery SET ` + set + ` WHERE id = ANY($1)` + where
	err := pgdb.Retry(ctx, false, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, q, append([]any{ids}, args...)...)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != int64(len(ids)) {
				return notifier.ErrNotFound
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("%s deliveries %v: %w", op, ids, err)
	}
	return nil
}

// Delivered implements notifier.Outbox.
func (o *Outbox) Delivered(ctx context.Context, ids []int64, at time.Time) error {
	return o.update(ctx, "record sent", ids, `status = $2, delivered_at = $3, attempts = attempts + 1, last_error = '', claimed_until = NULL`, "",
		notifier.StatusDelivered, at)
}

// Retry implements notifier.Outbox.
func (o *Outbox) Retry(ctx context.Context, ids []int64, reason string, next time.Time, final bool) error {
	status := notifier.StatusPending
	if final {
		status = notifier.StatusFailed
	}
	return o.update(ctx, "record failed", ids, `status = $2, attempts = attempts + 1, next_attempt = $3, last_error = $4, claimed_until = NULL`, "",
		status, next, reason)
}

// Requeue implements notifier.Outbox. Only failed deliveries may be
// requeued, all of ids or none: a delivered alert stays delivered.
func (o *Outbox) Requeue(ctx context.Context, ids []int64, now time.Time) error {
	err := o.update(ctx, "requeue", ids, `status = $2, attempts = 0, next_attempt = $3, claimed_until = NULL`, ` AND status = $4`,
		notifier.StatusPending, now, notifier.StatusFailed)
	if errors.Is(err, notifier.ErrNotFound) {
		return fmt.Errorf("%w (only failed deliveries can be retried)", err)
	}
	return err
}

// Prune implements notifier.Outbox in one statement: the deliveries, then
// the alerts none of the remaining deliveries name (the statement's
// snapshot still shows the deleted deliveries, hence the second test).
func (o *Outbox) Prune(ctx context.Context, before time.Time, limit int) (int, error) {
	var n int
	err := o.pool.QueryRow(ctx, `WITH gone AS (
		DELETE FROM notifier_delivery WHERE id IN (
			SELECT id FROM notifier_delivery WHERE status = $1 AND delivered_at < $2 ORDER BY id LIMIT $3)
		RETURNING id, alert
	), alerts AS (
		DELETE FROM notifier_alert a WHERE a.id IN (SELECT alert FROM gone) AND NOT EXISTS (
			SELECT 1 FROM notifier_delivery d WHERE d.alert = a.id AND d.id NOT IN (SELECT id FROM gone))
	)
	SELECT count(*) FROM gone`, notifier.StatusDelivered, before, limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", err)
	}
	return n, nil
}

// List implements notifier.Outbox.
func (o *Outbox) List(ctx context.Context, status string, limit int) ([]notifier.Delivery, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	q := `SELECT id, alert, channel, status, attempts, next_attempt, last_error, created, delivered_at
		FROM notifier_delivery ORDER BY id DESC LIMIT $1`
	args := []any{lim}
	if status != "" {
		// A query of its own, so that its plan uses the status index.
		q = `SELECT id, alert, channel, status, attempts, next_attempt, last_error, created, delivered_at
		FROM notifier_delivery WHERE status = $2 ORDER BY id DESC LIMIT $1`
		args = append(args, status)
	}
	rows, err := o.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

func scanDelivery(r pgx.CollectableRow) (notifier.Delivery, error) {
	var d notifier.Delivery
	var delivered *time.Time
	if err := r.Scan(&d.ID, &d.AlertID, &d.Channel, &d.Status, &d.Attempts, &d.NextAttempt, &d.LastError, &d.Created, &delivered); err != nil {
		return d, err
	}
	d.NextAttempt, d.Created = d.NextAttempt.UTC(), d.Created.UTC()
	if delivered != nil {
		d.DeliveredAt = delivered.UTC()
	}
	if d.Status != notifier.StatusPending {
		d.NextAttempt = time.Time{}
	}
	return d, nil
}
