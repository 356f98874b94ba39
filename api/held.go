package api

import (
	"net/http"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// HeldDocument is one document a hold holds, and why.
type HeldDocument struct {
	Document policy.DocRef `json:"document"`
	// Seed is true for the hold's seeds, held as such.
	Seed   bool      `json:"seed"`
	Placed time.Time `json:"placed"`
	// Role, Scores and MatchedSeed come from the hold-match flag raised
	// when the document was held: "near-copy", "duplicate" or "selected",
	// its scores against the seed it matched, and that seed.
	Role        string         `json:"role,omitempty"`
	Scores      *index.Scores  `json:"scores,omitempty"`
	MatchedSeed *policy.DocRef `json:"matched_seed,omitempty"`
}

// heldDocuments answers GET /api/v1/holds/{matter}/documents: every
// document the hold holds, by name, with why.
func (a *Server) heldDocuments(w http.ResponseWriter, r *http.Request) {
	matter := r.PathValue("matter")
	if !a.matterVisible(w, r, matter) {
		return
	}
	held, err := a.Policy.Held(r.Context(), matter)
	if err != nil {
		a.policyError(w, "list held documents", err)
		return
	}
	why := map[index.DocID]policy.Flag{}
	for after := int64(0); ; {
		fs, err := a.Policy.Flags(r.Context(), policy.FlagFilter{Kind: policy.KindHoldMatch, Matter: matter, After: after, Limit: 1000})
		if err != nil {
			a.policyError(w, "list held documents", err)
			return
		}
		for _, f := range fs {
			if _, ok := why[f.Document.ID]; !ok {
				why[f.Document.ID] = f
			}
			after = f.ID
		}
		if len(fs) < 1000 {
			break
		}
	}
	out := make([]HeldDocument, 0, len(held))
	for _, h := range held {
		d := HeldDocument{Document: h.Document, Seed: h.Seed, Placed: h.Placed}
		if f, ok := why[h.Document.ID]; ok {
			d.Role, d.Scores, d.MatchedSeed = f.Evidence.Role, f.Evidence.Scores, f.Source
		}
		out = append(out, d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"documents": out})
}
