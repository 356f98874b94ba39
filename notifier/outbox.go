package notifier

import (
	"context"
	"time"
)

// Delivery states.
const (
	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed" // gave up after Retry.MaxAttempts or a permanent error
)

// Delivery is one alert on its way to one channel.
type Delivery struct {
	ID          int64     `json:"id"`
	AlertID     string    `json:"alert"`
	Channel     string    `json:"channel"`
	Status      string    `json:"status"`
	Attempts    int       `json:"attempts"`
	NextAttempt time.Time `json:"next_attempt,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	Created     time.Time `json:"created"`
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
}

// Claimed is a due delivery reserved for this dispatcher, with its alert.
type Claimed struct {
	Delivery
	Alert Alert
}

// Outbox persists alerts and their deliveries. Implementations must make
// Enqueue atomic and idempotent on (alert id, channel), and Claim a lease:
// a claimed delivery is not due again before the lease ends, and no two
// claims take it at once, even from replicas sharing the outbox.
// notifier/sqlite and notifier/postgres implement it; notifier/outboxtest
// is the suite both pass.
type Outbox interface {
	// Enqueue records the alert and one pending delivery per channel, due
	// at the matching time of due (a channel absent from due is due now).
	// Deliveries already recorded for the alert are left as they are.
	Enqueue(ctx context.Context, a Alert, due map[string]time.Time) error
	// Claim reserves up to limit pending deliveries due at now, oldest
	// first, for lease, and returns them with their alerts. The lease
	// ends at now+lease, or lease after the claim on a clock the replicas
	// share (notifier/postgres: the database's).
	Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Claimed, error)
	// Delivered marks deliveries as sent.
	Delivered(ctx context.Context, ids []int64, at time.Time) error
	// Retry records a failed attempt: the delivery is due again at next,
	// or failed for good when final.
	Retry(ctx context.Context, ids []int64, reason string, next time.Time, final bool) error
	// Requeue makes failed deliveries pending again, due at now, with a
	// fresh attempt count (an operator's "retry").
	Requeue(ctx context.Context, ids []int64, now time.Time) error
	// List returns deliveries, newest first, filtered by status when set.
	List(ctx context.Context, status string, limit int) ([]Delivery, error)
	// Prune deletes up to limit deliveries delivered before before, and
	// the alerts left with no delivery, and returns how many deliveries
	// it deleted. Pending and failed deliveries are kept.
	Prune(ctx context.Context, before time.Time, limit int) (int, error)
}
