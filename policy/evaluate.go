package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/simdex/simdex/index"
)

// docFacts gathers the candidates of one document during an evaluation.
type docFacts struct {
	rec   *index.Record
	cands []Candidate
	keeps []Keep
}

// Evaluate applies retention to every document. A document due for
// disposition under an explicit rule brings each of its near-copies (in
// the rule's scope) into the evaluation, as an implicit candidate with
// its evidence; every document is then decided by Decide, with the holds
// on its object version, including holds released less than the grace
// period ago. Documents decided OutcomeFlag get a disposition-due flag
// (never twice). Every flag decision names the flag raised for it by an
// earlier run (Decision.Flag), and Run.Flagged counts the others: the
// flags a dry run would add, the flags a real run added.
//
// A dry run writes nothing and returns every decision with its reason. A
// real run is recorded (start, end, counts) and audited, and also
// refreshes every active hold (RefreshHolds); its Decisions are returned
// but not stored.
func (e *Engine) Evaluate(ctx context.Context, dryRun bool) (Run, error) {
	run := Run{DryRun: dryRun, Started: e.now()}
	if !dryRun {
		id, err := e.st.StartRun(ctx, run)
		if err != nil {
			return run, fmt.Errorf("record run: %w", err)
		}
		run.ID = id
	}
	err := e.evaluate(ctx, &run)
	if !dryRun {
		ps, herr := e.RefreshHolds(ctx)
		for _, p := range ps {
			run.HoldMatches += p.Flagged
		}
		if herr != nil {
			run.Errors++
			err = errors.Join(err, herr)
		}
		run.Ended = e.now()
		if err != nil {
			run.Error = err.Error()
		}
		if ferr := e.st.FinishRun(ctx, run); ferr != nil {
			err = errors.Join(err, fmt.Errorf("record run %d: %w", run.ID, ferr))
		}
		a := AuditEntry{Time: run.Ended, Actor: "scheduler", Action: AuditRun, Object: fmt.Sprintf("run:%d", run.ID),
			Details: details(map[string]any{"documents": run.Documents, "due": run.Due, "held": run.Held,
				"flagged": run.Flagged, "hold_matches": run.HoldMatches, "errors": run.Errors})}
		if aerr := e.st.Append(ctx, a); aerr != nil {
			err = errors.Join(err, fmt.Errorf("audit run %d: %w", run.ID, aerr))
		}
	} else {
		run.Ended = e.now()
	}
	return run, err
}

func (e *Engine) evaluate(ctx context.Context, run *Run) error {
	rules, keeps, err := e.st.Rules(ctx)
	if err != nil {
		return fmt.Errorf("load rules: %w", err)
	}
	cfg := e.cfg
	cfg.Retention, cfg.KeepAtLeast = rules, keeps
	compiled, err := compileRules(&cfg)
	if err != nil {
		return fmt.Errorf("compile rules: %w", err)
	}
	now := run.Started
	facts := map[index.DocID]*docFacts{}
	err = e.ix.Documents(ctx, func(r *index.Record) error {
		if r.Parent != 0 || isSeedFile(r) {
			return nil // children follow their object, or come in as near-copies; seed files are evidence
		}
		run.Documents++
		var f *docFacts
		for i := range compiled {
			ru := &compiled[i]
			if !ru.Selector.Match(r) {
				continue
			}
			t, ok := ageOf(ru.Basis, r)
			if !ok {
				continue
			}
			if f == nil {
				f = &docFacts{rec: r}
				facts[r.ID] = f
			}
			due := ru.period.After(t)
			if ru.keep {
				f.keeps = append(f.keeps, Keep{Rule: ru.Name, Until: due})
				continue
			}
			f.cands = append(f.cands, Candidate{Rule: ru.Name, Explicit: true, Due: due, Action: ru.Action, Deletable: ru.deletable})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	// Sources: documents due under their own rules (holds aside). Their
	// near-copies inherit the rule as implicit candidates.
	type source struct {
		f *docFacts
		w Candidate
	}
	var sources []source
	scopes := map[string]index.Thresholds{}
	for i := range compiled {
		scopes[compiled[i].Name] = compiled[i].scope
	}
	for _, f := range facts {
		v := Decide(Facts{Now: now, Candidates: f.cands, Keeps: f.keeps})
		if v.Outcome == OutcomeFlag {
			sources = append(sources, source{f, v.Winner})
		}
	}
	slices.SortFunc(sources, func(a, b source) int { return int(a.f.rec.ID - b.f.rec.ID) })
	var mu sync.Mutex
	err = forEach(ctx, e.work, sources, func(ctx context.Context, s source) error {
		ms, err := e.similar(ctx, s.f.rec.ID, thresholds(scopes[s.w.Rule]))
		if err != nil {
			return fmt.Errorf("near-copies of %d: %w", s.f.rec.ID, err)
		}
		src := RefOf(s.f.rec)
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			if isSeedFile(m.Record) {
				continue
			}
			f := facts[m.Record.ID]
			if f == nil {
				f = &docFacts{rec: m.Record}
				facts[m.Record.ID] = f
			}
			sc := m.Scores
			f.cands = append(f.cands, Candidate{Rule: s.w.Rule, Due: s.w.Due, Action: s.w.Action,
				Deletable: s.w.Deletable, Source: &src, Scores: &sc})
		}
		return nil
	})
	if err != nil {
		run.Errors++
		return err
	}
	ids := make([]index.DocID, 0, len(facts))
	for id := range facts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	grace := now.Add(-e.cfg.ReleaseGrace)
	var flags []Flag
	for _, id := range ids {
		f := facts[id]
		v := Decide(Facts{Now: now, Candidates: f.cands, Keeps: f.keeps})
		if v.Outcome == "" {
			continue
		}
		if v.Outcome == OutcomeFlag {
			hs, err := e.st.HoldsOn(ctx, ObjectOf(f.rec))
			if err != nil {
				run.Errors++
				return fmt.Errorf("holds on %d: %w", id, err)
			}
			var matters []string
			for _, h := range hs {
				if h.Status == HoldActive || h.Released.After(grace) {
					matters = append(matters, h.Matter)
				}
			}
			v = Decide(Facts{Now: now, Candidates: f.cands, Keeps: f.keeps, Holds: matters})
		}
		w := v.Winner
		ev := Evidence{Scores: w.Scores, Role: "selected", Due: w.Due, Action: w.Action,
			Deletable: w.Deletable && f.rec.Parent == 0}
		if !w.Explicit {
			ev.Role = "near-copy"
		}
		ev.Note = v.Reason
		d := Decision{Document: RefOf(f.rec), Source: w.Source, Rule: w.Rule, Outcome: v.Outcome, Reason: v.Reason, Evidence: ev}
		switch v.Outcome {
		case OutcomeFlag:
			run.Due++
			if d.Flag, err = e.raisedBefore(ctx, id, w.Rule); err != nil {
				run.Errors++
				return err
			}
			if d.Flag == 0 {
				run.Flagged++ // what a dry run would flag; a real run counts what it added
			}
			flags = append(flags, Flag{Kind: KindDispositionDue, Document: d.Document, Object: ObjectOf(f.rec),
				Source: w.Source, Rule: w.Rule, Evidence: ev})
		case OutcomeHeld, OutcomeKept:
			run.Held++
		}
		run.Decisions = append(run.Decisions, d)
	}
	if run.DryRun {
		return nil
	}
	added, err := e.raise(ctx, flags, "scheduler")
	run.Flagged = len(added)
	if err != nil {
		run.Errors++
	}
	return err
}

// raisedBefore returns the id of the disposition flag already raised for
// document id under rule, or 0.
func (e *Engine) raisedBefore(ctx context.Context, id index.DocID, rule string) (int64, error) {
	fs, err := e.st.Flags(ctx, FlagFilter{Kind: KindDispositionDue, Document: id, Rule: rule, Limit: 1})
	if err != nil {
		return 0, fmt.Errorf("flags of %d: %w", id, err)
	}
	if len(fs) == 0 {
		return 0, nil
	}
	return fs[0].ID, nil
}
