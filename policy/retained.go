package policy

import (
	"context"
	"errors"
	"fmt"

	"github.com/simdex/simdex/index"
)

// errFound stops a walk of held documents once the one sought is found.
var errFound = errors.New("found")

// HoldingMatters returns the matters whose active holds cover the object
// version stored under the top-level index key indexKey with versionID
// (any of its documents held: an attachment counts), and the matters
// whose placements are pending and not yet Recorded: until they are, any
// version may turn out to be one of their near-copies. The daemon asks it
// before applying a deletion at the source: a held version stays in the
// index, marked deleted at source, until every hold on it is released
// (and one a placement kept, once the placement has recorded its
// near-copies without it).
func (e *Engine) HoldingMatters(ctx context.Context, indexKey, versionID string) ([]string, error) {
	placing, err := e.unrecorded(ctx)
	if err != nil {
		return nil, fmt.Errorf("look up holds on %s: %w", indexKey, err)
	}
	matters, err := e.holdingMatters(ctx, indexKey, versionID)
	if err != nil {
		return nil, err
	}
	return addUnrecorded(matters, placing), nil
}

// holdingMatters returns the matters whose active holds cover the
// version, from their held records.
func (e *Engine) holdingMatters(ctx context.Context, indexKey, versionID string) ([]string, error) {
	holds, err := e.st.HoldsOn(ctx, Object{IndexKey: indexKey})
	if err != nil {
		return nil, fmt.Errorf("look up holds on %s: %w", indexKey, err)
	}
	var matters []string
	for _, h := range holds {
		if h.Status != HoldActive {
			continue
		}
		err := e.st.HeldDocs(ctx, h.Matter, false, func(d HeldDoc) error {
			if d.Object.IndexKey == indexKey && d.Object.VersionID == versionID {
				return errFound
			}
			return nil
		})
		switch {
		case errors.Is(err, errFound):
			matters = append(matters, h.Matter)
		case err != nil:
			return nil, fmt.Errorf("look up documents held for %s: %w", h.Matter, err)
		}
	}
	return matters, nil
}

// Held returns the documents matter's hold holds, its seeds included.
func (e *Engine) Held(ctx context.Context, matter string) ([]HeldDoc, error) {
	if _, err := e.st.Hold(ctx, matter); err != nil {
		return nil, fmt.Errorf("documents of matter %s: %w", matter, err)
	}
	var out []HeldDoc
	if err := e.st.HeldDocs(ctx, matter, false, func(d HeldDoc) error {
		out = append(out, d)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("documents of matter %s: %w", matter, err)
	}
	return out, nil
}

// HeldDeleted flags the held documents ids, deleted at their source by
// event, for the matters holding them (KindHoldSourceChanged, Rule
// ChangeDeleted): an alarm of possible spoliation, alerted to the
// matters' reviewers and audited. It is idempotent.
func (e *Engine) HeldDeleted(ctx context.Context, ids []index.DocID, event string) error {
	return e.heldSourceChanged(ctx, ids, ChangeDeleted, event)
}

// HeldSuperseded flags the held documents ids, overwritten at their
// source by event (an edit in place), like HeldDeleted (Rule
// ChangeSuperseded).
func (e *Engine) HeldSuperseded(ctx context.Context, ids []index.DocID, event string) error {
	return e.heldSourceChanged(ctx, ids, ChangeSuperseded, event)
}

// heldSourceChanged raises the hold-source-changed flags of ids, one per
// document and holding matter, change being their Rule.
func (e *Engine) heldSourceChanged(ctx context.Context, ids []index.DocID, change, event string) error {
	var flags []Flag
	for _, id := range ids {
		r, err := e.ix.Get(ctx, id)
		if errors.Is(err, index.ErrNotFound) {
			continue // purged meanwhile: nothing held to flag
		}
		if err != nil {
			return fmt.Errorf("flag held document %d %s: %w", id, change, err)
		}
		matters, err := e.HoldingMatters(ctx, r.Key, r.VersionID)
		if err != nil {
			return fmt.Errorf("flag held document %d %s: %w", id, change, err)
		}
		for _, m := range matters {
			flags = append(flags, Flag{Kind: KindHoldSourceChanged, Document: RefOf(r), Object: ObjectOf(r), Matter: m, Rule: change,
				Evidence: Evidence{Role: "held", Note: event}})
		}
	}
	if _, err := e.raise(ctx, flags, "ingest"); err != nil {
		return fmt.Errorf("flag held documents %s: %w", change, err)
	}
	return nil
}
