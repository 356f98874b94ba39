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
	const lease = 300 * time.Millisecond
	if cs, err := ob.Claim(ctx, now, lease, 5); err != nil || len(cs) != 5 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	srv.Kill()
	srv.Restart(t)

	enqueue()
	seen := map[int64]int{}
	for deadline := time.Now().Add(10 * time.Second); len(seen) < 10 && time.Now().Before(deadline); {
		cs, err := ob.Claim(ctx, now, time.Minute, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			seen[c.ID]++
		}
		time.Sleep(lease / 10)
	}
	if len(seen) != 10 {
		t.Fatalf("%d deliveries claimed after the restart, want all 10", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %d claimed %d times within its lease", id, n)
		}
	}
	if ds, err := ob.List(ctx, "", 0); err != nil || len(ds) != 10 {
		t.Fatalf("%d deliveries, %v; want 10", len(ds), err)
	}
}

// TestLeaseHoldsAgainstSkewedClock: a replica whose clock is 10 minutes
// ahead finds due what the others do not yet, but cannot take a delivery
// another replica holds, for the lease runs on the database's clock.
func TestLeaseHoldsAgainstSkewedClock(t *testing.T) {
	ctx := context.Background()
	open := opener(pgtest.DSN(t))
	a, b := open(t), open(t)
	now := time.Now()
	for i := range 4 {
		due := now
		if i >= 2 {
			due = now.Add(5 * time.Minute) // digests, due later
		}
		if err := a.Enqueue(ctx, outboxtest.Alert(fmt.Sprintf("alert-%d", i)), map[string]time.Time{"hook": due}); err != nil {
			t.Fatal(err)
		}
	}
	if cs, err := a.Claim(ctx, now, 2*time.Minute, 100); err != nil || len(cs) != 2 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	cs, err := b.Claim(ctx, now.Add(10*time.Minute), 2*time.Minute, 100)
	if err != nil || len(cs) != 2 || cs[0].AlertID != "alert-2" || cs[1].AlertID != "alert-3" {
		t.Fatalf("the skewed replica claimed %+v, %v; want only alert-2 and alert-3", cs, err)
	}
}

func BenchmarkCycle(b *testing.B) { outboxtest.BenchmarkCycle(b, opener(pgtest.DSN(b))) }
