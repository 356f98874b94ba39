package policy

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/simdex/simdex/internal/lease"
)

// Lease runs the Scheduler's jobs on one replica of a fleet at a time,
// slot by slot: internal/lease's Postgres for a fleet, its Local for one
// process.
type Lease interface {
	// Now returns the time every replica agrees on.
	Now(ctx context.Context) (time.Time, error)
	// RunSlot runs fn for one scheduled slot of job, once across the
	// fleet; the replica that takes the lease over from a dead holder runs
	// the slot its holder died in.
	RunSlot(ctx context.Context, job string, slot time.Time, fn lease.Func) (ran bool, err error)
	// LastSlot returns the last slot of job recorded complete, or the
	// zero time, so that a slot missed while no replica ran is caught up.
	LastSlot(ctx context.Context, job string) (time.Time, error)
	// Run runs fn now if no replica holds the lease job, and reports
	// whether it ran.
	Run(ctx context.Context, job string, fn lease.Func) (ran bool, err error)
}

// The Scheduler's jobs, named as their leases.
const (
	// JobEvaluate is the retention evaluation with the sweep of every
	// active hold over the whole index (RefreshHolds).
	JobEvaluate = "policy/evaluate"
	// JobRepublish publishes the flags left unpublished.
	JobRepublish = "policy/republish"
)

// Scheduler runs the Engine's periodic jobs on the cron schedules of
// Config.Schedules: the evaluation (with the hold sweep) and the
// republishing of unpublished flags, each under its lease, so that in a
// fleet each scheduled run happens on one replica, once. A job still
// running when its next time comes is skipped, not doubled.
type Scheduler struct {
	e        *Engine
	lease    Lease
	evaluate cron.Schedule
	publish  cron.Schedule
	logger   *slog.Logger
}

// NewScheduler parses the schedules; a bad expression is an error naming
// its key and wrapping ErrBadSchedule. l is the lease of the jobs; nil
// means a lease of this process alone. It starts nothing.
func NewScheduler(e *Engine, s Schedules, l Lease) (*Scheduler, error) {
	if l == nil {
		l = lease.NewLocal()
	}
	sc := &Scheduler{e: e, lease: l, logger: e.logger.With("component", "policy/scheduler")}
	var err error
	if s.Evaluate != "" {
		if sc.evaluate, err = cron.ParseStandard(s.Evaluate); err != nil {
			return nil, fmt.Errorf("%w: policy.schedules.evaluate: %w: %q: %w", ErrInvalidConfig, ErrBadSchedule, s.Evaluate, err)
		}
	}
	if s.Republish != "" {
		if sc.publish, err = cron.ParseStandard(s.Republish); err != nil {
			return nil, fmt.Errorf("%w: policy.schedules.republish: %w: %q: %w", ErrInvalidConfig, ErrBadSchedule, s.Republish, err)
		}
	}
	return sc, nil
}

// Run runs the jobs until ctx is done, then waits for a job under way to
// finish (it sees ctx cancelled) and returns nil. Besides the scheduled
// jobs it resumes pending hold placements (Engine.ResumePlacements) at
// once and every PlacementPoll, each under its hold's lease.
func (s *Scheduler) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	every := func(job string, sched cron.Schedule, fn lease.Func) {
		if sched != nil {
			wg.Go(func() { _ = lease.Every(ctx, s.lease, job, sched, fn, s.logger) })
		}
	}
	wg.Go(func() { s.resumePlacements(ctx) })
	every(JobEvaluate, s.evaluate, func(ctx context.Context) error { s.Evaluate(ctx); return nil })
	every(JobRepublish, s.publish, func(ctx context.Context) error {
		if _, err := s.e.Republish(ctx); err != nil {
			s.logger.Warn("republishing flags, will retry on schedule", "err", err)
		}
		return nil
	})
	wg.Wait()
	return nil
}

// PlacementPoll is how often the Scheduler looks for pending hold
// placements that are due (their backoff passed).
const PlacementPoll = 5 * time.Second

// resumePlacements runs Engine.ResumePlacements now and every
// PlacementPoll until ctx is done, logging what it could not complete.
func (s *Scheduler) resumePlacements(ctx context.Context) {
	t := time.NewTicker(PlacementPoll)
	defer t.Stop()
	for {
		n, err := s.e.ResumePlacements(ctx)
		if n > 0 {
			s.logger.Info("pending hold placements completed", "holds", n)
		}
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("pending hold placements incomplete, will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// EvaluateNow runs an evaluation asked for by a person, under the lease of
// the scheduled ones, so that a fleet never runs two at once: while one
// runs on any replica it returns ErrEvaluationBusy. A dry run writes
// nothing and needs no lease.
func (s *Scheduler) EvaluateNow(ctx context.Context, dryRun bool) (Run, error) {
	if dryRun {
		return s.e.Evaluate(ctx, true)
	}
	var run Run
	ran, err := s.lease.Run(ctx, JobEvaluate, func(ctx context.Context) error {
		var err error
		run, err = s.e.Evaluate(ctx, false)
		return err
	})
	if err == nil && !ran {
		err = ErrEvaluationBusy
	}
	return run, err
}

// Evaluate runs one scheduled evaluation and logs its outcome.
func (s *Scheduler) Evaluate(ctx context.Context) {
	run, err := s.e.Evaluate(ctx, false)
	if err != nil {
		s.logger.Error("policy evaluation incomplete, the next run retries", "run", run.ID, "err", err)
		return
	}
	s.logger.Info("policy evaluation done", "run", run.ID, "documents", run.Documents, "due", run.Due,
		"flagged", run.Flagged, "hold_matches", run.HoldMatches, "duration", run.Ended.Sub(run.Started))
}
