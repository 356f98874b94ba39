package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/simdex/simdex/index"
)

// Placement reports what placing (or refreshing) a hold did.
type Placement struct {
	Matter string `json:"matter"`
	// Seeds is how many seed documents were searched.
	Seeds int `json:"seeds"`
	// Held is how many documents were newly recorded as held; Flagged how
	// many new hold-match flags were raised.
	Held    int `json:"held"`
	Flagged int `json:"flagged"`
	// Enforced is how many object versions had their S3 legal hold turned
	// on; EnforceErrors lists the objects that could not be (they stay
	// held in the store and are retried by the next sweep).
	Enforced      int      `json:"enforced"`
	EnforceErrors []string `json:"enforce_errors,omitempty"`
	// Unenforceable lists the objects whose origin can never hold them
	// (ErrObjectLockDisabled): they stay held in the store, each held
	// document is flagged hold-unenforced once, and they are not retried
	// as failures.
	Unenforceable []string `json:"unenforceable,omitempty"`
	// Unlockable is how many of the objects are on sources that cannot
	// lock anything (ErrCannotLock: a watched folder); they are among
	// Unenforceable, and flagged hold-unenforced once per document.
	Unlockable int `json:"unlockable,omitempty"`
	// Created is set when the call created the hold; a create repeated
	// with the same spec answers the hold it made without it.
	Created bool `json:"created,omitempty"`
}

// CreateHold validates spec, resolves its seeds, stores the hold with its
// seeds and its pending placement, and places it: every near-copy of
// every seed within spec.Scope is recorded as held and flagged hold-match
// ("found for matter M"), and in mode hold every version of every held
// object gets its S3 legal hold turned on; then the placement is recorded
// complete. A placement that fails (an enforcement error, a lost store,
// ctx ended) leaves the hold placing and returns an error wrapping
// ErrPlacementPending: ResumePlacements completes it. A create repeated
// with the same spec (HoldSpec.Digest) answers the hold, placing it if
// its placement is pending and no one else is (Placement.Created false).
// Errors: ErrInvalidHold, ErrBadSelector or ErrBadThreshold for a bad
// spec, ErrReasonRequired without an actor, ErrHoldExists for a matter
// taken by another spec or released, index.ErrNotFound for an unknown
// seed.
func (e *Engine) CreateHold(ctx context.Context, spec HoldSpec, actor string) (Hold, Placement, error) {
	if err := checkCreate(&spec, actor); err != nil {
		return Hold{}, Placement{}, err
	}
	digest := spec.Digest()
	if h, ok, err := e.existing(ctx, spec.Matter, digest); err != nil || ok {
		if err != nil {
			return Hold{}, Placement{}, fmt.Errorf("create hold %s: %w", spec.Matter, err)
		}
		return e.placeNow(ctx, h, nil, actor)
	}
	seeds, err := e.resolveSeeds(ctx, spec)
	if err != nil {
		return Hold{}, Placement{}, fmt.Errorf("create hold %s: %w", spec.Matter, err)
	}
	if len(seeds) == 0 {
		return Hold{}, Placement{}, fmt.Errorf("create hold %s: %w: no stored document matches its seeds", spec.Matter, ErrInvalidHold)
	}
	now := e.now()
	h := Hold{Matter: spec.Matter, Name: spec.Name, Reason: spec.Reason, Owner: spec.Owner,
		Selectors: spec.Selectors, Scope: spec.Scope, Mode: spec.Mode, Status: HoldActive,
		Created: now, CreatedBy: actor, Request: digest}
	held := make([]HeldDoc, 0, len(seeds))
	for _, r := range seeds {
		h.Seeds = append(h.Seeds, r.ID)
		held = append(held, HeldDoc{Matter: h.Matter, Document: RefOf(r), Object: ObjectOf(r), Content: r.Content, Seed: true, Placed: now})
	}
	a := AuditEntry{Time: now, Actor: actor, Action: AuditHoldCreate, Object: "hold:" + h.Matter, Reason: h.Reason,
		Details: details(map[string]any{"name": h.Name, "owner": h.Owner, "seeds": h.Seeds, "selectors": h.Selectors, "scope": h.Scope, "mode": h.Mode})}
	if err := e.st.CreateHold(ctx, h, held, a); err != nil {
		if errors.Is(err, ErrHoldExists) { // a create with the same spec won the race?
			if again, ok, xerr := e.existing(ctx, spec.Matter, digest); xerr == nil && ok {
				return e.placeNow(ctx, again, nil, actor)
			}
		}
		return Hold{}, Placement{}, fmt.Errorf("create hold %s: %w", h.Matter, err)
	}
	e.invalidate()
	h.Status, h.Placement, h.Held = HoldPlacing, &PendingPlacement{Matter: h.Matter}, len(seeds)
	h, p, err := e.placeNow(ctx, h, seeds, actor)
	p.Created = true
	return h, p, err
}

// checkCreate refuses a spec or actor CreateHold cannot take, and
// defaults spec's mode.
func checkCreate(spec *HoldSpec, actor string) error {
	if err := spec.validate(); err != nil {
		return fmt.Errorf("create hold %s: hold%w", spec.Matter, err)
	}
	if strings.TrimSpace(actor) == "" {
		return fmt.Errorf("create hold %s: %w: no actor", spec.Matter, ErrReasonRequired)
	}
	if err := checkText("actor", actor); err != nil {
		return fmt.Errorf("create hold %s: %w", spec.Matter, err)
	}
	if spec.Mode == "" {
		spec.Mode = ModeHold
	}
	return nil
}

// existing returns the hold of matter when a create of the spec digest
// repeats the one that made it (ok), nothing when there is no such hold,
// and ErrHoldExists when the matter is taken otherwise: by another spec,
// by a hold stored before specs were recorded, or by a released hold.
func (e *Engine) existing(ctx context.Context, matter, digest string) (Hold, bool, error) {
	h, err := e.Hold(ctx, matter)
	switch {
	case errors.Is(err, ErrNotFound):
		return Hold{}, false, nil
	case err != nil:
		return Hold{}, false, err
	case h.Status == HoldReleased:
		return Hold{}, false, fmt.Errorf("%w: %s was released on %s", ErrHoldExists, matter, h.Released.Format(time.RFC3339))
	case h.Request == "" || h.Request != digest:
		return Hold{}, false, fmt.Errorf("%w: %s, with other seeds, scope or details", ErrHoldExists, matter)
	}
	return h, true, nil
}

// resolveSeeds returns the seed documents of spec, each once.
func (e *Engine) resolveSeeds(ctx context.Context, spec HoldSpec) ([]*index.Record, error) {
	seen := map[index.DocID]bool{}
	var out []*index.Record
	keep := func(r *index.Record) {
		if !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	for _, id := range spec.Seeds {
		r, err := e.ix.Get(ctx, id)
		if err == nil && foreignSeed(r, spec.Matter) {
			err = index.ErrNotFound // another matter's evidence
		}
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", id, err)
		}
		keep(r)
	}
	for _, k := range spec.SeedKeys {
		rs, err := e.ix.Lookup(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", k, err)
		}
		for _, r := range rs {
			if !foreignSeed(r, spec.Matter) {
				keep(r)
			}
		}
	}
	if len(spec.Selectors) > 0 {
		var matched []*index.Record
		err := e.ix.Documents(ctx, func(r *index.Record) error {
			if foreignSeed(r, spec.Matter) {
				return nil
			}
			for _, s := range spec.Selectors {
				if s.Match(r) {
					matched = append(matched, r)
					break
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("select seeds: %w", err)
		}
		for _, r := range matched {
			keep(r)
		}
	}
	return out, nil
}

// place records as held and flags every near-copy of seeds, calls
// recorded (when not nil) once they are all recorded held, and enforces
// the hold on every held object. Seeds themselves are recorded already.
func (e *Engine) place(ctx context.Context, h Hold, seeds []*index.Record, actor string, recorded func(context.Context) error) (Placement, error) {
	p := Placement{Matter: h.Matter, Seeds: len(seeds)}
	hs, fs, err := e.nearCopiesOf(ctx, h, seeds)
	if err != nil {
		return p, err
	}
	if p.Held, err = e.st.AddHeld(ctx, hs); err != nil {
		return p, fmt.Errorf("record held documents: %w", err)
	}
	if recorded != nil {
		if err := recorded(ctx); err != nil {
			return p, fmt.Errorf("record placement progress: %w", err)
		}
	}
	added, err := e.raise(ctx, fs, actor)
	p.Flagged = len(added)
	if err != nil || h.Mode != ModeHold {
		return p, err
	}
	objs := make([]Object, 0, len(seeds)+len(hs))
	for _, s := range seeds {
		objs = append(objs, ObjectOf(s))
	}
	for _, d := range hs {
		objs = append(objs, d.Object)
	}
	never := e.enforce(ctx, h.Matter, objs, actor, &p)
	fs = nil
	for _, s := range seeds {
		if note, ok := never[objectKey(ObjectOf(s))]; ok {
			fs = append(fs, unenforcedFlag(h.Matter, RefOf(s), ObjectOf(s), "seed", note))
		}
	}
	for _, d := range hs {
		if note, ok := never[objectKey(d.Object)]; ok {
			fs = append(fs, unenforcedFlag(h.Matter, d.Document, d.Object, "near-copy", note))
		}
	}
	_, err = e.raise(ctx, fs, actor)
	return p, err
}

// nearCopiesOf returns the held records and hold-match flags of the
// near-copies of seeds within h.Scope (seeds and other matters' seed
// files aside), one each per document.
func (e *Engine) nearCopiesOf(ctx context.Context, h Hold, seeds []*index.Record) ([]HeldDoc, []Flag, error) {
	th := thresholds(h.Scope)
	isSeed := make(map[index.DocID]bool, len(seeds))
	for _, s := range seeds {
		isSeed[s.ID] = true
	}
	var (
		mu    sync.Mutex
		held  = map[index.DocID]HeldDoc{}
		flags = map[index.DocID]Flag{}
	)
	now := e.now()
	err := forEach(ctx, e.work, seeds, func(ctx context.Context, s *index.Record) error {
		ms, err := e.similar(ctx, s.ID, th)
		if err != nil {
			return fmt.Errorf("near-copies of seed %d: %w", s.ID, err)
		}
		src := RefOf(s)
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			r := m.Record
			if _, ok := held[r.ID]; ok || isSeed[r.ID] || foreignSeed(r, h.Matter) {
				continue
			}
			held[r.ID] = HeldDoc{Matter: h.Matter, Document: RefOf(r), Object: ObjectOf(r), Content: r.Content, Placed: now}
			sc := m.Scores
			flags[r.ID] = holdFlag(h, r, &src, &sc, "near-copy")
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return slices.Collect(maps.Values(held)), slices.Collect(maps.Values(flags)), nil
}

// unenforcedFlag is the flag of a held document its origin cannot hold.
func unenforcedFlag(matter string, doc DocRef, obj Object, role, note string) Flag {
	return Flag{Kind: KindHoldUnenforced, Document: doc, Object: obj, Matter: matter, Evidence: Evidence{Role: role, Note: note}}
}

// unenforcedNote is the note of the hold-unenforced flag of a document of
// o, whose origin can never hold it (err).
func unenforcedNote(o Object, err error) string {
	if errors.Is(err, ErrCannotLock) {
		return "hold cannot be enforced at the source: " + o.Source + " cannot lock files; until native preservation exists, only simdex's index copy and text of the document are kept"
	}
	return "hold could not be enforced in S3: object lock not enabled on bucket " + o.Bucket
}

// objectKey identifies an object, all versions together.
func objectKey(o Object) string { return o.Source + "\x00" + o.Bucket + "\x00" + o.Key }

func holdFlag(h Hold, r *index.Record, src *DocRef, sc *index.Scores, role string) Flag {
	return Flag{Kind: KindHoldMatch, Document: RefOf(r), Object: ObjectOf(r), Source: src, Matter: h.Matter,
		Evidence: Evidence{Scores: sc, Role: role, Note: "found for matter " + h.Matter}}
}

// enforce turns on the S3 legal hold of every version of each distinct
// object and audits the outcome. It returns the objects their origin can
// never hold (see turnOn).
func (e *Engine) enforce(ctx context.Context, matter string, objs []Object, actor string, p *Placement) map[string]string {
	a, ok, never := e.turnOn(ctx, matter, objs, actor, p)
	if ok {
		if err := e.st.Append(ctx, a); err != nil {
			e.logger.Error("auditing legal holds turned on", "hold_id", matter, "err", err)
		}
	}
	return never
}

// turnOn turns the legal hold of matter on for every version of objs,
// counting what it did in p, and returns the audit entry saying so, for
// the caller to commit; ok is false when there is nothing to audit.
// never maps each object its origin can never hold (objectKey) to the
// note of its hold-unenforced flag: that is a configuration error, left
// out of the audit entry and of p.EnforceErrors (which are retried), for
// the caller to flag once.
func (e *Engine) turnOn(ctx context.Context, matter string, objs []Object, actor string, p *Placement) (a AuditEntry, ok bool, never map[string]string) {
	if e.enf == nil || len(objs) == 0 {
		return AuditEntry{}, false, nil
	}
	seen := map[string]bool{}
	var distinct []Object
	for _, o := range objs {
		if k := objectKey(o); !seen[k] {
			seen[k] = true
			distinct = append(distinct, o)
		}
	}
	var mu sync.Mutex
	var versions []string
	_ = forEach(ctx, e.work, distinct, func(ctx context.Context, o Object) error {
		vs, err := e.enf.HoldAll(ctx, o)
		mu.Lock()
		defer mu.Unlock()
		if errors.Is(err, ErrObjectLockDisabled) || errors.Is(err, ErrCannotLock) {
			if never == nil {
				never = map[string]string{}
			}
			never[objectKey(o)] = unenforcedNote(o, err)
			if errors.Is(err, ErrCannotLock) {
				p.Unlockable++
			}
			p.Unenforceable = append(p.Unenforceable, fmt.Sprintf("%s: %v", o, err))
			e.logger.Warn("legal hold cannot be turned on, document held in the store only and flagged for review",
				"hold_id", matter, "bucket", o.Bucket, "key", o.Key, "err", err)
			return nil
		}
		if err != nil {
			if !errors.Is(err, ErrNotEnforceable) {
				p.EnforceErrors = append(p.EnforceErrors, fmt.Sprintf("%s: %v", o, err))
				e.logger.Warn("turning legal hold on, will retry at the next sweep", "hold_id", matter, "key", o.Key, "err", err)
			}
			return nil
		}
		p.Enforced += len(vs)
		for _, v := range vs {
			versions = append(versions, o.Source+"/"+o.Bucket+"/"+o.Key+"@"+v)
		}
		return nil
	})
	if p.Enforced == 0 && len(p.EnforceErrors) == 0 {
		return AuditEntry{}, false, never
	}
	return AuditEntry{Time: e.now(), Actor: actor, Action: AuditEnforceHold, Object: "hold:" + matter,
		Details: details(map[string]any{"versions": versions, "errors": p.EnforceErrors})}, true, never
}

// ReleaseHold releases an active hold. reason and actor are required
// (ErrReasonRequired); an unknown matter is ErrNotFound, a released one
// ErrHoldReleased. Nothing the hold covered is deleted before the release
// grace period is over and an evaluation has run after it; S3 legal holds
// are left on (the daemon's credentials cannot remove them).
func (e *Engine) ReleaseHold(ctx context.Context, matter, reason, actor string) (Hold, error) {
	if strings.TrimSpace(reason) == "" || strings.TrimSpace(actor) == "" {
		return Hold{}, fmt.Errorf("release hold %s: %w", matter, ErrReasonRequired)
	}
	if err := texts("matter", matter, "reason", reason, "actor", actor); err != nil {
		return Hold{}, fmt.Errorf("release hold %q: %w", matter, err)
	}
	now := e.now()
	h := Hold{Matter: matter, Released: now, ReleasedBy: actor, ReleaseReason: reason}
	a := AuditEntry{Time: now, Actor: actor, Action: AuditHoldRelease, Object: "hold:" + matter, Reason: reason,
		Details: details(map[string]any{"grace": e.cfg.ReleaseGrace.String()})}
	h, err := e.st.ReleaseHold(ctx, h, a)
	if err != nil {
		return Hold{}, fmt.Errorf("release hold %s: %w", matter, err)
	}
	e.invalidate()
	return h, nil
}

// Hold returns one hold, placing while its placement is pending.
func (e *Engine) Hold(ctx context.Context, matter string) (Hold, error) {
	h, err := e.st.Hold(ctx, matter)
	if err != nil {
		return Hold{}, fmt.Errorf("load hold %s: %w", matter, err)
	}
	pending, err := e.pendingByMatter(ctx)
	if err != nil {
		return Hold{}, fmt.Errorf("load hold %s: %w", matter, err)
	}
	return placing(h, pending), nil
}

// Holds lists holds with status (all when ""). Active lists every hold
// in force, those placing included (their status reads placing); placing
// only those.
func (e *Engine) Holds(ctx context.Context, status HoldStatus) ([]Hold, error) {
	stored := status
	if status == HoldPlacing {
		stored = HoldActive
	}
	hs, err := e.st.Holds(ctx, stored)
	if err != nil {
		return nil, fmt.Errorf("list holds: %w", err)
	}
	pending, err := e.pendingByMatter(ctx)
	if err != nil {
		return nil, fmt.Errorf("list holds: %w", err)
	}
	out := hs[:0]
	for _, h := range hs {
		if h = placing(h, pending); status != HoldPlacing || h.Status == HoldPlacing {
			out = append(out, h)
		}
	}
	return out, nil
}

// RefreshHolds places every active hold again: seeds chosen by selectors
// are resolved anew and every near-copy of every seed is recorded, flagged
// and enforced. It repairs anything an ingest-time check missed (an
// error, a replica with a stale cache) and retries failed enforcement. A
// hold whose placement is pending is placed under its lease (skipped
// while another process places it) and its placement completed.
func (e *Engine) RefreshHolds(ctx context.Context) ([]Placement, error) {
	hs, err := e.Holds(ctx, HoldActive)
	if err != nil {
		return nil, err
	}
	var out []Placement
	var errs []error
	for _, h := range hs {
		var p Placement
		if h.Status == HoldPlacing {
			_, p, err = e.placeNow(ctx, h, nil, "sweep")
		} else {
			p, err = e.refresh(ctx, h, "sweep", nil)
		}
		out = append(out, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("refresh hold %s: %w", h.Matter, err))
		}
	}
	return out, errors.Join(errs...)
}

// refresh places h again from its seeds in the store and its selectors
// resolved anew (see place for recorded).
func (e *Engine) refresh(ctx context.Context, h Hold, actor string, recorded func(context.Context) error) (Placement, error) {
	var seeds []*index.Record
	seen := map[index.DocID]bool{}
	err := e.st.HeldDocs(ctx, h.Matter, true, func(d HeldDoc) error {
		seen[d.Document.ID] = true
		return nil
	})
	if err != nil {
		return Placement{}, fmt.Errorf("load seeds: %w", err)
	}
	for id := range seen {
		r, err := e.ix.Get(ctx, id)
		if errors.Is(err, index.ErrNotFound) {
			continue // removed from the index; its held record stays
		}
		if err != nil {
			return Placement{}, fmt.Errorf("load seed %d: %w", id, err)
		}
		seeds = append(seeds, r)
	}
	if len(h.Selectors) > 0 {
		more, err := e.resolveSeeds(ctx, HoldSpec{Matter: h.Matter, Selectors: h.Selectors})
		if err != nil {
			return Placement{}, err
		}
		var add []HeldDoc
		now := e.now()
		for _, r := range more {
			if !seen[r.ID] {
				seen[r.ID] = true
				seeds = append(seeds, r)
				add = append(add, HeldDoc{Matter: h.Matter, Document: RefOf(r), Object: ObjectOf(r), Content: r.Content, Seed: true, Placed: now})
			}
		}
		if _, err := e.st.AddHeld(ctx, add); err != nil {
			return Placement{}, fmt.Errorf("record seeds: %w", err)
		}
		if len(add) > 0 {
			e.invalidate()
		}
	}
	return e.place(ctx, h, seeds, actor, recorded)
}

// HeldDocuments returns the ids of every document matter holds (seeds and
// near-copies, released holds included: a matter's documents stay its
// documents), or ErrNotFound for an unknown matter.
func (e *Engine) HeldDocuments(ctx context.Context, matter string) ([]index.DocID, error) {
	if _, err := e.st.Hold(ctx, matter); err != nil {
		return nil, fmt.Errorf("documents of matter %s: %w", matter, err)
	}
	var ids []index.DocID
	if err := e.st.HeldDocs(ctx, matter, false, func(h HeldDoc) error {
		ids = append(ids, h.Document.ID)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("documents of matter %s: %w", matter, err)
	}
	return ids, nil
}
