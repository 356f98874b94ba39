package policy

import (
	"time"

	"github.com/simdex/simdex/index"
)

// The pure half of the ingest check: given a document, the holds and its
// near-copies, which holds hold it and what that records. Nothing here
// reads or writes; Engine.checkOne loads the inputs and commits the
// result.

// holdHit is a hold that holds a document: as a seed, or as a near-copy
// of source (sourceID until it is loaded; 0 when there is none to name)
// with scores.
type holdHit struct {
	hold     Hold
	seed     bool
	scores   index.Scores
	source   *index.Record
	sourceID index.DocID
}

// matchHolds returns the holds that hold r, in the order of holds. ws are
// r's near-copies among the seeds (when watching, the only ones looked
// at), ms those in the whole index. A seed file of another matter is
// never held.
func matchHolds(r *index.Record, holds []cachedHold, ws []index.WatchMatch, ms []index.Match, watching bool) []holdHit {
	var hits []holdHit
	for i := range holds {
		if foreignSeed(r, holds[i].Matter) {
			continue
		}
		if hit, ok := holds[i].match(r, ws, ms, watching); ok {
			hits = append(hits, hit)
		}
	}
	return hits
}

// match reports whether h holds r: as a seed (listed, or chosen by a
// selector), or as a near-copy of a seed within h.Scope, found by
// identical content first, then among ws, then (without a watchlist)
// among ms.
func (h *cachedHold) match(r *index.Record, ws []index.WatchMatch, ms []index.Match, watching bool) (holdHit, bool) {
	hit := holdHit{hold: h.Hold, seed: h.seeds[r.ID] || h.selects(r)}
	if hit.seed {
		return hit, true
	}
	if sid, ok := h.contents[r.Content]; ok && r.Content != 0 {
		hit.scores = index.Scores{Exact: true, Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1}
		if sid != r.ID {
			hit.sourceID = sid
		}
		return hit, true
	}
	for i := range ws {
		if sid, ok := h.contents[ws[i].Content]; ok && inScope(ws[i].Scores, h.Scope) {
			hit.scores, hit.sourceID = ws[i].Scores, sid
			return hit, true
		}
	}
	if watching {
		return hit, false
	}
	for i := range ms {
		m := &ms[i]
		if _, ok := h.contents[m.Record.Content]; (ok || h.seeds[m.Record.ID]) && inScope(m.Scores, h.Scope) {
			hit.scores, hit.source = m.Scores, m.Record
			return hit, true
		}
	}
	return hit, false
}

// selects reports whether one of h's selectors chooses r as a seed.
func (h *cachedHold) selects(r *index.Record) bool {
	for _, sel := range h.Selectors {
		if sel.Match(r) {
			return true
		}
	}
	return false
}

// ingestResult is what the ingest check of one document commits.
type ingestResult struct {
	// matters hold the document, in the order of the hits.
	matters []string
	// held are its held records, one per matter, placed at now.
	held []HeldDoc
	// flags are its hold-match flags, then its duplicate-upload flag.
	flags []Flag
	// enforce are the holds in mode hold: their legal hold goes on.
	enforce []Hold
}

// outcome is what r's hits and its near-copies ms in the index record at
// now: a held record and a hold-match flag per hit, and the
// duplicate-upload flag when r copies an older document.
func (e *Engine) outcome(r *index.Record, hits []holdHit, ms []index.Match, now time.Time) ingestResult {
	var res ingestResult
	for _, hit := range hits {
		h := hit.hold
		res.matters = append(res.matters, h.Matter)
		res.held = append(res.held, HeldDoc{Matter: h.Matter, Document: RefOf(r), Object: ObjectOf(r), Content: r.Content, Seed: hit.seed, Placed: now})
		if hit.seed {
			res.flags = append(res.flags, holdFlag(h, r, nil, nil, "seed"))
		} else {
			var src *DocRef
			if hit.source != nil {
				s := RefOf(hit.source)
				src = &s
			}
			sc := hit.scores
			res.flags = append(res.flags, holdFlag(h, r, src, &sc, "near-copy"))
		}
		if h.Mode == ModeHold {
			res.enforce = append(res.enforce, h)
		}
	}
	if f, ok := e.duplicate(r, ms); ok {
		res.flags = append(res.flags, f)
	}
	return res
}
