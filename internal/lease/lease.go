package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ErrLost is the cause of a job's context when its holder lost the lease
// (its session ended or stopped answering); Run, Hold and RunSlot wrap it.
var ErrLost = errors.New("lease lost")

// Func is a job run under a lease. Its context is cancelled when the lease
// is lost (context.Cause is then ErrLost) or the caller's context is done;
// the job must then return promptly.
type Func = func(ctx context.Context) error

// Schedule is when a periodic job runs; robfig/cron's Schedule satisfies
// it.
type Schedule interface {
	// Next returns the first time of the schedule after t.
	Next(t time.Time) time.Time
}

// Slots is what Every needs of a lease: the fleet's clock and slot runs.
type Slots interface {
	// Now returns the time every replica agrees on.
	Now(ctx context.Context) (time.Time, error)
	// RunSlot runs fn for one slot of job, once across the fleet.
	RunSlot(ctx context.Context, job string, slot time.Time, fn Func) (ran bool, err error)
	// LastSlot returns the last slot of job recorded complete, or the
	// zero time.
	LastSlot(ctx context.Context, job string) (time.Time, error)
}

// retryPause is Every's pause after a failure to read the clock or to
// take a slot's lease (a variable for tests).
var retryPause = 5 * time.Second

// Every runs fn at every time of sched under the lease named job, slot by
// slot, until ctx is done; then it returns nil once a run under way has
// returned. A slot still running when the next comes is not doubled: the
// next slot is the first after the run ended. Failures are logged; the
// next slot runs anyway.
//
// At start, a slot missed since the last one recorded complete (every
// replica was down, or the one running it died with no other waiting) is
// run at once: the latest such slot, once, whatever the number missed.
func Every(ctx context.Context, s Slots, job string, sched Schedule, fn Func, log *slog.Logger) error {
	last := catchUp(ctx, s, job, sched, fn, log)
	for ctx.Err() == nil {
		now, err := s.Now(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("read the fleet's clock, will retry", "job", job, "err", err, "in", retryPause)
				sleep(ctx, retryPause)
			}
			continue
		}
		slot := sched.Next(later(now, last))
		if slot.IsZero() {
			log.Warn("schedule has no next time, the job will not run again", "job", job)
			break
		}
		if !sleep(ctx, slot.Sub(now)) {
			break
		}
		last = slot
		runSlot(ctx, s, job, slot, sched.Next(slot).Sub(slot), fn, log)
	}
	return nil
}

// runSlot runs one slot of job. When the lease cannot be had (the
// database is unreachable), it tries again every retryPause for up to one
// period of the schedule, measured on the local monotonic clock.
func runSlot(ctx context.Context, s Slots, job string, slot time.Time, period time.Duration, fn Func, log *slog.Logger) {
	giveUp := time.Now().Add(period)
	for {
		ran, err := s.RunSlot(ctx, job, slot, fn)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !ran && time.Now().Add(retryPause).Before(giveUp):
			log.Warn("periodic job could not take its lease, will retry", "job", job, "slot", slot, "err", err, "in", retryPause)
			sleep(ctx, retryPause)
			continue
		case err != nil:
			log.Warn("periodic job failed, the next slot runs anyway", "job", job, "slot", slot, "err", err)
		case !ran:
			log.Debug("periodic job slot run by another replica", "job", job, "slot", slot)
		}
		return
	}
}

// maxMissed bounds the slots catchUp steps through to find the latest.
const maxMissed = 1 << 20

// catchUp runs the latest slot of sched missed since job's last completed
// slot, if any, and returns the slot it ran (or the zero time).
func catchUp(ctx context.Context, s Slots, job string, sched Schedule, fn Func, log *slog.Logger) time.Time {
	last, err := s.LastSlot(ctx, job)
	if err != nil || last.IsZero() {
		if err != nil && ctx.Err() == nil {
			log.Warn("read the last completed slot, not catching up", "job", job, "err", err)
		}
		return time.Time{}
	}
	now, err := s.Now(ctx)
	if err != nil {
		return time.Time{}
	}
	missed := time.Time{}
	for next, i := sched.Next(last), 0; !next.IsZero() && !next.After(now) && i < maxMissed; next, i = sched.Next(next), i+1 {
		missed = next
	}
	if missed.IsZero() {
		return time.Time{}
	}
	log.Info("a slot is due since the last completed one; running it unless another replica has", "job", job, "slot", missed, "last", last)
	runSlot(ctx, s, job, missed, sched.Next(missed).Sub(missed), fn, log)
	return missed
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleep waits for d or ctx, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// lostError joins the job's error with the loss of the lease, if it was
// lost.
func lostError(ctx context.Context, name string, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrLost) {
		if err == nil || errors.Is(err, context.Canceled) {
			return fmt.Errorf("lease %s: %w", name, cause)
		}
		return fmt.Errorf("lease %s: %w (the job returned: %w)", name, cause, err)
	}
	return err
}
