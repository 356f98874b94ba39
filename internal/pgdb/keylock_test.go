package pgdb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
)

func TestKeyLocksExcludeAcrossPools(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	pa, err := pgdb.Open(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pa.Close()
	pb, err := pgdb.Open(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	a, b := pgdb.NewKeyLocks(pa, "keys"), pgdb.NewKeyLocks(pb, "keys")
	unlock, err := a.Lock(ctx, "bucket/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	// Another key is free.
	u2, err := b.Lock(ctx, "bucket/other.pdf")
	if err != nil {
		t.Fatal(err)
	}
	u2()
	// The same key waits: a bounded wait fails, then succeeds once freed.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = b.Lock(short, "bucket/report.pdf")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) && err == nil {
		t.Fatalf("second holder got the lock: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := b.Lock(ctx, "bucket/report.pdf")
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("lock granted while held: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestKeyLockFreedWhenHolderSessionDies(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	pa, err := pgdb.Open(ctx, dsn, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pa.Close()
	pb, err := pgdb.Open(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	unlock, err := pgdb.NewKeyLocks(pa, "keys").Lock(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock() // runs on a dead session: must not panic or hang
	// Kill the holder's session, as a crashed replica's would end.
	if _, err := pb.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()"); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u, err := pgdb.NewKeyLocks(pb, "keys").Lock(wait, "k")
	if err != nil {
		t.Fatalf("lock of a dead holder not freed: %v", err)
	}
	u()
}
