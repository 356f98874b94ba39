package pgtest

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// RoundTrips is a pgx tracer (pgx.ConnConfig.Tracer) that counts the round
// trips of a pool's connections: each query (BEGIN and COMMIT included),
// each batch whatever its statements, each prepare. Tests assert with it
// that a store's operation costs a fixed number of round trips.
type RoundTrips struct{ n atomic.Int64 }

// N returns the round trips counted so far.
func (c *RoundTrips) N() int64 { return c.n.Load() }

// TraceQueryStart counts a query.
func (c *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

// TraceQueryEnd does nothing.
func (c *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch.
func (c *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}

// TraceBatchQuery does nothing: a batch's statements share its round trip.
func (c *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (c *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TracePrepareStart counts a prepare.
func (c *RoundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.n.Add(1)
	return ctx
}

// TracePrepareEnd does nothing.
func (c *RoundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
