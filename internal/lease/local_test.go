package lease_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/simdex/simdex/internal/lease"
)

var discard = slog.New(slog.DiscardHandler)

func TestLocalRunSkipsWhileHeld(t *testing.T) {
	ctx := context.Background()
	l := lease.NewLocal()
	in, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_, _ = l.Run(ctx, "x", func(context.Context) error { close(in); <-release; return nil })
	}()
	<-in
	if ran, err := l.Run(ctx, "x", func(context.Context) error { return errors.New("ran twice") }); ran || err != nil {
		t.Fatalf("ran %v, %v while held", ran, err)
	}
	close(release)
	<-done
	if ran, err := l.Run(ctx, "x", func(context.Context) error { return nil }); !ran || err != nil {
		t.Fatalf("ran %v, %v after release", ran, err)
	}
}

func TestLocalRunSlotOnce(t *testing.T) {
	ctx := context.Background()
	l := lease.NewLocal()
	s := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var n int
	fn := func(context.Context) error { n++; return nil }
	for _, at := range []time.Time{s, s, s.Add(-time.Minute), s.Add(time.Minute)} {
		if _, err := l.RunSlot(ctx, "j", at, fn); err != nil {
			t.Fatal(err)
		}
	}
	if n != 2 {
		t.Fatalf("ran %d times, want 2 (slot, then a later slot)", n)
	}
}

// TestEveryUsesTheLeaseClock: a replica whose clock is 10 minutes ahead
// computes its slots from that clock and waits for them with timers, so
// it runs on schedule, neither 10 minutes late nor in a burst.
func TestEveryUsesTheLeaseClock(t *testing.T) {
	for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		l := lease.NewLocalClock(func() time.Time { return time.Now().Add(skew) })
		sched, err := cron.ParseStandard("@every 1s")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var runs atomic.Int64
		done := make(chan error)
		start := time.Now()
		go func() {
			done <- lease.Every(ctx, l, "j", sched, func(context.Context) error { runs.Add(1); return nil }, discard)
		}()
		for runs.Load() < 2 && time.Since(start) < 5*time.Second {
			time.Sleep(10 * time.Millisecond)
		}
		elapsed := time.Since(start)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if runs.Load() < 2 || elapsed < time.Second {
			t.Fatalf("skew %s: %d runs in %s, want 2 a second apart", skew, runs.Load(), elapsed)
		}
	}
}

func TestLocalHoldWaitsAndStopsWithContext(t *testing.T) {
	l := lease.NewLocal()
	in, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- l.Hold(context.Background(), "x", func(context.Context) error { close(in); <-release; return nil })
	}()
	<-in
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := l.Hold(ctx, "x", func(context.Context) error { return errors.New("ran while held") }); err != nil {
		t.Fatalf("Hold with its context done while waiting: %v, want nil", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := l.Hold(context.Background(), "x", func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Hold returned %v, want the job's error", err)
	}
}

// flakyLease refuses its first failures RunSlot calls, as a lease whose
// database is unreachable.
type flakyLease struct {
	*lease.Local
	failures atomic.Int64
}

func (f *flakyLease) RunSlot(ctx context.Context, job string, slot time.Time, fn lease.Func) (bool, error) {
	if f.failures.Add(-1) >= 0 {
		return false, errors.New("database unreachable")
	}
	return f.Local.RunSlot(ctx, job, slot, fn)
}

// TestEveryRetriesASlotItsLeaseRefused: a slot whose lease cannot be had
// is tried again, not skipped.
func TestEveryRetriesASlotItsLeaseRefused(t *testing.T) {
	defer lease.SetRetryPause(10 * time.Millisecond)()
	l := &flakyLease{Local: lease.NewLocal()}
	l.failures.Store(3)
	sched, err := cron.ParseStandard("@every 1h")
	if err != nil {
		t.Fatal(err)
	}
	// Every starts after a slot completed an hour and a second ago, so it
	// catches that slot up at once.
	if _, err := l.Local.RunSlot(context.Background(), "j", time.Now().Add(-time.Hour-time.Second), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int64
	done := make(chan error)
	go func() {
		done <- lease.Every(ctx, l, "j", sched, func(context.Context) error { runs.Add(1); return nil }, discard)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || l.failures.Load() > 0 {
		t.Fatalf("%d runs, %d refusals left; want the slot run after 3 refusals", runs.Load(), l.failures.Load())
	}
}

// never is a schedule with no next time, as cron's for 30 February.
type never struct{}

func (never) Next(time.Time) time.Time { return time.Time{} }

func TestEveryStopsOnAScheduleWithoutNextTime(t *testing.T) {
	l := lease.NewLocal()
	if _, err := l.RunSlot(context.Background(), "j", time.Now().Add(-time.Hour), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		done <- lease.Every(context.Background(), l, "j", never{}, func(context.Context) error { return errors.New("ran") }, discard)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Every kept going on a schedule with no next time")
	}
}
