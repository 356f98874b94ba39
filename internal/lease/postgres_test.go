package lease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/robfig/cron/v3"
	"go.uber.org/goleak"

	"github.com/simdex/simdex/internal/lease"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
)

// TestMain runs the tests on a shared PostgreSQL server, and fails them if
// a goroutine outlives them (a lease's watch, a Hold).
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// Environment of a replica process (TestReplicaProcess).
const (
	envReplicaDSN  = "SIMDEX_LEASE_REPLICA_DSN"
	envReplicaMode = "SIMDEX_LEASE_REPLICA_MODE"
)

// slot is the scheduled slot the slot tests run.
var slot = time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)

// replica opens a pool on dsn (one replica of the fleet) and its lease.
func replica(t testing.TB, dsn string) (*pgxpool.Pool, *lease.Postgres) {
	t.Helper()
	return replicaWith(t, dsn, nil)
}

// replicaWith is replica with the lease's metrics registered in reg.
func replicaWith(t testing.TB, dsn string, reg prometheus.Registerer) (*pgxpool.Pool, *lease.Postgres) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgdb.Open(ctx, dsn, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	l, err := lease.NewPostgres(ctx, pool, lease.PostgresOptions{PingInterval: 200 * time.Millisecond, PingTimeout: time.Second, RetryPause: 100 * time.Millisecond, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS attempts (who text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())"); err != nil {
		t.Fatal(err)
	}
	return pool, l
}

// within polls cond every 20 ms until it holds or d passes.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRunOneHolderOfTwo(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	_, a := replica(t, dsn)
	_, b := replica(t, dsn)
	inA, release := make(chan struct{}), make(chan struct{})
	doneA := make(chan error, 1)
	go func() {
		ran, err := a.Run(ctx, "reconcile", func(context.Context) error { close(inA); <-release; return nil })
		if !ran && err == nil {
			err = errors.New("A did not run")
		}
		doneA <- err
	}()
	<-inA
	ran, err := b.Run(ctx, "reconcile", func(context.Context) error { return errors.New("B ran while A held the lease") })
	if ran || err != nil {
		t.Fatalf("B: ran %v, %v; want refused", ran, err)
	}
	if ran, err := b.Run(ctx, "evaluate", func(context.Context) error { return nil }); !ran || err != nil {
		t.Fatalf("B on another lease: ran %v, %v", ran, err)
	}
	close(release)
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if ran, err := b.Run(ctx, "reconcile", func(context.Context) error { return nil }); !ran || err != nil {
		t.Fatalf("B after A released: ran %v, %v", ran, err)
	}
}

// TestHoldTakenOverWhenSessionTerminated: the holder's session is ended
// by the server; its job sees ErrLost and the waiting replica runs.
func TestHoldTakenOverWhenSessionTerminated(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dsn := pgtest.DSN(t)
	reg := prometheus.NewRegistry()
	pool, a := replicaWith(t, dsn, reg)
	_, b := replica(t, dsn)
	var lostA atomic.Value
	aRunning, bRunning := make(chan struct{}), make(chan struct{})
	holdA := make(chan error, 1)
	go func() {
		first := true
		holdA <- a.Hold(ctx, "dispatch", func(ctx context.Context) error {
			if first {
				first = false
				close(aRunning)
				<-ctx.Done()
				lostA.Store(context.Cause(ctx))
			}
			<-ctx.Done()
			return nil
		})
	}()
	<-aRunning
	holdB := make(chan error, 1)
	go func() {
		holdB <- b.Hold(ctx, "dispatch", func(ctx context.Context) error { close(bRunning); <-ctx.Done(); return nil })
	}()
	pid := holderPID(t, pool, "dispatch")
	start := time.Now()
	if _, err := pool.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bRunning:
	case <-time.After(5 * time.Second):
		t.Fatal("B did not take the lease over within 5 s")
	}
	within(t, 5*time.Second, "A's job cancelled", func() bool { return lostA.Load() != nil })
	if cause, _ := lostA.Load().(error); !errors.Is(cause, lease.ErrLost) {
		t.Errorf("A's job ended by %v, want ErrLost", cause)
	}
	t.Logf("B took over %s after A's session was terminated", time.Since(start).Round(time.Millisecond))
	within(t, 5*time.Second, "A's lease released", func() bool {
		return testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP simdex_lease_held Whether this replica holds the lease (1) or not (0).
# TYPE simdex_lease_held gauge
simdex_lease_held{lease="dispatch"} 0
# HELP simdex_lease_lost_total Leases lost while held: the session ended or stopped answering.
# TYPE simdex_lease_lost_total counter
simdex_lease_lost_total{lease="dispatch"} 1
`)) == nil
	})
	cancel()
	for _, ch := range []chan error{holdA, holdB} {
		if err := <-ch; err != nil {
			t.Error(err)
		}
	}
}

// holderPID returns the backend process holding lease name.
func holderPID(t *testing.T, pool *pgxpool.Pool, name string) int {
	t.Helper()
	var pid int
	err := pool.QueryRow(context.Background(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND classid::bigint = $1 AND objid::bigint = (hashtext($2)::bigint & 4294967295) AND objsubid = 2`, 0x53444c, name).Scan(&pid)
	if err != nil {
		t.Fatalf("find the holder of %s: %v", name, err)
	}
	return pid
}

// startReplica runs TestReplicaProcess in a child process in mode and
// waits until it has recorded its attempt; t's end kills it.
func startReplica(t *testing.T, pool *pgxpool.Pool, dsn, mode string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envReplicaDSN+"="+dsn, envReplicaMode+"="+mode)
	cmd.Stderr, cmd.Stdout = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	within(t, 30*time.Second, "the replica process holding the lease", func() bool {
		return count(t, pool, "SELECT count(*) FROM attempts WHERE who = 'child'") > 0
	})
	return cmd
}

// TestReplicaProcess is the replica of the kill tests, run by them in a
// child process; run directly it does nothing. It takes the lease, records
// its attempt and blocks until it is killed.
func TestReplicaProcess(t *testing.T) {
	dsn := os.Getenv(envReplicaDSN)
	if dsn == "" {
		return
	}
	ctx := context.Background()
	pool, l := replica(t, dsn)
	block := func(ctx context.Context) error {
		if _, err := pool.Exec(ctx, "INSERT INTO attempts (who) VALUES ('child')"); err != nil {
			return err
		}
		select {} // until killed
	}
	var err error
	switch os.Getenv(envReplicaMode) {
	case "hold":
		err = l.Hold(ctx, "backfill", block)
	case "slot":
		_, err = l.RunSlot(ctx, "reconcile/s3:docs", slot, block)
	case "every":
		err = lease.Every(ctx, l, "reconcile/s3:docs", hourly(t), block, discard)
	}
	t.Fatalf("replica returned: %v", err)
}

func TestHoldTakenOverWhenHolderKilled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dsn := pgtest.DSN(t)
	pool, b := replica(t, dsn)
	child := startReplica(t, pool, dsn, "hold")
	bRunning := make(chan struct{})
	holdB := make(chan error, 1)
	go func() {
		holdB <- b.Hold(ctx, "backfill", func(ctx context.Context) error { close(bRunning); return nil })
	}()
	select {
	case <-bRunning:
		t.Fatal("B ran while the child held the lease")
	case <-time.After(300 * time.Millisecond):
	}
	start := time.Now()
	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	select {
	case <-bRunning:
	case <-time.After(5 * time.Second):
		t.Fatal("B did not take the lease over within 5 s of the holder's kill -9")
	}
	t.Logf("B took over %s after kill -9", time.Since(start).Round(time.Millisecond))
	if err := <-holdB; err != nil {
		t.Fatal(err)
	}
}

// TestSlotCompletesOnceAfterHolderKilled is the leader-lease test of issue
// 30: the replica running a reconciliation slot is killed mid-run; the
// replica waiting for the lease takes it over, runs the slot and records
// it complete once; later attempts at the slot skip it.
func TestSlotCompletesOnceAfterHolderKilled(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	pool, b := replica(t, dsn)
	child := startReplica(t, pool, dsn, "slot")
	job := "reconcile/s3:docs"
	ranB := make(chan error, 1)
	go func() {
		ran, err := b.RunSlot(ctx, job, slot, func(ctx context.Context) error {
			_, err := pool.Exec(ctx, "INSERT INTO attempts (who) VALUES ('b')")
			return err
		})
		if err == nil && !ran {
			err = errors.New("B did not run the slot its holder died in")
		}
		ranB <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if n := count(t, pool, "SELECT count(*) FROM attempts WHERE who = 'b'"); n != 0 {
		t.Fatal("B ran the slot while the child held the lease")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ranB:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B did not run the slot within 10 s of the holder's kill -9")
	}
	if n := count(t, pool, "SELECT count(*) FROM lease_runs WHERE job = $1 AND slot = $2", job, slot); n != 1 {
		t.Fatalf("slot recorded complete %d times, want 1", n)
	}
	for _, who := range []string{"child", "b"} {
		if n := count(t, pool, "SELECT count(*) FROM attempts WHERE who = $1", who); n != 1 {
			t.Errorf("%s attempted the slot %d times, want 1", who, n)
		}
	}
	_, c := replica(t, dsn)
	ran, err := c.RunSlot(ctx, job, slot, func(context.Context) error { return errors.New("slot ran twice") })
	if ran || err != nil {
		t.Fatalf("a third replica: ran %v, %v; want the slot skipped", ran, err)
	}
}

func hourly(t testing.TB) cron.Schedule {
	t.Helper()
	sched, err := cron.ParseStandard("0 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	return sched
}

// TestEveryRunCompletesOnceAfterHolderKilled is the leader-lease test of
// issue 30 as the daemon runs reconciliation, through Every: the replica
// process running this hour's reconciliation (missed, so run at its
// start) is killed mid-run; another replica starting meanwhile waits for
// the lease, takes it over, runs the slot, and the slot completes once.
func TestEveryRunCompletesOnceAfterHolderKilled(t *testing.T) {
	dsn := pgtest.DSN(t)
	pool, b := replica(t, dsn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hour time.Time
	if err := pool.QueryRow(ctx, "SELECT date_trunc('hour', clock_timestamp())").Scan(&hour); err != nil {
		t.Fatal(err)
	}
	job := "reconcile/s3:docs"
	if _, err := pool.Exec(ctx, "INSERT INTO lease_runs (job, slot, holder) VALUES ($1, $2, 'earlier')", job, hour.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	child := startReplica(t, pool, dsn, "every")
	done := make(chan error, 1)
	go func() {
		done <- lease.Every(ctx, b, job, hourly(t), func(ctx context.Context) error {
			_, err := pool.Exec(ctx, "INSERT INTO attempts (who) VALUES ('b')")
			return err
		}, discard)
	}()
	time.Sleep(300 * time.Millisecond)
	if n := count(t, pool, "SELECT count(*) FROM attempts WHERE who = 'b'"); n != 0 {
		t.Fatal("B ran the slot while the child held the lease")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	within(t, 10*time.Second, "the slot completed after the holder's kill -9", func() bool {
		return count(t, pool, "SELECT count(*) FROM lease_runs WHERE job = $1 AND slot = $2", job, hour) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"child", "b"} {
		if n := count(t, pool, "SELECT count(*) FROM attempts WHERE who = $1", who); n != 1 {
			t.Errorf("%s ran the reconciliation %d times, want 1", who, n)
		}
	}
}

// TestEveryTwoReplicasEachSlotOnce: two replicas run the same schedule;
// every slot runs once, on one of them.
func TestEveryTwoReplicasEachSlotOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	pool, a := replica(t, dsn)
	_, b := replica(t, dsn)
	sched, err := cron.ParseStandard("@every 1s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int64
	fn := func(ctx context.Context) error {
		runs.Add(1)
		_, err := pool.Exec(ctx, "INSERT INTO attempts (who) VALUES ('any')")
		return err
	}
	done := make(chan error, 2)
	for _, l := range []*lease.Postgres{a, b} {
		go func() { done <- lease.Every(ctx, l, "policy/evaluate", sched, fn, discard) }()
	}
	within(t, 10*time.Second, "three slots", func() bool { return runs.Load() >= 3 })
	cancel()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// Two runs of one slot would follow each other within milliseconds;
	// the slots are a second apart.
	if n := count(t, pool, `SELECT count(*) FROM (SELECT at - lag(at) OVER (ORDER BY at) AS gap FROM attempts) g
		WHERE gap < interval '500 milliseconds'`); n != 0 {
		t.Fatalf("%d runs followed the one before within 500 ms: a slot ran twice", n)
	}
	// The run under way at cancel may be left unrecorded, for the next
	// holder to run again.
	if n := int64(count(t, pool, "SELECT count(*) FROM lease_runs WHERE job = 'policy/evaluate'")); n != runs.Load() && n != runs.Load()-1 {
		t.Fatalf("%d runs, %d slots recorded", runs.Load(), n)
	}
}

func TestNewPostgresRefusesKeepAliveBelowPings(t *testing.T) {
	pool, _ := replica(t, pgtest.DSN(t))
	_, err := lease.NewPostgres(context.Background(), pool, lease.PostgresOptions{KeepAlive: 2 * time.Second, PingInterval: time.Second, PingTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "KeepAlive") {
		t.Fatalf("KeepAlive = PingInterval+PingTimeout accepted: %v", err)
	}
}

// TestRunSlotErrorRecorded: a failed run completes its slot, with its
// error; a run cut short by its context does not.
func TestRunSlotErrorRecorded(t *testing.T) {
	dsn := pgtest.DSN(t)
	pool, a := replica(t, dsn)
	boom := errors.New("bucket unreachable")
	ran, err := a.RunSlot(context.Background(), "j", slot, func(context.Context) error { return boom })
	if !ran || !errors.Is(err, boom) {
		t.Fatalf("ran %v, %v", ran, err)
	}
	if n := count(t, pool, "SELECT count(*) FROM lease_runs WHERE job = 'j' AND error = $1", boom.Error()); n != 1 {
		t.Fatalf("failed slot recorded %d times", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	next := slot.Add(time.Hour)
	ran, _ = a.RunSlot(ctx, "j", next, func(context.Context) error { cancel(); return context.Canceled })
	if !ran {
		t.Fatal("did not run")
	}
	if n := count(t, pool, "SELECT count(*) FROM lease_runs WHERE job = 'j' AND slot = $1", next); n != 0 {
		t.Fatal("a slot cut short was recorded complete")
	}
}

// BenchmarkRunSlot measures what a scheduled run costs beyond its job:
// a session from the pool, the lock, the completion check and record.
func BenchmarkRunSlot(b *testing.B) {
	_, l := replica(b, pgtest.DSN(b))
	ctx := context.Background()
	s := slot
	nop := func(context.Context) error { return nil }
	for b.Loop() {
		s = s.Add(time.Minute)
		if ran, err := l.RunSlot(ctx, "bench", s, nop); !ran || err != nil {
			b.Fatal(ran, err)
		}
	}
}

// BenchmarkRunRefused measures a replica's turn refused while another
// holds the lease.
func BenchmarkRunRefused(b *testing.B) {
	dsn := pgtest.DSN(b)
	_, holder := replica(b, dsn)
	_, l := replica(b, dsn)
	ctx, cancel := context.WithCancel(context.Background())
	held, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- holder.Hold(ctx, "bench", func(ctx context.Context) error { close(held); <-ctx.Done(); return nil })
	}()
	<-held
	for b.Loop() {
		if ran, err := l.Run(context.Background(), "bench", func(context.Context) error { return nil }); ran || err != nil {
			b.Fatal(ran, err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// TestEveryCatchesUpMissedSlot: a replica starting after slots went by
// with no replica running them runs the latest missed slot at once, once.
func TestEveryCatchesUpMissedSlot(t *testing.T) {
	dsn := pgtest.DSN(t)
	pool, a := replica(t, dsn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hour time.Time
	if err := pool.QueryRow(ctx, "SELECT date_trunc('hour', clock_timestamp())").Scan(&hour); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO lease_runs (job, slot, holder) VALUES ('hourly', $1, 'gone')", hour.Add(-3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	sched, err := cron.ParseStandard("0 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- lease.Every(ctx, a, "hourly", sched, func(context.Context) error { runs.Add(1); return nil }, discard)
	}()
	within(t, 10*time.Second, "the missed slot run", func() bool {
		return count(t, pool, "SELECT count(*) FROM lease_runs WHERE job = 'hourly' AND slot = $1", hour) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 {
		t.Fatalf("ran %d times for three missed slots, want once (the latest)", runs.Load())
	}
}
