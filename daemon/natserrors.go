package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// natsDeniedWindow is how long /readyz fails after the server refused
// the daemon a permission: a refusal is repeated by every redelivery of
// an event whose acknowledgement was refused, while a refused write of
// the backfill marker happens once.
const natsDeniedWindow = 10 * time.Minute

// natsErrors takes the asynchronous errors the NATS server reports on the
// daemon's connection (permission violations, slow consumers), which
// nats.go would otherwise print to standard error: each goes to the log
// and to simdex_nats_async_errors_total, and a permission violation fails
// /readyz for natsDeniedWindow. Safe for concurrent use.
type natsErrors struct {
	log   *slog.Logger
	count *prometheus.CounterVec
	now   func() time.Time

	mu         sync.Mutex
	deniedAt   time.Time // the last permission violation
	deniedErr  error
	deniedSubj string
}

// newNATSErrors registers the counter with reg.
func newNATSErrors(reg prometheus.Registerer, log *slog.Logger) (*natsErrors, error) {
	e := &natsErrors{log: log, now: time.Now, count: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "simdex", Subsystem: "nats", Name: "async_errors_total",
		Help: "Asynchronous errors the NATS server reported on the daemon's connection, by kind: permission (a permissions violation), slow_consumer, other.",
	}, []string{"kind"})}
	if err := reg.Register(e.count); err != nil {
		return nil, fmt.Errorf("register NATS error counter: %w", err)
	}
	return e, nil
}

// handle is the connection's nats.ErrHandler.
func (e *natsErrors) handle(_ *nats.Conn, sub *nats.Subscription, err error) {
	subject := ""
	if sub != nil {
		subject = sub.Subject
	}
	switch {
	case errors.Is(err, nats.ErrPermissionViolation):
		e.count.WithLabelValues("permission").Inc()
		e.mu.Lock()
		e.deniedAt, e.deniedErr, e.deniedSubj = e.now(), err, subject
		e.mu.Unlock()
		e.log.Error("NATS refused the daemon a permission: grant it to the daemon's NATS user (docs/deploy.md, section 4)",
			"err", err, "subscription", subject)
	case errors.Is(err, nats.ErrSlowConsumer):
		e.count.WithLabelValues("slow_consumer").Inc()
		e.log.Warn("NATS slow consumer: messages dropped for a subscription", "err", err, "subscription", subject)
	default:
		e.count.WithLabelValues("other").Inc()
		e.log.Warn("NATS asynchronous error", "err", err, "subscription", subject)
	}
}

// check is the /readyz check: it fails within natsDeniedWindow of the
// last permission violation.
func (e *natsErrors) check(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.deniedErr == nil || e.now().Sub(e.deniedAt) > natsDeniedWindow {
		return nil
	}
	return fmt.Errorf("%w (at %s)", e.deniedErr, e.deniedAt.UTC().Format(time.RFC3339))
}
