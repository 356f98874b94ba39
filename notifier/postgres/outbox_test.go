package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/notifier/outboxtest"
	notifierpg "github.com/simdex/simdex/notifier/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// opener opens outboxes on dsn, each on a pool of its own, as replicas do.
func opener(dsn string) outboxtest.Opener {
	return func(t testing.TB) outboxtest.Outbox {
		ctx := context.Background()
		pool, err := pgdb.Open(ctx, dsn, 4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		ob, err := notifierpg.New(ctx, pool, notifierpg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return ob
	}
}

// TestOutbox runs the outbox suite on PostgreSQL; each opener call is
// another replica, with its own pool, on one database.
func TestOutbox(t *testing.T) {
	outboxtest.Run(t, func(t *testing.T) outboxtest.Opener { return opener(pgtest.DSN(t)) })
}

// TestOutboxSurvivesServerCrash kills PostgreSQL while a dispatcher holds
// claims it never recorded: after the restart the same pool works again,
// enqueueing again the alerts whose outcome was unknown records nothing
// twice, and the dead dispatcher's claims are due once their lease ends.
func TestOutboxSurvivesServerCrash(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	ob := opener(srv.DatabaseDSN("postgres"))(t)
	now := time.Now()
	enqueue := func() {
		t.Helper()
		for i := range 10 {
			a := outboxtest.Alert(fmt.Sprintf("alert-%d", i))
			if err := ob.Enqueue(ctx, a, map[string]time.Time{"hook": now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	enqueue()
	if cs, err := ob.Claim(ctx, now, time.Minute, 5); err != nil || len(cs) != 5 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	srv.Kill()
	srv.Restart(t)

	enqueue()
	if cs, err := ob.Claim(ctx, now, 10*time.Minute, 100); err != nil || len(cs) != 5 {
		t.Fatalf("after the restart claimed %d, %v; want the 5 unclaimed", len(cs), err)
	}
	if cs, err := ob.Claim(ctx, now.Add(2*time.Minute), time.Minute, 100); err != nil || len(cs) != 5 {
		t.Fatalf("after the lease claimed %d, %v; want the dead dispatcher's 5", len(cs), err)
	}
	if ds, err := ob.List(ctx, "", 0); err != nil || len(ds) != 10 {
		t.Fatalf("%d deliveries, %v; want 10", len(ds), err)
	}
}

func BenchmarkCycle(b *testing.B) { outboxtest.BenchmarkCycle(b, opener(pgtest.DSN(b))) }
