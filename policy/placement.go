package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/simdex/simdex/index"
)

// Placement backoff: the first failed attempt is retried after
// placementRetry, each next one after twice as long, up to
// placementRetryMax.
const (
	placementRetry    = 2 * time.Second
	placementRetryMax = 5 * time.Minute
)

// placementBackoff is the pause after the attempts-th failed attempt.
func placementBackoff(attempts int) time.Duration {
	d := placementRetry
	for i := 1; i < attempts && d < placementRetryMax; i++ {
		d *= 2
	}
	return min(d, placementRetryMax)
}

// errPlacementBusy reports a placement another process holds the lease of.
var errPlacementBusy = errors.New("another process is placing it")

// placementLease names the lease under which one process places matter.
func placementLease(matter string) string { return "policy/place/" + matter }

// settleTimeout bounds the recording of a placement's outcome, which runs
// even when the placement's context has ended.
const settleTimeout = 10 * time.Second

// ResumePlacements places every hold whose placement is pending and due
// (its next attempt's time passed), each under the lease of its matter:
// a hold another process is placing is skipped. It is what start-up and
// the Scheduler run, on any replica, so that a placement cut short (a
// crash, a lost store, an enforcement error) is completed. It returns how
// many it completed.
func (e *Engine) ResumePlacements(ctx context.Context) (int, error) {
	ps, err := e.st.Placements(ctx)
	if err != nil {
		return 0, fmt.Errorf("load pending placements: %w", err)
	}
	e.pendingGauge.Set(float64(len(ps)))
	done := 0
	var errs []error
	for _, pp := range ps {
		if pp.Next.After(e.now()) {
			continue
		}
		ok, err := e.resume(ctx, pp)
		if err != nil {
			errs = append(errs, fmt.Errorf("resume placement of hold %s: %w", pp.Matter, err))
		}
		if ok {
			done++
		}
	}
	e.pendingGauge.Sub(float64(done))
	return done, errors.Join(errs...)
}

// resume places the hold of pp under its lease and reports whether its
// placement is complete; another process placing it is no error. A
// placement left behind by a release (from code older than placements,
// which does not end it) is ended.
func (e *Engine) resume(ctx context.Context, pp PendingPlacement) (bool, error) {
	h, err := e.st.Hold(ctx, pp.Matter)
	if err != nil {
		return false, err
	}
	if h.Status == HoldReleased {
		_, err := e.st.FinishPlacement(ctx, pp.Matter, AuditEntry{Time: e.now(), Actor: "placement", Action: AuditHoldPlaced,
			Object: "hold:" + pp.Matter, Reason: "hold released before its placement completed"})
		return err == nil, err
	}
	h.Status, h.Placement = HoldPlacing, &pp
	h, _, err = e.placeNow(ctx, h, nil, "placement")
	if errors.Is(err, errPlacementBusy) {
		return false, nil
	}
	return err == nil && h.Status != HoldPlacing, err
}

// placeNow places h, whose placement may be pending, under its lease, from
// seeds (nil: its seeds in the store and its selectors resolved anew),
// and returns it as it then is. When another process holds the lease it
// places nothing and returns ErrPlacementPending; every failure while the
// hold exists wraps ErrPlacementPending.
func (e *Engine) placeNow(ctx context.Context, h Hold, seeds []*index.Record, actor string) (Hold, Placement, error) {
	p := Placement{Matter: h.Matter, Seeds: len(seeds)}
	if h.Status != HoldPlacing {
		return h, p, nil
	}
	ran, err := e.lease.Run(ctx, placementLease(h.Matter), func(ctx context.Context) error {
		var err error
		p, err = e.placePending(ctx, h, seeds, actor)
		return err
	})
	switch {
	case err == nil && !ran:
		return h, p, fmt.Errorf("place hold %s: %w: %w", h.Matter, ErrPlacementPending, errPlacementBusy)
	case err != nil && !errors.Is(err, ErrPlacementPending):
		return h, p, fmt.Errorf("place hold %s: %w: %w", h.Matter, ErrPlacementPending, err)
	case err != nil:
		return h, p, fmt.Errorf("place hold %s: %w", h.Matter, err)
	}
	if now, err := e.Hold(ctx, h.Matter); err == nil {
		return now, p, nil
	}
	h.Status, h.Placement, h.Held = HoldActive, nil, h.Held+p.Held // placed; the reload may follow
	return h, p, nil
}

// placePending places h if its placement is still pending (another
// process may have completed it) and records the outcome (settle).
func (e *Engine) placePending(ctx context.Context, h Hold, seeds []*index.Record, actor string) (Placement, error) {
	p := Placement{Matter: h.Matter, Seeds: len(seeds)}
	pending, err := e.pendingByMatter(ctx)
	if err != nil {
		return p, err
	}
	pp, ok := pending[h.Matter]
	if !ok {
		return p, nil
	}
	recorded := func(ctx context.Context) error {
		pp.Recorded = true
		return e.st.UpdatePlacement(ctx, pp)
	}
	if seeds == nil {
		p, err = e.refresh(ctx, h, actor, recorded)
	} else {
		p, err = e.place(ctx, h, seeds, actor, recorded)
	}
	return p, e.settle(ctx, pp, p, err, actor)
}

// settle records the outcome of an attempt at pp: complete when it
// failed in nothing (err nil, no enforcement error), else the attempt,
// its error and the next attempt's time, logged. It returns the failure
// wrapped in ErrPlacementPending.
func (e *Engine) settle(ctx context.Context, pp PendingPlacement, p Placement, err error, actor string) error {
	switch {
	case err != nil:
	case len(p.EnforceErrors) > 0:
		err = fmt.Errorf("turn legal holds on: %d objects failed, first %s", len(p.EnforceErrors), p.EnforceErrors[0])
	case ctx.Err() != nil: // enforcement stops handing out objects once ctx ends
		err = fmt.Errorf("placement cut short: %w", context.Cause(ctx))
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if err == nil {
		a := AuditEntry{Time: e.now(), Actor: actor, Action: AuditHoldPlaced, Object: "hold:" + pp.Matter,
			Details: details(map[string]any{"held": p.Held, "flagged": p.Flagged, "enforced": p.Enforced, "unenforceable": len(p.Unenforceable)})}
		_, ferr := e.st.FinishPlacement(sctx, pp.Matter, a)
		if ferr == nil {
			e.logger.Info("hold placed", "hold_id", pp.Matter, "seeds", p.Seeds, "held", p.Held, "flagged", p.Flagged, "enforced", p.Enforced)
			return nil
		}
		err = fmt.Errorf("record placement complete: %w", ferr)
	}
	e.placeFailures.Inc()
	pp.Attempts++
	pp.LastError, pp.Next = err.Error(), e.now().Add(placementBackoff(pp.Attempts))
	if uerr := e.st.UpdatePlacement(sctx, pp); uerr != nil {
		e.logger.Error("recording a failed placement attempt; retrying at the next pass", "hold_id", pp.Matter, "err", uerr)
	}
	e.logger.Warn("hold placement incomplete, will retry", "hold_id", pp.Matter, "attempt", pp.Attempts,
		"next_attempt", pp.Next, "recorded", pp.Recorded, "err", err)
	return fmt.Errorf("%w: %w", ErrPlacementPending, err)
}

// pendingByMatter returns the pending placements by matter.
func (e *Engine) pendingByMatter(ctx context.Context) (map[string]PendingPlacement, error) {
	ps, err := e.st.Placements(ctx)
	if err != nil {
		return nil, fmt.Errorf("load pending placements: %w", err)
	}
	out := make(map[string]PendingPlacement, len(ps))
	for _, p := range ps {
		out[p.Matter] = p
	}
	return out, nil
}

// unrecorded returns the matters whose placements are pending and not yet
// Recorded: until they are, any document may turn out to be held.
func (e *Engine) unrecorded(ctx context.Context) ([]string, error) {
	ps, err := e.st.Placements(ctx)
	if err != nil {
		return nil, fmt.Errorf("load pending placements: %w", err)
	}
	var out []string
	for _, p := range ps {
		if !p.Recorded {
			out = append(out, p.Matter)
		}
	}
	return out, nil
}

// placing returns h reported placing when its placement is pending.
func placing(h Hold, pending map[string]PendingPlacement) Hold {
	if pp, ok := pending[h.Matter]; ok && h.Status == HoldActive {
		h.Status, h.Placement = HoldPlacing, &pp
	}
	return h
}

// addUnrecorded appends to matters each of placing not in it yet.
func addUnrecorded(matters, placing []string) []string {
	for _, m := range placing {
		if !slices.Contains(matters, m) {
			matters = append(matters, m)
		}
	}
	return matters
}
