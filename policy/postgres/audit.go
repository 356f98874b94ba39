package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/simdex/simdex/policy"
)

// appendAudit chains entries to the head and stores them. It locks the
// head row until the transaction ends: callers take it after every other
// lock of their transaction, so that appenders wait for each other only
// at the very end, and never in a cycle.
func appendAudit(ctx context.Context, tx pgx.Tx, entries ...policy.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	queueHead(b)
	br := tx.SendBatch(ctx, b)
	seq, prev, err := readHead(br)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("read audit head: %w", cerr)
	}
	if err != nil {
		return err
	}
	b = &pgx.Batch{}
	queueAudit(b, seq, prev, entries)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("append %d audit entries: %w", len(entries), err)
	}
	return nil
}

// queueHead queues reading and locking the audit head.
func queueHead(b *pgx.Batch) {
	b.Queue(`SELECT seq, hash FROM policy_audit_head WHERE id = 1 FOR UPDATE`)
}

// readHead reads the result of queueHead.
func readHead(br pgx.BatchResults) (int64, string, error) {
	var seq int64
	var hash string
	if err := br.QueryRow().Scan(&seq, &hash); err != nil {
		return 0, "", fmt.Errorf("read audit head: %w", err)
	}
	return seq, hash, nil
}

// queueAudit queues storing entries chained after the head (seq, prev)
// and moving the head.
func queueAudit(b *pgx.Batch, seq int64, prev string, entries []policy.AuditEntry) {
	for _, e := range entries {
		seq++
		e.Seq, e.Prev = seq, prev
		e.Time = e.Time.UTC()
		e.Hash = policy.ChainHash(prev, e)
		b.Queue(`INSERT INTO policy_audit (seq, time, actor, action, object, reason, details, prev, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			e.Seq, e.Time.UnixNano(), e.Actor, e.Action, e.Object, e.Reason, []byte(e.Details), e.Prev, e.Hash)
		prev = e.Hash
	}
	b.Queue(`UPDATE policy_audit_head SET seq = $1, hash = $2 WHERE id = 1`, seq, prev)
}

// Append implements policy.AuditLog.
func (s *Store) Append(ctx context.Context, entries ...policy.AuditEntry) error {
	return s.tx(ctx, func(tx pgx.Tx) error { return appendAudit(ctx, tx, entries...) })
}

// auditPage is how many entries Audit reads at a time.
const auditPage = 1000

// Audit implements policy.AuditLog.
func (s *Store) Audit(ctx context.Context, from int64, fn func(policy.AuditEntry) error) error {
	for {
		rows, err := s.pool.Query(ctx, `SELECT seq, time, actor, action, object, reason, details, prev, hash
			FROM policy_audit WHERE seq >= $1 ORDER BY seq LIMIT $2`, from, auditPage)
		if err != nil {
			return fmt.Errorf("read audit log from %d: %w", from, err)
		}
		page, err := pgx.CollectRows(rows, scanAudit)
		if err != nil {
			return fmt.Errorf("read audit log from %d: %w", from, err)
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(page) < auditPage {
			return nil
		}
		from = page[len(page)-1].Seq + 1
	}
}

func scanAudit(row pgx.CollectableRow) (policy.AuditEntry, error) {
	var e policy.AuditEntry
	var t int64
	var d []byte
	if err := row.Scan(&e.Seq, &t, &e.Actor, &e.Action, &e.Object, &e.Reason, &d, &e.Prev, &e.Hash); err != nil {
		return e, err
	}
	e.Time = time.Unix(0, t).UTC()
	if len(d) > 0 {
		e.Details = d
	}
	return e, nil
}
