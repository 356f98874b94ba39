package policy

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/simdex/simdex/index"
)

// Approve records a reviewer's approval of an open flag. For a deletable
// disposition flag it allows Execute. reason and actor are required
// (ErrReasonRequired); a flag not open is ErrFlagState.
func (e *Engine) Approve(ctx context.Context, id int64, actor, reason string) (Flag, error) {
	return e.decide(ctx, id, actor, reason, []FlagStatus{StatusOpen}, StatusApproved, AuditFlagApprove)
}

// Dismiss closes an open, approved or refused flag without action. reason and
// actor are required.
func (e *Engine) Dismiss(ctx context.Context, id int64, actor, reason string) (Flag, error) {
	return e.decide(ctx, id, actor, reason, []FlagStatus{StatusOpen, StatusApproved, StatusRefused}, StatusDismissed, AuditFlagDismiss)
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

// Execute carries out an approved (or refused: executing it again retries
// every check), deletable disposition flag: it deletes exactly the flagged
// object version, and nothing else. At that moment it checks again, in
// order:
//
//  1. in the store, atomically with claiming the flag: no active hold on
//     the version (any document of the object: attachments count), and
//     no hold released after both the grace period and the last
//     evaluation (a release needs grace and a fresh evaluation);
//  2. in the index: the document is still there (else ErrGone);
//  3. at the origin: the version's legal hold is off (ErrLegalHold when
//     on, ErrHoldUnknown when it cannot be read), and the Enforcer deletes
//     it only if it is still that version (ErrStale, ErrGone).
//
// A refusal moves the flag to refused with the reason ("held for matter
// M", "stale: …", "gone: …", "cannot be deleted at this source: …"),
// audited as AuditFlagRefuse; the flag keeps its approver and approval
// time. A deletion carried out is proven by an AuditFlagDispose entry
// (Disposal). Other refusals, which leave the flag as it is:
// ErrFlagState (not approved), ErrNotDeletable (review rule, report
// mode, a document inside an archive, no Enforcer).
func (e *Engine) Execute(ctx context.Context, id int64, actor string) (Flag, error) {
	if strings.TrimSpace(actor) == "" {
		return Flag{}, fmt.Errorf("execute flag %d: %w", id, ErrReasonRequired)
	}
	if err := checkText("actor", actor); err != nil {
		return Flag{}, fmt.Errorf("execute flag %d: %w", id, err)
	}
	before, err := e.st.Flag(ctx, id)
	if err != nil {
		return Flag{}, fmt.Errorf("execute flag %d: %w", id, err)
	}
	if err := e.executable(before); err != nil {
		return before, fmt.Errorf("execute flag %d: %w", id, err)
	}
	now := e.now()
	cutoff, err := e.lastEvaluation(ctx, now)
	if err != nil {
		return before, fmt.Errorf("execute flag %d: %w", id, err)
	}
	obj, released := before.Object, cutoff.Add(-e.cfg.ReleaseGrace)
	// The claim keeps the approver and the approval time on the flag: they
	// are part of the proof of disposal.
	claim := Transition{ID: id, From: []FlagStatus{StatusApproved, StatusRefused, StatusExecuting}, To: StatusExecuting,
		Actor: before.Actor, Reason: "deletion under way", At: before.Updated, CheckHolds: true, ReleasedBefore: released,
		Audit: AuditEntry{Time: now, Actor: actor, Action: AuditDeleteClaim, Object: fmt.Sprintf("flag:%d", id),
			Reason: before.Reason, Details: details(map[string]any{"object": obj, "rule": before.Rule})}}
	if _, err := e.st.Transition(ctx, claim); err != nil {
		if errors.Is(err, ErrLegalHold) {
			return e.refuse(ctx, before, []FlagStatus{StatusApproved, StatusRefused, StatusExecuting}, actor, e.heldReason(ctx, obj, released, err), err)
		}
		return before, fmt.Errorf("execute flag %d: %w", id, err)
	}
	rec, err := e.ix.Get(ctx, before.Document.ID)
	if errors.Is(err, index.ErrNotFound) {
		err = e.goneOrStale(ctx, before)
	}
	if err == nil {
		err = e.deleteUnheld(ctx, obj)
	}
	if err != nil {
		return e.refuse(ctx, before, []FlagStatus{StatusExecuting}, actor, refusal(err), err)
	}
	return e.disposed(ctx, before, rec, actor)
}

// goneOrStale is why the document of f, no longer in the index, cannot be
// deleted: another version of its object replaced it (ErrStale), or it is
// gone (ErrGone).
func (e *Engine) goneOrStale(ctx context.Context, f Flag) error {
	rs, err := e.ix.Lookup(ctx, f.Object.IndexKey)
	if err == nil && len(rs) > 0 {
		return fmt.Errorf("%w: the index now has another version of %s", ErrStale, f.Object)
	}
	return fmt.Errorf("%w: document %d is no longer in the index", ErrGone, f.Document.ID)
}

// disposed records the deletion of the object of flag f, whose document
// was rec, with its proof (AuditFlagDispose).
func (e *Engine) disposed(ctx context.Context, f Flag, rec *index.Record, actor string) (Flag, error) {
	done := e.now()
	proof := DisposalProof{Flag: f.ID, Rule: f.Rule, Approver: f.Actor, Approved: f.Updated, Object: f.Object,
		Document: f.Document, SHA256: hex.EncodeToString(rec.RawSHA256[:]), Size: rec.RawSize}
	out, err := e.st.Transition(ctx, Transition{ID: f.ID, From: []FlagStatus{StatusExecuting}, To: StatusExecuted, Actor: actor,
		Reason: "deleted", At: done,
		Audit: AuditEntry{Time: done, Actor: actor, Action: AuditFlagDispose, Object: fmt.Sprintf("flag:%d", f.ID),
			Reason: "disposed under rule " + f.Rule, Details: details(proof)}})
	if err != nil {
		return out, fmt.Errorf("execute flag %d: deleted %s, but recording it: %w", f.ID, f.Object, err)
	}
	return out, nil
}

// refuse records the refusal of flag f (recordRefusal) and returns the
// flag with cause.
func (e *Engine) refuse(ctx context.Context, f Flag, from []FlagStatus, actor, reason string, cause error) (Flag, error) {
	out, err := e.recordRefusal(ctx, f, from, actor, reason, cause)
	if err != nil {
		return f, fmt.Errorf("execute flag %d: %w", f.ID, errors.Join(cause, err))
	}
	return out, fmt.Errorf("execute flag %d: %w", f.ID, cause)
}

// recordRefusal moves flag f from one of from to refused with reason,
// keeping its approver and approval time, and audits it
// (AuditFlagRefuse, naming the cause).
func (e *Engine) recordRefusal(ctx context.Context, f Flag, from []FlagStatus, actor, reason string, cause error) (Flag, error) {
	out, err := e.st.Transition(ctx, Transition{ID: f.ID, From: from, To: StatusRefused, Actor: f.Actor, Reason: reason, At: f.Updated,
		Audit: AuditEntry{Time: e.now(), Actor: actor, Action: AuditFlagRefuse, Object: fmt.Sprintf("flag:%d", f.ID), Reason: reason,
			Details: details(map[string]any{"object": f.Object, "rule": f.Rule, "cause": cause.Error()})}})
	if err != nil {
		return f, fmt.Errorf("record the refusal: %w", err)
	}
	return out, nil
}

// heldReason names the matters whose holds refused the claim of a
// deletion of o (cause): active holds, and those released after
// released.
func (e *Engine) heldReason(ctx context.Context, o Object, released time.Time, cause error) string {
	if errors.Is(cause, ErrPlacementPending) {
		return "held: " + cause.Error()
	}
	hs, err := e.st.HoldsOn(ctx, o)
	if err != nil {
		return "held: " + cause.Error()
	}
	var matters []string
	for _, h := range hs {
		if h.Status == HoldActive || h.Released.After(released) {
			matters = append(matters, h.Matter)
		}
	}
	if len(matters) == 0 {
		return "held: " + cause.Error()
	}
	return "held for matter " + strings.Join(matters, ", ")
}

// refusal is the reason a flag is refused for when its deletion failed
// with err.
func refusal(err error) string {
	switch {
	case errors.Is(err, ErrLegalHold):
		return "held: " + err.Error()
	case errors.Is(err, ErrStale):
		return "stale: " + err.Error()
	case errors.Is(err, ErrGone):
		return "gone: " + err.Error()
	case errors.Is(err, ErrNotEnforceable):
		return "cannot be deleted at this source: " + err.Error()
	default:
		return "not carried out: " + err.Error()
	}
}

// refuseHeld refuses every approved disposition flag of document id: a
// hold of matters now covers it ("held for matter M"). Evaluations call
// it for each document they decide held.
func (e *Engine) refuseHeld(ctx context.Context, id index.DocID, matters []string, actor string) error {
	fs, err := e.st.Flags(ctx, FlagFilter{Kind: KindDispositionDue, Status: StatusApproved, Document: id})
	if err != nil {
		return fmt.Errorf("approved flags of %d: %w", id, err)
	}
	reason := "held for matter " + strings.Join(matters, ", ")
	var errs []error
	for _, f := range fs {
		_, err := e.recordRefusal(ctx, f, []FlagStatus{StatusApproved}, actor, reason, fmt.Errorf("%w: %s", ErrLegalHold, reason))
		if err != nil && !errors.Is(err, ErrFlagState) { // ErrFlagState: settled meanwhile
			errs = append(errs, fmt.Errorf("refuse flag %d: %w", f.ID, err))
		}
	}
	return errors.Join(errs...)
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
	case f.Status != StatusApproved && f.Status != StatusExecuting && f.Status != StatusRefused:
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
		return fmt.Errorf("%w: the legal hold at the origin is on for %s", ErrLegalHold, obj)
	}
	if err := e.enf.Delete(ctx, obj); err != nil {
		return fmt.Errorf("delete %s: %w", obj, err)
	}
	return nil
}
