package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

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

// evaluate decides every document selected by a rule, or a near-copy of
// one due under it, into run, and raises the disposition-due flags of a
// real run.
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
	facts, err := e.gather(ctx, compiled, run)
	if err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	if err := e.propagate(ctx, compiled, facts, run.Started); err != nil {
		run.Errors++
		return err
	}
	flags, held, err := e.decideAll(ctx, facts, run)
	if err != nil {
		run.Errors++
		return err
	}
	if run.DryRun {
		return nil
	}
	added, err := e.raise(ctx, flags, "scheduler")
	run.Flagged = len(added)
	// An approved deletion a hold now covers will not be carried out: its
	// flag says so rather than reading approved.
	for _, id := range slices.Sorted(maps.Keys(held)) {
		err = errors.Join(err, e.refuseHeld(ctx, id, held[id], "scheduler"))
	}
	if err != nil {
		run.Errors++
	}
	return err
}

// gather returns the explicit candidates and keeps of every top-level
// document a rule selects, counting the documents read in run.
func (e *Engine) gather(ctx context.Context, compiled []rule, run *Run) (map[index.DocID]*docFacts, error) {
	facts := map[index.DocID]*docFacts{}
	err := e.ix.Documents(ctx, func(r *index.Record) error {
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
	return facts, err
}

// propagate adds to facts the near-copies of every document due under
// its own rules at now (holds aside), each an implicit candidate of that
// rule within the rule's scope, with its evidence.
func (e *Engine) propagate(ctx context.Context, compiled []rule, facts map[index.DocID]*docFacts, now time.Time) error {
	type source struct {
		f *docFacts
		w Candidate
	}
	var sources []source
	scopes := map[string]index.Scope{}
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
	return forEach(ctx, e.work, sources, func(ctx context.Context, s source) error {
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
}

// decideAll decides every document of facts in id order into run, and
// returns the disposition-due flags to raise and the matters holding
// each document decided held.
func (e *Engine) decideAll(ctx context.Context, facts map[index.DocID]*docFacts, run *Run) ([]Flag, map[index.DocID][]string, error) {
	ids := slices.Sorted(maps.Keys(facts))
	placing, err := e.unrecorded(ctx)
	if err != nil {
		return nil, nil, err
	}
	var flags []Flag
	held := map[index.DocID][]string{}
	for _, id := range ids {
		f := facts[id]
		v, matters, err := e.decideHeld(ctx, f, run.Started, placing)
		if err != nil {
			return nil, nil, err
		}
		if v.Outcome == OutcomeHeld && len(matters) > 0 {
			held[id] = matters
		}
		if v.Outcome == "" {
			continue
		}
		w := v.Winner
		ev := Evidence{Scores: w.Scores, Role: "selected", Due: w.Due, Action: w.Action,
			Deletable: w.Deletable && f.rec.Parent == 0, Note: v.Reason}
		if !w.Explicit {
			ev.Role = "near-copy"
		}
		d := Decision{Document: RefOf(f.rec), Source: w.Source, Rule: w.Rule, Outcome: v.Outcome, Reason: v.Reason, Evidence: ev}
		switch v.Outcome {
		case OutcomeFlag:
			run.Due++
			if d.Flag, err = e.raisedBefore(ctx, id, w.Rule); err != nil {
				return nil, nil, err
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
	return flags, held, nil
}

// decideHeld decides f at now, with the holds on its object version when
// it is due: active ones, those released within the grace period, and
// those of placing, the matters whose placements have not recorded every
// near-copy yet (any document may be one). matters are those holds.
func (e *Engine) decideHeld(ctx context.Context, f *docFacts, now time.Time, placing []string) (v Verdict, matters []string, err error) {
	v = Decide(Facts{Now: now, Candidates: f.cands, Keeps: f.keeps})
	if v.Outcome != OutcomeFlag {
		return v, nil, nil
	}
	hs, err := e.st.HoldsOn(ctx, ObjectOf(f.rec))
	if err != nil {
		return v, nil, fmt.Errorf("holds on %d: %w", f.rec.ID, err)
	}
	grace := now.Add(-e.cfg.ReleaseGrace)
	for _, h := range hs {
		if h.Status == HoldActive || h.Released.After(grace) {
			matters = append(matters, h.Matter)
		}
	}
	for _, m := range placing {
		if !slices.Contains(matters, m) {
			matters = append(matters, m+" (being placed: its near-copies are not all recorded yet)")
		}
	}
	return Decide(Facts{Now: now, Candidates: f.cands, Keeps: f.keeps, Holds: matters}), matters, nil
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
