package policy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/simdex/simdex/notifier"
)

// Store is where policy state lives: the embedded SQLite store
// (policy/sqlite) or, later, a database shared by several replicas. Every
// method is safe for concurrent use, every write is atomic (all or
// nothing, audit entries included), and the store is the only place state
// lives: Engines keep nothing that cannot be rebuilt from it. Methods
// return ErrNotFound for unknown holds and flags.
type Store interface {
	RuleStore
	HoldStore
	PlacementStore
	FlagStore
	IngestStore
	RunStore
	AuditLog
	Close() error
}

// RuleStore keeps retention and keep_at_least rules.
type RuleStore interface {
	// PutRules replaces the rules whose origin is origin ("config") with
	// rules and keeps, leaving other origins alone.
	PutRules(ctx context.Context, origin string, rules []RetentionRule, keeps []KeepRule) error
	// Rules returns every rule.
	Rules(ctx context.Context) ([]RetentionRule, []KeepRule, error)
}

// HoldStore keeps holds and the documents each holds.
type HoldStore interface {
	// CreateHold stores an active hold with its seeds and its pending
	// placement (PlacementStore) and appends a to the audit log, or fails
	// with ErrHoldExists.
	CreateHold(ctx context.Context, h Hold, seeds []HeldDoc, a AuditEntry) error
	// ReleaseHold marks an active hold released (setting Released,
	// ReleasedBy and ReleaseReason from h), ends its pending placement if
	// any, and appends a; it fails with ErrHoldReleased when it was
	// released already.
	ReleaseHold(ctx context.Context, h Hold, a AuditEntry) (Hold, error)
	// Hold returns one hold; Holds every hold with status (all when "").
	Hold(ctx context.Context, matter string) (Hold, error)
	Holds(ctx context.Context, status HoldStatus) ([]Hold, error)
	// AddHeld records held documents; recording one twice is a no-op. It
	// returns how many were new.
	AddHeld(ctx context.Context, held []HeldDoc) (int, error)
	// HeldDocs calls fn with the documents matter holds (seeds only when
	// seeds is true).
	HeldDocs(ctx context.Context, matter string, seeds bool, fn func(HeldDoc) error) error
	// HoldsOn returns the holds on an object version (any document of
	// it: attachments count), released ones included.
	HoldsOn(ctx context.Context, o Object) ([]Hold, error)
	// HoldsVersion changes whenever a hold is created or released: caches
	// of hold seeds compare it to know they are stale.
	HoldsVersion(ctx context.Context) (int64, error)
}

// PlacementStore keeps the placements of holds not complete yet (see
// PendingPlacement): CreateHold records one with the hold, ReleaseHold
// ends it. While one is pending and not Recorded, a hold-checked
// Transition fails with ErrLegalHold and ErrPlacementPending, atomically
// with CreateHold: a claim either committed before the hold or sees its
// placement.
type PlacementStore interface {
	// Placements returns every pending placement, by matter.
	Placements(ctx context.Context) ([]PendingPlacement, error)
	// UpdatePlacement stores p's attempts, last error and next attempt,
	// and sets Recorded when p's is (it is never unset); it does nothing
	// when no placement of p.Matter is pending.
	UpdatePlacement(ctx context.Context, p PendingPlacement) error
	// FinishPlacement ends the pending placement of matter and appends
	// a, and reports whether one was pending (when none was, a is not
	// appended).
	FinishPlacement(ctx context.Context, matter string, a AuditEntry) (bool, error)
}

// PlacementRefusal is the error of a hold-checked Transition of a flag on
// o while the placements of matters are pending and not Recorded (nil
// when there are none): it wraps ErrLegalHold and ErrPlacementPending.
// Stores return it, so that both say the same.
func PlacementRefusal(o Object, matters []string) error {
	if len(matters) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w: %s may be a near-copy held for %s, whose near-copies are not all recorded yet; try again once its placement is complete",
		ErrLegalHold, ErrPlacementPending, o.IndexKey, strings.Join(matters, ", "))
}

// HoldChanges is a HoldStore that several replicas share and that can
// tell what changed since a holds version, so that an Engine catches up
// with holds and seeds recorded through other replicas at the cost of the
// change, not of every seed (policy/postgres implements it). An Engine
// whose store lacks it reloads every hold when the version moves.
type HoldChanges interface {
	// HoldsSince returns, as of one snapshot, the holds version and what
	// changed after version since: every hold created or released (in
	// its state at the snapshot) and every seed recorded.
	HoldsSince(ctx context.Context, since int64) (HoldDelta, error)
}

// HoldDelta is what changed in the holds between two versions.
type HoldDelta struct {
	// Version is the holds version the delta brings a cache to.
	Version int64
	// Holds were created or released after the version asked for.
	Holds []Hold
	// Seeds were recorded after the version asked for, of any hold.
	Seeds []HeldDoc
}

// FlagStore keeps flags.
type FlagStore interface {
	// AddFlags inserts the flags whose natural key (kind, document, rule,
	// matter) is not stored yet, appends one audit entry per new flag, and
	// returns the new flags with their ids, unpublished.
	AddFlags(ctx context.Context, flags []Flag, actor string, at time.Time) ([]Flag, error)
	// Flag returns one flag; Flags a page of flags in id order.
	Flag(ctx context.Context, id int64) (Flag, error)
	Flags(ctx context.Context, f FlagFilter) ([]Flag, error)
	// Transition moves a flag whose status is one of t.From to t.To,
	// recording actor and reason, and appends t.Audit; it fails with
	// ErrFlagState when the status is not one of t.From. With
	// t.CheckHolds, it also fails with ErrLegalHold when an active hold,
	// or one released after t.ReleasedBefore, holds the flag's object
	// version: the check and the change are one transaction, so a
	// deletion claimed this way cannot interleave with a hold placement.
	Transition(ctx context.Context, t Transition) (Flag, error)
	// Unpublished returns up to limit flags not yet marked published.
	Unpublished(ctx context.Context, limit int) ([]Flag, error)
	// MarkPublished marks flags published.
	MarkPublished(ctx context.Context, ids []int64) error
}

// IngestStore commits what the ingest check found for one document.
type IngestStore interface {
	// AddHeldAndFlags records held documents (as AddHeld), inserts flags
	// (as AddFlags) and appends audit (as Append) in one transaction, so
	// that the check waits for the disk once. It returns the holds
	// version the transaction moved to when it added seeds (else 0) and
	// the flags inserted.
	AddHeldAndFlags(ctx context.Context, held []HeldDoc, flags []Flag, audit []AuditEntry, actor string, at time.Time) (int64, []Flag, error)
}

// Transition is a flag status change.
type Transition struct {
	ID     int64
	From   []FlagStatus
	To     FlagStatus
	Actor  string
	Reason string
	At     time.Time
	Audit  AuditEntry
	// CheckHolds refuses the change when the object is held, or was
	// released after ReleasedBefore, or a placement not yet Recorded is
	// pending (it may hold the object: ErrPlacementPending).
	CheckHolds     bool
	ReleasedBefore time.Time
}

// RunStore records evaluations.
type RunStore interface {
	// StartRun stores a run under way and returns its id; FinishRun
	// stores its end and counts.
	StartRun(ctx context.Context, r Run) (int64, error)
	FinishRun(ctx context.Context, r Run) error
	// Runs returns the latest runs, newest first.
	Runs(ctx context.Context, limit int) ([]Run, error)
}

// AuditLog is the append-only, hash-chained audit log.
type AuditLog interface {
	// Append assigns each entry the next sequence number, chains it to the
	// previous entry (Prev, Hash by ChainHash) and stores it.
	Append(ctx context.Context, entries ...AuditEntry) error
	AuditReader
}

// AuditReader reads the audit log.
type AuditReader interface {
	// Audit calls fn with every entry from seq from on, in order.
	Audit(ctx context.Context, from int64, fn func(AuditEntry) error) error
}

// Enforcer acts on objects at their origin (S3 Object Lock, the files of
// a watched folder). Policy declares it; the daemon implements it over
// the connectors. Methods are safe for concurrent use and return
// ErrNotEnforceable for objects they cannot act on.
type Enforcer interface {
	// HoldAll turns the legal hold ON for every version of o.Key (not
	// only o.VersionID) and returns the versions held. It is idempotent
	// and never turns a hold off. It fails with ErrObjectLockDisabled
	// when the origin can never hold o (a configuration error), and
	// ErrCannotLock when its kind of source cannot lock anything (a
	// watched folder); any other error is retried.
	HoldAll(ctx context.Context, o Object) ([]string, error)
	// Held reports whether the legal hold of exactly o.VersionID is ON.
	Held(ctx context.Context, o Object) (bool, error)
	// Delete permanently deletes exactly o.VersionID, never another
	// version and never a delete marker in its place. An origin that
	// cannot name versions deletes o only while it still is the version
	// indexed (else ErrStale), and reports ErrGone when it is not there.
	Delete(ctx context.Context, o Object) error
}

// Publisher receives each new flag's alert once it is stored; it is
// satisfied by *notifier.Notifier, whose outbox publishes on NATS
// simdex.flags.<kind> when so routed. Notify must be idempotent per
// alert id: a flag is published again when the process died before its
// published marker was written.
type Publisher interface {
	Notify(ctx context.Context, a notifier.Alert) error
}
