package policy

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/robfig/cron/v3"
)

// Scheduler runs the Engine's periodic jobs on the cron schedules of
// Config.Schedules: the evaluation (with the hold sweep) and the
// republishing of unpublished flags. A job still running when its next
// time comes is skipped, not doubled.
type Scheduler struct {
	e        *Engine
	evaluate cron.Schedule
	publish  cron.Schedule
	logger   *slog.Logger
}

// NewScheduler parses the schedules; a bad expression is an error naming
// its key and wrapping ErrBadSchedule. It starts nothing.
func NewScheduler(e *Engine, s Schedules) (*Scheduler, error) {
	sc := &Scheduler{e: e, logger: e.logger.With("component", "policy/scheduler")}
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
// finish (it sees ctx cancelled) and returns nil.
func (s *Scheduler) Run(ctx context.Context) error {
	c := cron.New(cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	if s.evaluate != nil {
		c.Schedule(s.evaluate, cron.FuncJob(func() { s.Evaluate(ctx) }))
	}
	if s.publish != nil {
		c.Schedule(s.publish, cron.FuncJob(func() {
			if _, err := s.e.Republish(ctx); err != nil {
				s.logger.Warn("republishing flags, will retry on schedule", "err", err)
			}
		}))
	}
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	return nil
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
