package policy

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/simdex/simdex/index"
)

// Match reports whether r is selected. Object keys are matched within
// their bucket for S3 documents; children (attachments, archive members)
// are matched on their top-level object's location and their own
// media type. Meta and Tags match the metadata the origin delivered
// (index.Doc.OriginMeta), which a child has none of.
func (s Selector) Match(r *index.Record) bool {
	o := ObjectOf(r)
	if s.Source != "" {
		if ok, _ := path.Match(s.Source, r.Source); !ok {
			return false
		}
	}
	if s.Bucket != "" && s.Bucket != o.Bucket {
		return false
	}
	if s.Prefix != "" && !strings.HasPrefix(o.Key, s.Prefix) {
		return false
	}
	if s.Glob != "" {
		if ok, _ := path.Match(s.Glob, o.Key); !ok {
			return false
		}
	}
	if s.ContentType != "" {
		mt, _, _ := strings.Cut(r.MediaType, ";")
		if ok, _ := path.Match(s.ContentType, strings.TrimSpace(mt)); !ok {
			return false
		}
	}
	origin := r.OriginMeta() // user metadata and tags, never simdex's own fields
	for _, want := range []map[string]string{s.Meta, s.Tags} {
		for k, v := range want {
			if got, ok := origin[k]; !ok || got != v {
				return false
			}
		}
	}
	return true
}

// ageOf returns the time a rule's period counts from, or false when the
// document has none (no such metadata date).
func ageOf(basis string, r *index.Record) (time.Time, bool) {
	switch {
	case basis == "" || basis == BasisModTime:
		return r.ModTime, !r.ModTime.IsZero()
	case basis == BasisIndexed:
		return r.IndexedAt, !r.IndexedAt.IsZero()
	case strings.HasPrefix(basis, BasisMetaPrefix):
		k := strings.TrimPrefix(basis, BasisMetaPrefix)
		v, ok := r.Meta[k]
		if !ok && !index.Reserved(k) { // a date the origin gave, under a name that is not simdex's
			v, ok = r.OriginMeta()[k]
		}
		if !ok {
			return time.Time{}, false
		}
		for _, layout := range []string{time.RFC3339Nano, time.RFC3339, "2006-01-02"} {
			if t, err := time.Parse(layout, strings.TrimSpace(v)); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// rule is a compiled retention or keep_at_least rule.
type rule struct {
	RetentionRule
	period    Period
	keep      bool
	deletable bool
	scope     index.Scope
}

func compileRules(c *Config) ([]rule, error) {
	var out []rule
	for _, r := range c.Retention {
		p, err := ParsePeriod(r.Period)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.Name, err)
		}
		sc := c.NearCopies
		if r.NearCopies != nil {
			sc = *r.NearCopies
		}
		out = append(out, rule{RetentionRule: r, period: p, scope: sc,
			deletable: r.Action == ActionDelete && r.Mode != ModeReport})
	}
	for _, k := range c.KeepAtLeast {
		p, err := ParsePeriod(k.Period)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", k.Name, err)
		}
		out = append(out, rule{RetentionRule: RetentionRule{Name: k.Name, Selector: k.Selector, Basis: k.Basis, Period: k.Period},
			period: p, keep: true})
	}
	return out, nil
}

// Candidate is one retention rule that applies to a document: directly
// (Explicit, its selector matches) or through a near-copy due under it.
type Candidate struct {
	Rule      string
	Explicit  bool
	Due       time.Time
	Action    string
	Deletable bool
	// Source and Scores are the near-copy that brought an implicit
	// candidate in.
	Source *DocRef
	Scores *index.Scores
}

// Keep is a keep_at_least rule that applies to a document until Until.
type Keep struct {
	Rule  string
	Until time.Time
}

// Facts are what Decide needs about one document.
type Facts struct {
	Now        time.Time
	Candidates []Candidate
	Keeps      []Keep
	// Holds are the active (or recently released) matters holding it.
	Holds []string
}

// Verdict is Decide's answer. Outcome is empty when nothing is due.
type Verdict struct {
	Outcome Outcome
	Winner  Candidate
	Reason  string
}

// Decide applies the precedence of retention and holds (Purview, Vault):
//
//  1. An explicit rule beats one inherited from a near-copy: implicit
//     candidates count only when no explicit rule applies.
//  2. The longest retention wins: the candidate due last decides, and
//     nothing is due before it is (on a tie, review beats delete).
//  3. keep_at_least beats every shorter deletion.
//  4. A hold beats every deletion.
func Decide(f Facts) Verdict {
	var cands []Candidate
	for _, c := range f.Candidates {
		if c.Explicit {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		cands = f.Candidates
	}
	if len(cands) == 0 {
		return Verdict{}
	}
	w := cands[0]
	for _, c := range cands[1:] {
		switch {
		case c.Due.After(w.Due):
			w = c
		case c.Due.Equal(w.Due) && w.Action == ActionDelete && c.Action == ActionReview:
			w = c
		}
	}
	if w.Due.After(f.Now) {
		for _, c := range cands {
			if !c.Due.After(f.Now) {
				return Verdict{Outcome: OutcomeKept, Winner: w,
					Reason: fmt.Sprintf("due under %s, but %s retains it until %s (the longest retention wins)", c.Rule, w.Rule, w.Due.Format(time.DateOnly))}
			}
		}
		return Verdict{}
	}
	for _, k := range f.Keeps {
		if k.Until.After(f.Now) {
			return Verdict{Outcome: OutcomeKept, Winner: w,
				Reason: fmt.Sprintf("due under %s, but keep_at_least rule %s retains it until %s", w.Rule, k.Rule, k.Until.Format(time.DateOnly))}
		}
	}
	if len(f.Holds) > 0 {
		return Verdict{Outcome: OutcomeHeld, Winner: w,
			Reason: fmt.Sprintf("due under %s, but held for matter %s (a hold beats every deletion)", w.Rule, strings.Join(f.Holds, ", "))}
	}
	how := "directly"
	if !w.Explicit && w.Source != nil {
		how = fmt.Sprintf("as a near-copy of %s (%d)", w.Source.Name, w.Source.ID)
	}
	return Verdict{Outcome: OutcomeFlag, Winner: w,
		Reason: fmt.Sprintf("due under %s since %s, %s; action %s", w.Rule, w.Due.Format(time.DateOnly), how, w.Action)}
}
