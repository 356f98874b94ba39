package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/policy"
)

func countedStore(t testing.TB, dsn string) (*Store, *pgtest.RoundTrips) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c := &pgtest.RoundTrips{}
	cfg.ConnConfig.Tracer = c
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	return st, c
}

// ingestOf is the ingest commit of document id with n flags.
func ingestOf(id int, n int) ([]policy.HeldDoc, []policy.Flag, []policy.AuditEntry) {
	held, flags, audit := ingestInput()
	for i := range held {
		held[i].Document.ID = index.DocID(id)
	}
	base := flags[0]
	flags = flags[:0]
	for i := range n {
		f := base
		f.Document.ID = index.DocID(id)
		f.Rule = fmt.Sprint("r", i)
		flags = append(flags, f)
	}
	return held, flags, audit
}

// TestIngestRoundTrips: an ingest commit costs a fixed number of round
// trips, whatever the number of flags and the size of the tables.
func TestIngestRoundTrips(t *testing.T) {
	ctx := context.Background()
	st, c := countedStore(t, pgtest.DSN(t))
	prepare(t, st)
	for i, n := range []int{1, 1, 50, 50, 1} {
		held, flags, audit := ingestOf(100+i, n)
		before := c.N()
		if _, _, err := st.AddHeldAndFlags(ctx, held, flags, audit, "ingest", epoch); err != nil {
			t.Fatal(err)
		}
		if got := c.N() - before; got != ingestRoundTrips {
			t.Errorf("commit %d with %d flags: %d round trips, want %d", i, n, got, ingestRoundTrips)
		}
	}
}

// ingestRoundTrips is the round trips of an ingest commit that records
// held near-copies, flags and audit entries: BEGIN, one batch (locks,
// held documents, flags, commit key, audit head), one batch (audit
// entries, commit result), COMMIT.
const ingestRoundTrips = 4
