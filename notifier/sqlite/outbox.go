// Package sqlite is the embedded notifier outbox: alerts and their
// deliveries in a SQLite database in WAL mode, next to the index.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/simdex/simdex/internal/sqlitedb"
	"github.com/simdex/simdex/notifier"
)

// schemaVersion is the newest schema; migrations[i] upgrades from version i.
var migrations = []string{
	`CREATE TABLE alert (
		id      TEXT PRIMARY KEY,
		body    TEXT NOT NULL,
		created INTEGER NOT NULL
	);
	CREATE TABLE delivery (
		id           INTEGER PRIMARY KEY,
		alert        TEXT NOT NULL REFERENCES alert(id),
		channel      TEXT NOT NULL,
		status       TEXT NOT NULL,
		attempts     INTEGER NOT NULL DEFAULT 0,
		next_attempt INTEGER NOT NULL,
		last_error   TEXT NOT NULL DEFAULT '',
		created      INTEGER NOT NULL,
		delivered_at INTEGER NOT NULL DEFAULT 0,
		UNIQUE (alert, channel)
	);
	CREATE INDEX delivery_due ON delivery(status, next_attempt);`,
}

// Outbox is the SQLite outbox. It is safe for concurrent use.
type Outbox struct {
	db *sql.DB
}

var _ notifier.Outbox = (*Outbox)(nil)

// Open opens or creates the outbox at path and migrates its schema.
func Open(ctx context.Context, path string) (*Outbox, error) {
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Outbox, migrations)
	if err != nil {
		return nil, fmt.Errorf("open outbox %s: %w", path, err)
	}
	return &Outbox{db: db}, nil
}

// Close closes the database.
func (o *Outbox) Close() error { return o.db.Close() }

// Enqueue implements notifier.Outbox.
func (o *Outbox) Enqueue(ctx context.Context, a notifier.Alert, due map[string]time.Time) error {
	body, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode alert %s: %w", a.ID, err)
	}
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now()
	if _, err := tx.ExecContext(ctx, `INSERT INTO alert(id, body, created) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING`,
		a.ID, string(body), sqlitedb.Millis(a.Created)); err != nil {
		return fmt.Errorf("store alert %s: %w", a.ID, err)
	}
	for ch, at := range due {
		if at.IsZero() {
			at = now
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO delivery(alert, channel, status, next_attempt, created)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT(alert, channel) DO NOTHING`,
			a.ID, ch, notifier.StatusPending, sqlitedb.Millis(at), sqlitedb.Millis(now)); err != nil {
			return fmt.Errorf("store delivery of %s to %s: %w", a.ID, ch, err)
		}
	}
	return tx.Commit()
}

// Claim implements notifier.Outbox.
func (o *Outbox) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]notifier.Claimed, error) {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT d.id, d.alert, d.channel, d.status, d.attempts, d.next_attempt, d.last_error, d.created, d.delivered_at, a.body
		FROM delivery d JOIN alert a ON a.id = d.alert
		WHERE d.status = ? AND d.next_attempt <= ? ORDER BY d.next_attempt, d.id LIMIT ?`,
		notifier.StatusPending, sqlitedb.Millis(now), limit)
	if err != nil {
		return nil, fmt.Errorf("find due deliveries: %w", err)
	}
	var out []notifier.Claimed
	for rows.Next() {
		var c notifier.Claimed
		var next, created, delivered int64
		var body string
		if err := rows.Scan(&c.ID, &c.AlertID, &c.Channel, &c.Status, &c.Attempts, &next, &c.LastError, &created, &delivered, &body); err != nil {
			rows.Close()
			return nil, err
		}
		c.NextAttempt, c.Created, c.DeliveredAt = sqlitedb.FromMillis(next), sqlitedb.FromMillis(created), sqlitedb.FromMillis(delivered)
		if err := json.Unmarshal([]byte(body), &c.Alert); err != nil {
			rows.Close()
			return nil, fmt.Errorf("decode alert %s: %w", c.AlertID, err)
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	until := sqlitedb.Millis(now.Add(lease))
	for _, c := range out {
		if _, err := tx.ExecContext(ctx, `UPDATE delivery SET next_attempt = ? WHERE id = ?`, until, c.ID); err != nil {
			return nil, fmt.Errorf("claim delivery %d: %w", c.ID, err)
		}
	}
	return out, tx.Commit()
}

func (o *Outbox) update(ctx context.Context, ids []int64, set string, args ...any) error {
	if len(ids) == 0 {
		return nil
	}
	q := "UPDATE delivery SET " + set + " WHERE id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
	for _, id := range ids {
		args = append(args, id)
	}
	res, err := o.db.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("update deliveries: %w", err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(ids)) {
		return fmt.Errorf("update deliveries %v: %w", ids, notifier.ErrNotFound)
	}
	return nil
}

// Delivered implements notifier.Outbox.
func (o *Outbox) Delivered(ctx context.Context, ids []int64, at time.Time) error {
	return o.update(ctx, ids, "status = ?, delivered_at = ?, attempts = attempts + 1, last_error = ''", notifier.StatusDelivered, sqlitedb.Millis(at))
}

// Retry implements notifier.Outbox.
func (o *Outbox) Retry(ctx context.Context, ids []int64, reason string, next time.Time, final bool) error {
	status := notifier.StatusPending
	if final {
		status = notifier.StatusFailed
	}
	return o.update(ctx, ids, "status = ?, attempts = attempts + 1, next_attempt = ?, last_error = ?", status, sqlitedb.Millis(next), reason)
}

// Requeue implements notifier.Outbox.
func (o *Outbox) Requeue(ctx context.Context, ids []int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	// Only failed deliveries may be requeued: a delivered alert stays delivered.
	var n int
	q := "SELECT COUNT(*) FROM delivery WHERE status = ? AND id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
	args := []any{notifier.StatusFailed}
	for _, id := range ids {
		args = append(args, id)
	}
	if err := o.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return err
	}
	if n != len(ids) {
		return fmt.Errorf("requeue %v: %w (only failed deliveries can be retried)", ids, notifier.ErrNotFound)
	}
	return o.update(ctx, ids, "status = ?, attempts = 0, next_attempt = ?", notifier.StatusPending, sqlitedb.Millis(now))
}

// Prune implements notifier.Outbox.
func (o *Outbox) Prune(ctx context.Context, before time.Time, limit int) (int, error) {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `DELETE FROM delivery WHERE id IN (
		SELECT id FROM delivery WHERE status = ? AND delivered_at < ? ORDER BY id LIMIT ?)`,
		notifier.StatusDelivered, sqlitedb.Millis(before), limit)
	if err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM alert WHERE NOT EXISTS (SELECT 1 FROM delivery WHERE delivery.alert = alert.id)`); err != nil {
			return 0, fmt.Errorf("prune alerts: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("prune deliveries: %w", err)
	}
	return int(n), nil
}

// List implements notifier.Outbox.
func (o *Outbox) List(ctx context.Context, status string, limit int) ([]notifier.Delivery, error) {
	if limit <= 0 {
		limit = -1
	}
	q := `SELECT id, alert, channel, status, attempts, next_attempt, last_error, created, delivered_at FROM delivery`
	var args []any
	if status != "" {
		q += " WHERE status = ?"
		args = append(args, status)
	}
	q += " ORDER BY id DESC LIMIT ?"
	args = append(args, limit)
	rows, err := o.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	defer rows.Close()
	var out []notifier.Delivery
	for rows.Next() {
		var d notifier.Delivery
		var next, created, delivered int64
		if err := rows.Scan(&d.ID, &d.AlertID, &d.Channel, &d.Status, &d.Attempts, &next, &d.LastError, &created, &delivered); err != nil {
			return nil, err
		}
		d.NextAttempt, d.Created, d.DeliveredAt = sqlitedb.FromMillis(next), sqlitedb.FromMillis(created), sqlitedb.FromMillis(delivered)
		if d.Status != notifier.StatusPending {
			d.NextAttempt = time.Time{}
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
