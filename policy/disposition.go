package policy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Approve records a reviewer's approval of an open flag. For a deletable
// disposition flag it allows Execute. reason and actor are required
// (ErrReasonRequired); a flag not open is ErrFlagState.
func (e *Engine) Approve(ctx context.Context, id int64, actor, reason string) (Flag, error) {
	return e.decide(ctx, id, actor, reason, []FlagStatus{StatusOpen}, StatusApproved, AuditFlagApprove)
}

// Dismiss closes an open or approved flag without action. reason and
// actor are required.
func (e *Engine) Dismiss(ctx context.Context, id int64, actor, reason string) (Flag, error) {
	return e.decide(ctx, id, actor, reason, []FlagStatus{StatusOpen, StatusApproved}, StatusDismissed, AuditFlagDismiss)
}

func (e *Engine) decide(ctx context.Context, id int64, actor, reason string, from []FlagStatus, to FlagStatus, action string) (Flag, error) {
	if strings.TrimSpace(actor) == "" || strings.TrimSpace(reason) == "" {
		return Flag{}, fmt.Errorf("%s flag %d: %w", action, id, ErrReasonRequired)
	}
	if err := texts("actor", actor, "reason", reason); err != nil {
		return Flag{}, fmt.Errorf("%s flag %d: %w", action, id, err)
	}
	now := e.now()
	f, err := e.st.Transition(ctx, Transition{ID: id, From: from, To: to, Actor: actor, Reason: reason, At: now,
		Audit: AuditEntry{Time: now, Actor: actor, Action: action, Object: fmt.Sprintf("flag:%d", id), Reason: reason}})
	if err != nil {
		return Flag{}, fmt.Errorf("%s flag %d: %w", action, id, err)
	}
	return f, nil
}

// Execute carries out an approved, deletable disposition flag: it deletes
// exactly the flagged object version, and nothing else. At that moment it
// checks again, in order:
//
//  1. in the store, atomically with claiming the flag: no active hold on
//     the version (any document of the object: attachments count), and
//     no hold released after both the grace period and the last
//     evaluation (a release needs grace and a fresh evaluation);
//  2. at the origin: the version's S3 legal hold is off. If it cannot be
//     read, nothing is deleted (ErrHoldUnknown).
//
// A refusal returns the flag to approved, exactly as it was (its approver,
// reason and time: the refusal is not written on the flag, which
// reviewers of every matter see), is audited, and wraps ErrLegalHold or
// ErrHoldUnknown. Other refusals: ErrFlagState (not
// approved), ErrNotDeletable (review rule, report mode, a document inside
// an archive, no Enforcer).
func (e *Engine) Execute(ctx context.Context, id int64, actor string) (Flag, error) {
	if strings.TrimSpace(actor) == "" {
		return Flag{}, fmt.Errorf("execute flag %d: %w", id, ErrReasonRequired)
	}
	if err := checkText("actor", actor); err != nil {
		return Flag{}, fmt.Errorf("execute flag %d: %w", id, err)
	}
	f, err := e.st.Flag(ctx, id)
	if err != nil {
		return Flag{}, fmt.Errorf("execute flag %d: %w", id, err)
	}
	if err := e.executable(f); err != nil {
		return f, fmt.Errorf("execute flag %d: %w", id, err)
	}
	now := e.now()
	cutoff, err := e.lastEvaluation(ctx, now)
	if err != nil {
		return f, fmt.Errorf("execute flag %d: %w", id, err)
	}
	obj, before := f.Object, f
	claim := Transition{ID: id, From: []FlagStatus{StatusApproved, StatusExecuting}, To: StatusExecuting, Actor: actor,
		Reason: "deletion under way", At: now, CheckHolds: true, ReleasedBefore: cutoff.Add(-e.cfg.ReleaseGrace),
		Audit: AuditEntry{Time: now, Actor: actor, Action: AuditDeleteClaim, Object: fmt.Sprintf("flag:%d", id),
			Reason: f.Reason, Details: details(map[string]any{"object": obj, "rule": f.Rule})}}
	if f, err = e.st.Transition(ctx, claim); err != nil {
		if errors.Is(err, ErrLegalHold) {
			e.refused(ctx, id, actor, obj, err)
		}
		return f, fmt.Errorf("execute flag %d: %w", id, err)
	}
	if err := e.deleteUnheld(ctx, obj); err != nil {
		e.refused(ctx, id, actor, obj, err)
		// The flag goes back to what it was (approver, reason, time): it
		// is seen by reviewers of every matter, and the refusal may name
		// a hold they must not learn of. The audit log keeps the refusal.
		back, terr := e.st.Transition(ctx, Transition{ID: id, From: []FlagStatus{StatusExecuting}, To: StatusApproved,
			Actor: before.Actor, Reason: before.Reason, At: before.Updated,
			Audit: AuditEntry{Time: e.now(), Actor: actor, Action: AuditFlagApprove, Object: fmt.Sprintf("flag:%d", id),
				Reason: "returned to approved after a refused deletion"}})
		if terr != nil {
			err = errors.Join(err, fmt.Errorf("return flag to approved: %w", terr))
		} else {
			f = back
		}
		return f, fmt.Errorf("execute flag %d: %w", id, err)
	}
	done := e.now()
	f, err = e.st.Transition(ctx, Transition{ID: id, From: []FlagStatus{StatusExecuting}, To: StatusExecuted, Actor: actor,
		Reason: "deleted", At: done,
		Audit: AuditEntry{Time: done, Actor: actor, Action: AuditDeleteDone, Object: fmt.Sprintf("flag:%d", id),
			Details: details(map[string]any{"object": obj, "rule": f.Rule, "document": f.Document})}})
	if err != nil {
		return f, fmt.Errorf("execute flag %d: deleted %s, but recording it: %w", id, obj, err)
	}
	return f, nil
}

// executable refuses a flag Execute must not carry out: not a
// disposition-due flag of a delete rule on a top-level object, no
// Enforcer, or not approved.
func (e *Engine) executable(f Flag) error {
	switch {
	case f.Kind != KindDispositionDue:
		return fmt.Errorf("%w: a %s flag is settled by approving or dismissing it (%s); only a disposition-due flag of a delete rule is executed",
			ErrNotDeletable, f.Kind, f.Kind.Approving())
	case !f.Evidence.Deletable:
		return fmt.Errorf("%w: rule %s asks for review, not deletion", ErrNotDeletable, cmp.Or(f.Rule, "(unnamed)"))
	case f.Object.IndexKey != f.Document.Key:
		return fmt.Errorf("%w: %s is inside another object", ErrNotDeletable, f.Document.Name)
	case e.enf == nil:
		return fmt.Errorf("%w: no enforcer configured", ErrNotDeletable)
	case f.Status != StatusApproved && f.Status != StatusExecuting:
		return fmt.Errorf("%w: status is %s, not approved", ErrFlagState, f.Status)
	}
	return nil
}

// lastEvaluation returns when the latest finished evaluation started, or
// now when that is later (the zero time when none finished).
func (e *Engine) lastEvaluation(ctx context.Context, now time.Time) (time.Time, error) {
	runs, err := e.st.Runs(ctx, 20)
	if err != nil {
		return now, fmt.Errorf("load runs: %w", err)
	}
	fresh := time.Time{}
	for _, r := range runs {
		if !r.DryRun && !r.Ended.IsZero() {
			fresh = r.Started
			break
		}
	}
	if fresh.Before(now) {
		return fresh, nil
	}
	return now, nil
}

// deleteUnheld deletes obj at its origin unless its legal hold is on
// (ErrLegalHold) or cannot be read (ErrHoldUnknown).
func (e *Engine) deleteUnheld(ctx context.Context, obj Object) error {
	held, err := e.enf.Held(ctx, obj)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s: %w", ErrHoldUnknown, obj, err)
	case held:
		return fmt.Errorf("%w: S3 legal hold is on for %s", ErrLegalHold, obj)
	}
	if err := e.enf.Delete(ctx, obj); err != nil {
		return fmt.Errorf("delete %s: %w", obj, err)
	}
	return nil
}

func (e *Engine) refused(ctx context.Context, id int64, actor string, obj Object, cause error) {
	a := AuditEntry{Time: e.now(), Actor: actor, Action: AuditDeleteRefuse, Object: fmt.Sprintf("flag:%d", id),
		Reason: cause.Error(), Details: details(map[string]any{"object": obj})}
	if err := e.st.Append(ctx, a); err != nil {
		e.logger.Error("auditing a refused deletion", "flag", id, "err", err)
	}
}
