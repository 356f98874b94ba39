package pgtest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// RoundTrips is a pgx tracer (pgx.ConnConfig.Tracer) that counts the round
// trips of a pool's connections: each query (BEGIN and COMMIT included),
// each batch whatever its statements, each prepare. Tests assert with it
// that a store's operation costs a fixed number of round trips.
type RoundTrips struct {
	n atomic.Int64

	mu    sync.Mutex
	bySQL map[string]int64 // round trips by statement (a batch by its first)
}

// N returns the round trips counted so far.
func (c *RoundTrips) N() int64 { return c.n.Load() }

// BySQL returns the round trips counted so far by statement, the first
// 100 characters of its text on one line; a batch counts under its first
// statement, prefixed "batch: ".
func (c *RoundTrips) BySQL() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.bySQL)
}

// Diff returns the statements counted more often in now than in before,
// most first, one "count statement" per line: what an operation between
// two BySQL calls cost.
func Diff(before, now map[string]int64) string {
	type row struct {
		sql string
		n   int64
	}
	var rows []row
	for sql, n := range now {
		if d := n - before[sql]; d > 0 {
			rows = append(rows, row{sql, d})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.sql, b.sql)) })
	var sb strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&sb, "%6d %s\n", r.n, r.sql)
	}
	return sb.String()
}

func (c *RoundTrips) count(sql string) {
	c.n.Add(1)
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 100 {
		sql = sql[:100]
	}
	c.mu.Lock()
	if c.bySQL == nil {
		c.bySQL = make(map[string]int64)
	}
	c.bySQL[sql]++
	c.mu.Unlock()
}

// TraceQueryStart counts a query.
func (c *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.count(d.SQL)
	return ctx
}

// TraceQueryEnd does nothing.
func (c *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch.
func (c *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	first := ""
	if d.Batch != nil && len(d.Batch.QueuedQueries) > 0 {
		first = d.Batch.QueuedQueries[0].SQL
	}
	c.count("batch: " + first)
	return ctx
}

// TraceBatchQuery does nothing: a batch's statements share its round trip.
func (c *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (c *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TracePrepareStart counts a prepare.
func (c *RoundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	c.count("prepare: " + d.SQL)
	return ctx
}

// TracePrepareEnd does nothing.
func (c *RoundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
