package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/storetest"
	"github.com/simdex/simdex/internal/pgtest"
)

// killer kills a server before the round trip it is armed for: the n-th
// from arming, or the next COMMIT.
type killer struct {
	srv      *pgtest.Server
	left     atomic.Int64 // round trips left before the kill; 0: disarmed
	atCommit atomic.Bool
}

func (k *killer) trip(sql string) {
	if k.atCommit.Load() && strings.EqualFold(strings.TrimSpace(sql), "commit") {
		k.atCommit.Store(false)
		k.srv.Kill()
		return
	}
	if k.left.Load() > 0 && k.left.Add(-1) == 0 {
		k.srv.Kill()
	}
}

func (k *killer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	k.trip(d.SQL)
	return ctx
}
func (k *killer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (k *killer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	k.trip("batch")
	return ctx
}
func (k *killer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (k *killer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestServerKilledMidPut kills PostgreSQL in the middle of a Put (before
// its third round trip, and before its COMMIT, when the caller cannot
// know whether it committed): Put returns the connection's error, nothing
// is half-written, and after a restart the same entries commit once.
func TestServerKilledMidPut(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	cfg, err := pgxpool.ParseConfig(srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	k := &killer{srv: srv}
	cfg.ConnConfig.Tracer = k
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := openOn(t, pool)
	for round, arm := range []func(){func() { k.left.Store(3) }, func() { k.atCommit.Store(true) }} {
		entries := []index.Entry{
			{Doc: index.Doc{Key: fmt.Sprint("box", round)}, Parent: -1, Fingerprint: storetest.Fingerprint(fmt.Sprint("box ", round), []uint64{1 << 40}, nil)},
			{Doc: index.Doc{Key: fmt.Sprint("box", round, "!/a")}, Parent: 0, Fingerprint: storetest.Fingerprint(fmt.Sprint("a ", round), []uint64{2 << 40}, nil)},
		}
		arm()
		if _, err := s.Put(ctx, entries); err == nil {
			t.Fatalf("round %d: Put succeeded through a killed server", round)
		} else {
			t.Logf("round %d: %v", round, err)
		}
		srv.Restart(t)
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(2 * round); st.Documents != want && st.Documents != want+2 {
			t.Fatalf("round %d: %d documents after the crash: half a Put", round, st.Documents)
		}
		c, err := s.Put(ctx, entries)
		if err != nil {
			t.Fatalf("round %d: Put after restart: %v", round, err)
		}
		again, err := s.Put(ctx, entries)
		if err != nil || !again[0].Duplicate || !again[1].Duplicate || again[0].ID != c[0].ID || again[1].ID != c[1].ID {
			t.Fatalf("round %d: Put again: %+v %v, want duplicates of %+v", round, again, err, c)
		}
		if st, _ := s.Stats(ctx); st.Documents != int64(2*round+2) || st.Contents != int64(2*round+2) {
			t.Fatalf("round %d: stats %+v: committed more than once", round, st)
		}
	}
}
