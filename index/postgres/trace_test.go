package postgres_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// statTracer counts a pool's round trips (a query, a batch, a prepare)
// and the time each statement, or batch of statements, took, by its text.
type statTracer struct {
	mu    sync.Mutex
	trips int64
	stats map[string]*stat
}

// stat is one statement's count and total time.
type stat struct {
	n     int
	total time.Duration
}

type traceStart struct {
	sql string
	at  time.Time
}

type traceKey struct{}

func newStatTracer() *statTracer { return &statTracer{stats: map[string]*stat{}} }

// reset forgets what was counted.
func (t *statTracer) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trips = 0
	clear(t.stats)
}

// roundTrips returns the round trips since the last reset.
func (t *statTracer) roundTrips() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.trips
}

// log logs each statement's count and mean time, slowest total first.
func (t *statTracer) log(b *testing.B) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.stats))
	for k := range t.stats {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(t.stats[y].total, t.stats[x].total) })
	for _, k := range keys {
		s := t.stats[k]
		b.Logf("%6d × %8v  %s", s.n, (s.total / time.Duration(s.n)).Round(time.Microsecond), k)
	}
}

func (t *statTracer) start(ctx context.Context, sql string) context.Context {
	t.mu.Lock()
	t.trips++
	t.mu.Unlock()
	return context.WithValue(ctx, traceKey{}, traceStart{sql, time.Now()})
}

func (t *statTracer) end(ctx context.Context) {
	st, ok := ctx.Value(traceKey{}).(traceStart)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats[st.sql]
	if s == nil {
		s = &stat{}
		t.stats[st.sql] = s
	}
	s.n++
	s.total += time.Since(st.at)
}

// short is a statement's first 70 characters on one line.
func short(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 70 {
		sql = sql[:70]
	}
	return sql
}

func (t *statTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return t.start(ctx, short(d.SQL))
}
func (t *statTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	t.end(ctx)
}
func (t *statTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var sqls []string
	for _, q := range d.Batch.QueuedQueries {
		sqls = append(sqls, short(q.SQL)[:min(30, len(short(q.SQL)))])
	}
	return t.start(ctx, "batch["+strings.Join(sqls, " | ")+"]")
}
func (t *statTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *statTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	t.end(ctx)
}
func (t *statTracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	return t.start(ctx, "prepare "+short(d.SQL))
}
func (t *statTracer) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareEndData) {
	t.end(ctx)
}
