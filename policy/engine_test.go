package policy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

var ctx = context.Background()

func texts(t testing.TB) map[string]string {
	out := map[string]string{}
	for _, n := range []string{"Apache-2.0", "GPL-3.0-only", "MPL-2.0", "EPL-2.0", "CDDL-1.0", "EUPL-1.2", "Artistic-2.0", "OSL-3.0"} {
		out[n] = corpus(t, "spdx/text/"+n+".txt")
	}
	return out
}

func retentionConfig() policy.Config {
	c := policy.DefaultConfig()
	c.Retention = []policy.RetentionRule{
		{Name: "records-7y", Selector: policy.Selector{Bucket: "records"}, Period: "7y", Action: policy.ActionDelete},
		{Name: "archive-30y", Selector: policy.Selector{Bucket: "archive"}, Period: "30y", Action: policy.ActionReview},
	}
	c.KeepAtLeast = []policy.KeepRule{{Name: "tax-10y", Selector: policy.Selector{Prefix: "tax/"}, Period: "10y"}}
	c.ReleaseGrace = 72 * time.Hour
	return c
}

func TestRetentionWithClock(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, retentionConfig())
	ids := en.add(
		doc{key: "young.txt", text: tx["MPL-2.0"], mod: epoch.AddDate(-1, 0, 0)},
		doc{key: "old.txt", text: tx["EPL-2.0"], mod: epoch.AddDate(-8, 0, 0)},
		doc{key: "held.txt", text: tx["CDDL-1.0"], mod: epoch.AddDate(-8, 0, 0)},
		doc{key: "tax/2021.txt", text: tx["EUPL-1.2"], mod: epoch.AddDate(-8, 0, 0)},
	)
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-1", Seeds: []index.DocID{ids[2]}, Scope: policy.DefaultScope(), Mode: policy.ModeReport}, "alice"); err != nil {
		t.Fatal(err)
	}

	dry, err := en.e.Evaluate(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]policy.Outcome{}
	for _, d := range dry.Decisions {
		got[d.Document.Name] = d.Outcome
		if d.Reason == "" {
			t.Errorf("%s: decision without reason", d.Document.Name)
		}
	}
	want := map[string]policy.Outcome{"old.txt": policy.OutcomeFlag, "held.txt": policy.OutcomeHeld, "tax/2021.txt": policy.OutcomeKept}
	for n, o := range want {
		if got[n] != o {
			t.Errorf("dry run: %s = %q, want %q", n, got[n], o)
		}
	}
	if _, ok := got["young.txt"]; ok {
		t.Errorf("dry run: young.txt decided %q, want not due", got["young.txt"])
	}
	if fs := en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue}); len(fs) != 0 {
		t.Fatalf("dry run wrote %d flags", len(fs))
	}
	if runs, _ := en.e.Runs(ctx, 10); len(runs) != 0 {
		t.Fatalf("dry run recorded %d runs", len(runs))
	}

	run, err := en.e.Evaluate(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if run.Flagged != 1 || run.Due != 1 || run.Held != 2 || run.Documents != 4 {
		t.Errorf("run = %+v, want 4 documents, 1 due and flagged, 2 held or kept", run)
	}
	fs := byName(en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue}))
	if f, ok := fs["old.txt"]; !ok || f.Rule != "records-7y" || f.Status != policy.StatusOpen || !f.Evidence.Deletable {
		t.Errorf("old.txt flag = %+v", f)
	}

	// Re-evaluation never duplicates a flag.
	if run, err = en.e.Evaluate(ctx, false); err != nil || run.Flagged != 0 {
		t.Fatalf("second run: flagged %d, err %v", run.Flagged, err)
	}

	// Seven years on, the young document is due as well; the tax record
	// is still kept until its tenth year... which has come too.
	en.clock.Advance(7 * 365 * 24 * time.Hour)
	if run, err = en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	fs = byName(en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue}))
	for _, n := range []string{"old.txt", "young.txt", "tax/2021.txt"} {
		if _, ok := fs[n]; !ok {
			t.Errorf("after 7 years: %s not flagged", n)
		}
	}
	if _, ok := fs["held.txt"]; ok {
		t.Error("held document flagged for disposition")
	}
	if len(fs) != 3 {
		t.Errorf("%d disposition flags, want 3", len(fs))
	}
	runs, err := en.e.Runs(ctx, 10)
	if err != nil || len(runs) != 3 || runs[0].Ended.IsZero() || runs[0].Started.IsZero() {
		t.Errorf("runs = %+v, %v", runs, err)
	}
	if en.pub.count() != len(en.flags(policy.FlagFilter{})) {
		t.Errorf("published %d alerts for %d flags", en.pub.count(), len(en.flags(policy.FlagFilter{})))
	}
}

func TestMetadataBasis(t *testing.T) {
	tx := texts(t)
	c := policy.DefaultConfig()
	c.Retention = []policy.RetentionRule{{Name: "contracts", Selector: policy.Selector{Meta: map[string]string{"class": "contract"}},
		Basis: "meta:expiry", Period: "90d", Action: policy.ActionReview}}
	en := newEnv(t, c)
	en.add(
		doc{key: "a.txt", text: tx["MPL-2.0"], meta: map[string]string{"class": "contract", "expiry": "2029-06-01"}},
		doc{key: "b.txt", text: tx["EPL-2.0"], meta: map[string]string{"class": "contract", "expiry": "2029-12-01"}},
		doc{key: "c.txt", text: tx["CDDL-1.0"], meta: map[string]string{"class": "contract"}},
	)
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	fs := byName(en.flags(policy.FlagFilter{}))
	if _, ok := fs["a.txt"]; !ok || len(fs) != 1 {
		t.Errorf("flags = %v, want a.txt only (b.txt not due, c.txt without a date)", fs)
	}
	if f := fs["a.txt"]; f.Evidence.Deletable {
		t.Error("review rule flag is deletable")
	}
}

// TestPropagation: a document due for disposition brings its near-copies
// with their evidence; a copy with its own rule follows it.
func TestPropagation(t *testing.T) {
	tx := texts(t)
	apache := tx["Apache-2.0"]
	en := newEnv(t, retentionConfig())
	ids := en.add(
		doc{key: "original.txt", text: apache, mod: epoch.AddDate(-8, 0, 0)},
		doc{bucket: "inbox", key: "renamed copy.txt", text: apache, mod: epoch},
		doc{bucket: "inbox", key: "reformatted.txt", text: strings.ToUpper(strings.ReplaceAll(apache, "\n", "\n\n  ")), mod: epoch},
		doc{bucket: "inbox", key: "edited.txt", text: edit(apache, 20, 1), mod: epoch},
		doc{bucket: "archive", key: "kept copy.txt", text: apache, mod: epoch},
		doc{bucket: "inbox", key: "unrelated.txt", text: tx["GPL-3.0-only"], mod: epoch},
	)
	run, err := en.e.Evaluate(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	fs := byName(en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue}))
	for _, n := range []string{"original.txt", "renamed copy.txt", "reformatted.txt", "edited.txt"} {
		f, ok := fs[n]
		if !ok {
			t.Errorf("%s not flagged", n)
			continue
		}
		if f.Rule != "records-7y" {
			t.Errorf("%s: rule %q", n, f.Rule)
		}
		if n == "original.txt" {
			if f.Evidence.Role != "selected" || f.Source != nil {
				t.Errorf("original: evidence %+v source %+v", f.Evidence, f.Source)
			}
			continue
		}
		if f.Source == nil || f.Source.ID != ids[0] || f.Evidence.Scores == nil || f.Evidence.Role != "near-copy" {
			t.Errorf("%s: source %+v evidence %+v, want the original with scores", n, f.Source, f.Evidence)
		}
	}
	if f := fs["renamed copy.txt"]; f.Evidence.Scores != nil && !f.Evidence.Scores.Exact {
		t.Errorf("renamed copy: scores %+v, want exact", f.Evidence.Scores)
	}
	for _, n := range []string{"kept copy.txt", "unrelated.txt"} {
		if _, ok := fs[n]; ok {
			t.Errorf("%s flagged", n)
		}
	}
	if run.Due != 4 {
		t.Errorf("run.Due = %d, want 4", run.Due)
	}
	a := fs["edited.txt"].Alert()
	if a.Kind != "disposition-due" || a.ID == "" || !strings.Contains(a.Summary, "copy of original.txt") || len(a.Evidence) == 0 {
		t.Errorf("alert = %+v", a)
	}
}

func TestHoldPlacementAndIngest(t *testing.T) {
	tx := texts(t)
	apache := tx["Apache-2.0"]
	c := policy.DefaultConfig()
	c.Duplicates = policy.DuplicateConfig{Enabled: true, Scope: index.Scope{Resemblance: 0.9, Containment: 0.95}}
	en := newEnv(t, c)
	ids := en.add(
		doc{key: "seed.txt", text: apache},
		doc{bucket: "inbox", key: "copy.txt", text: apache},
		doc{bucket: "inbox", key: "edited.txt", text: edit(apache, 20, 2)},
		doc{bucket: "inbox", key: "unrelated.txt", text: tx["GPL-3.0-only"]},
	)
	h, p, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-7", Name: "Acme v. Simdex", Reason: "litigation", Owner: "legal",
		Seeds: []index.DocID{ids[0]}, Scope: policy.DefaultScope()}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if h.Mode != policy.ModeHold || p.Flagged != 2 || p.Held != 2 || p.Enforced != 3 {
		t.Errorf("hold %+v placement %+v, want mode hold, 2 flagged, 2 held, 3 enforced", h, p)
	}
	fs := byName(en.flags(policy.FlagFilter{Kind: policy.KindHoldMatch, Matter: "M-7"}))
	for _, n := range []string{"copy.txt", "edited.txt"} {
		f, ok := fs[n]
		if !ok || f.Source == nil || f.Source.ID != ids[0] || !strings.Contains(f.Alert().Summary, "found for matter M-7") {
			t.Errorf("%s: flag %+v", n, f)
		}
	}
	if _, ok := fs["unrelated.txt"]; ok {
		t.Error("unrelated document held")
	}
	for _, k := range []string{"s3:main/records/seed.txt@v1", "s3:main/inbox/copy.txt@v1", "s3:main/inbox/edited.txt@v1"} {
		if !en.enf.held[k] {
			t.Errorf("%s: legal hold not on", k)
		}
	}

	// A near-copy ingested later is held and flagged as it is indexed,
	// and flagged as a duplicate upload; a redelivery changes nothing.
	later := en.add(doc{bucket: "uploads", key: "later.txt", text: edit(apache, 5, 3)})
	checks, err := en.e.CheckIngested(ctx, later)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || len(checks[0].Matters) != 1 || len(checks[0].Flags) != 2 {
		t.Fatalf("checks = %+v, want held for M-7 with a hold-match and a duplicate-upload flag", checks)
	}
	if !en.enf.held["s3:main/uploads/later.txt@v1"] {
		t.Error("later copy: legal hold not on")
	}
	again, err := en.e.CheckIngested(ctx, later)
	if err != nil || len(again[0].Flags) != 0 {
		t.Errorf("redelivery raised %+v, %v", again, err)
	}
	other := en.add(doc{bucket: "uploads", key: "other.txt", text: tx["MPL-2.0"]})
	if checks, err := en.e.CheckIngested(ctx, other); err != nil || len(checks[0].Flags) != 0 || len(checks[0].Matters) != 0 {
		t.Errorf("unrelated upload: %+v, %v", checks, err)
	}
	dups := en.flags(policy.FlagFilter{Kind: policy.KindDuplicateUpload})
	if len(dups) != 1 || dups[0].Document.ID != later[0] || dups[0].Source == nil {
		t.Errorf("duplicate flags = %+v", dups)
	}
	// Approving a duplicate-upload flag confirms it; executing it says
	// that only a disposition-due flag is executed, naming no empty rule.
	if len(dups) == 1 {
		if _, err := en.e.Approve(ctx, dups[0].ID, "carol", "same contract again"); err != nil {
			t.Fatal(err)
		}
		_, err := en.e.Execute(ctx, dups[0].ID, "carol")
		if !errors.Is(err, policy.ErrNotDeletable) || !strings.Contains(err.Error(), "settled by approving or dismissing") || strings.Contains(err.Error(), `rule ""`) {
			t.Errorf("execute a duplicate-upload flag: %v", err)
		}
	}
	for _, k := range []policy.FlagKind{policy.KindDispositionDue, policy.KindHoldMatch, policy.KindDuplicateUpload, policy.KindHoldUnenforced, policy.KindHoldSourceChanged} {
		if !strings.HasPrefix(k.Approving(), "approving ") {
			t.Errorf("%s: Approving() = %q", k, k.Approving())
		}
	}
	if got, err := en.e.Hold(ctx, "M-7"); err != nil || got.Held != 4 {
		t.Errorf("hold = %+v, %v; want 4 held", got, err)
	}

	// Bad input.
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-7", Seeds: []index.DocID{ids[0]}, Scope: policy.DefaultScope()}, "bob"); !errors.Is(err, policy.ErrHoldExists) {
		t.Errorf("same matter: %v", err)
	}
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-8", Seeds: []index.DocID{9999}, Scope: policy.DefaultScope()}, "bob"); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("unknown seed: %v", err)
	}
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-8", Seeds: []index.DocID{ids[0]}, Scope: index.Scope{Resemblance: 2, Containment: 0.8}}, "bob"); !errors.Is(err, policy.ErrBadThreshold) {
		t.Errorf("resemblance 2: %v", err)
	}
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-8", Selectors: []policy.Selector{{Glob: "[x"}}, Scope: policy.DefaultScope()}, "bob"); !errors.Is(err, policy.ErrBadSelector) {
		t.Errorf("bad glob: %v", err)
	}
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-8", Seeds: []index.DocID{ids[0]}, Scope: policy.DefaultScope()}, ""); !errors.Is(err, policy.ErrReasonRequired) {
		t.Errorf("no actor: %v", err)
	}
	if _, err := en.e.ReleaseHold(ctx, "M-7", " ", "alice"); !errors.Is(err, policy.ErrReasonRequired) {
		t.Errorf("release without reason: %v", err)
	}
	if _, err := en.e.ReleaseHold(ctx, "nope", "done", "alice"); !errors.Is(err, policy.ErrNotFound) {
		t.Errorf("release unknown matter: %v", err)
	}
	if _, err := en.e.ReleaseHold(ctx, "M-7", "settled", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.ReleaseHold(ctx, "M-7", "settled", "alice"); !errors.Is(err, policy.ErrHoldReleased) {
		t.Errorf("second release: %v", err)
	}
	// Released: a new copy is no longer held.
	after := en.add(doc{bucket: "uploads", key: "after.txt", text: edit(apache, 4, 9)})
	if checks, err := en.e.CheckIngested(ctx, after); err != nil || len(checks[0].Matters) != 0 {
		t.Errorf("after release: %+v, %v", checks, err)
	}
}

func TestHoldBySelectorSeedsLaterDocuments(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, policy.DefaultConfig())
	en.add(doc{bucket: "legal", key: "memo.txt", text: tx["OSL-3.0"], meta: map[string]string{"custodian": "bob"}})
	_, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-9", Scope: policy.DefaultScope(), Mode: policy.ModeReport,
		Selectors: []policy.Selector{{Meta: map[string]string{"custodian": "bob"}}}}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	// New documents of the custodian are seeds; a copy of each is held.
	// The seeds extend the check's cache of holds: it is not reloaded
	// from the store for each.
	var rebuilds int64
	for i, name := range []string{"Artistic-2.0", "EPL-2.0", "MPL-2.0"} {
		ids := en.add(doc{bucket: "legal", key: name + ".txt", text: tx[name], meta: map[string]string{"custodian": "bob"}})
		if cs, err := en.e.CheckIngested(ctx, ids); err != nil || len(cs[0].Matters) != 1 {
			t.Fatalf("selector seed %s: %+v, %v", name, cs, err)
		}
		if i == 0 {
			rebuilds = policy.CacheRebuilds(en.e)
		}
	}
	for _, name := range []string{"Artistic-2.0", "EPL-2.0", "MPL-2.0"} {
		cp := en.add(doc{bucket: "inbox", key: "fwd-" + name + ".txt", text: "FW: " + tx[name]})
		if cs, err := en.e.CheckIngested(ctx, cp); err != nil || len(cs[0].Matters) != 1 {
			t.Fatalf("copy of selector seed %s: %+v, %v", name, cs, err)
		}
	}
	if got := policy.CacheRebuilds(en.e); got != rebuilds {
		t.Errorf("hold cache reloaded %d times for seeds the check added itself, want 0", got-rebuilds)
	}
	if len(en.enf.held) != 0 {
		t.Error("report mode turned legal holds on")
	}
}

// TestSelectorSeedsFromConcurrentChecks: seeds recorded by concurrent
// ingest checks all reach the hold cache, whichever extends it and
// whichever finds it stale; copies of each seed are then held.
func TestSelectorSeedsFromConcurrentChecks(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, policy.DefaultConfig())
	names := []string{"Apache-2.0", "GPL-3.0-only", "MPL-2.0", "EPL-2.0", "CDDL-1.0", "EUPL-1.2", "Artistic-2.0", "OSL-3.0"}
	seeds := make([][]index.DocID, len(names))
	for i, name := range names {
		seeds[i] = en.add(doc{bucket: "legal", key: "eve/" + name + ".txt", text: tx[name], meta: map[string]string{"custodian": "eve"}})
		if i == 0 { // a hold needs a document to start from
			_, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-10", Scope: policy.DefaultScope(), Mode: policy.ModeReport,
				Selectors: []policy.Selector{{Meta: map[string]string{"custodian": "eve"}}}}, "alice")
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cs, err := en.e.CheckIngested(ctx, seeds[i]); err != nil || len(cs[0].Matters) != 1 {
				t.Errorf("selector seed %s: %+v, %v", names[i], cs, err)
			}
		}()
	}
	wg.Wait()
	for _, name := range names {
		cp := en.add(doc{bucket: "inbox", key: "fwd-" + name + ".txt", text: "FW: " + tx[name]})
		if cs, err := en.e.CheckIngested(ctx, cp); err != nil || len(cs[0].Matters) != 1 {
			t.Errorf("copy of selector seed %s: %+v, %v", name, cs, err)
		}
	}
}

// dueFlag indexes one document due under records-7y, evaluates, and
// returns its flag.
func dueFlag(t *testing.T, en *env, key, text string) policy.Flag {
	t.Helper()
	ids := en.add(doc{key: key, text: text, mod: epoch.AddDate(-8, 0, 0)})
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	fs := en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue, Document: ids[0]})
	if len(fs) != 1 {
		t.Fatalf("%s: %d flags", key, len(fs))
	}
	return fs[0]
}

func TestTwoPhaseDeletion(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, retentionConfig())
	f := dueFlag(t, en, "old.txt", tx["EPL-2.0"])
	if _, err := en.e.Execute(ctx, f.ID, "carol"); !errors.Is(err, policy.ErrFlagState) {
		t.Fatalf("execute before approval: %v", err)
	}
	if _, err := en.e.Approve(ctx, f.ID, "carol", ""); !errors.Is(err, policy.ErrReasonRequired) {
		t.Fatalf("approve without reason: %v", err)
	}
	if _, err := en.e.Approve(ctx, 424242, "carol", "ok"); !errors.Is(err, policy.ErrNotFound) {
		t.Fatalf("approve unknown flag: %v", err)
	}
	approved, err := en.e.Approve(ctx, f.ID, "carol", "past retention, no matter")
	if err != nil {
		t.Fatal(err)
	}
	// A refused deletion reads refused, with its reason, and keeps its
	// approver and approval time (part of the proof of a later disposal);
	// each refusal is audited flag.refuse.
	refused := func(when, reason string) {
		t.Helper()
		got, err := en.e.Flag(ctx, f.ID)
		if err != nil || got.Status != policy.StatusRefused || got.Actor != approved.Actor || !strings.HasPrefix(got.Reason, reason) || !got.Updated.Equal(approved.Updated) {
			t.Errorf("flag after %s: %+v, %v; want it refused %q, approved by %s at %v", when, got, err, reason, approved.Actor, approved.Updated)
		}
		if n := auditCount(t, en, policy.AuditFlagRefuse, fmt.Sprintf("flag:%d", f.ID)); n == 0 {
			t.Errorf("after %s: no %s entry", when, policy.AuditFlagRefuse)
		}
		if n := auditCount(t, en, policy.AuditFlagApprove, fmt.Sprintf("flag:%d", f.ID)); n != 1 {
			t.Errorf("after %s: %d %s entries, want the approval alone", when, n, policy.AuditFlagApprove)
		}
	}
	if _, err := en.e.Approve(ctx, f.ID, "carol", "again"); !errors.Is(err, policy.ErrFlagState) {
		t.Fatalf("approve twice: %v", err)
	}
	// Hold state unreadable: nothing is deleted.
	en.enf.failRead = true
	if _, err := en.e.Execute(ctx, f.ID, "carol"); !errors.Is(err, policy.ErrHoldUnknown) {
		t.Fatalf("execute with unreadable hold: %v", err)
	}
	en.enf.failRead = false
	if len(en.enf.deleted) != 0 {
		t.Fatal("deleted with unreadable hold state")
	}
	refused("unreadable hold state", "not carried out: ")
	// S3 legal hold on: refused.
	en.enf.held[f.Object.IndexKey+"@v1"] = true
	en.clock.Advance(time.Minute)
	if _, err := en.e.Execute(ctx, f.ID, "dave"); !errors.Is(err, policy.ErrLegalHold) {
		t.Fatalf("execute under S3 legal hold: %v", err)
	}
	refused("S3 legal hold", "held: ")
	delete(en.enf.held, f.Object.IndexKey+"@v1")
	done, err := en.e.Execute(ctx, f.ID, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != policy.StatusExecuted || len(en.enf.deleted) != 1 || !en.enf.deleted["s3:main/records/old.txt@v1"] {
		t.Errorf("executed %+v, deleted %v", done.Status, en.enf.deleted)
	}
	if _, err := en.e.Execute(ctx, f.ID, "carol"); !errors.Is(err, policy.ErrFlagState) {
		t.Errorf("execute twice: %v", err)
	}
	// Dismissed flags cannot be approved.
	g := dueFlag(t, en, "other.txt", tx["CDDL-1.0"])
	if _, err := en.e.Dismiss(ctx, g.ID, "carol", "not a record"); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.Approve(ctx, g.ID, "carol", "changed my mind"); !errors.Is(err, policy.ErrFlagState) {
		t.Errorf("approve dismissed: %v", err)
	}
	// Review flags are never executed.
	en.add(doc{bucket: "archive", key: "old-archive.txt", text: tx["EUPL-1.2"], mod: epoch.AddDate(-40, 0, 0)})
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	r := en.flags(policy.FlagFilter{Rule: "archive-30y"})
	if len(r) != 1 {
		t.Fatalf("archive flags: %+v", r)
	}
	if _, err := en.e.Approve(ctx, r[0].ID, "carol", "reviewed"); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.Execute(ctx, r[0].ID, "carol"); !errors.Is(err, policy.ErrNotDeletable) {
		t.Errorf("execute review flag: %v", err)
	}
}

// TestApprovedFlagRefusedWhenHeld: an approved deletion a hold now
// covers reads refused "held for matter M", at the next evaluation or
// execution, whichever comes first, audited flag.refuse and not
// flag.approve; a dismissal still closes it.
func TestApprovedFlagRefusedWhenHeld(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, retentionConfig())
	hold := func(matter string, seed []index.DocID) {
		t.Helper()
		if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: matter, Seeds: seed, Scope: policy.DefaultScope()}, "alice"); err != nil {
			t.Fatal(err)
		}
	}
	check := func(f policy.Flag, matter string) {
		t.Helper()
		got, err := en.e.Flag(ctx, f.ID)
		if err != nil || got.Status != policy.StatusRefused || got.Reason != "held for matter "+matter || got.Actor != "carol" {
			t.Errorf("flag %d: %+v, %v; want refused, held for matter %s", f.ID, got, err, matter)
		}
		if n := auditCount(t, en, policy.AuditFlagRefuse, fmt.Sprintf("flag:%d", f.ID)); n != 1 {
			t.Errorf("flag %d: %d refusals audited, want 1", f.ID, n)
		}
	}
	byEval := dueFlag(t, en, "old.txt", tx["EPL-2.0"])
	byExec := dueFlag(t, en, "older.txt", tx["MPL-2.0"])
	for _, f := range []policy.Flag{byEval, byExec} {
		if _, err := en.e.Approve(ctx, f.ID, "carol", "due"); err != nil {
			t.Fatal(err)
		}
	}
	hold("M-7", []index.DocID{byEval.Document.ID})
	hold("M-8", []index.DocID{byExec.Document.ID})
	if _, err := en.e.Execute(ctx, byExec.ID, "dave"); !errors.Is(err, policy.ErrLegalHold) {
		t.Fatalf("execute held: %v", err)
	}
	check(byExec, "M-8")
	if _, err := en.e.Evaluate(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := en.e.Flag(ctx, byEval.ID); got.Status != policy.StatusApproved {
		t.Errorf("a dry run changed the flag: %+v", got)
	}
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	check(byEval, "M-7")
	check(byExec, "M-8") // refused once: a refused flag is left alone
	if len(en.enf.deleted) != 0 {
		t.Errorf("deleted %v", en.enf.deleted)
	}
	if _, err := en.e.Dismiss(ctx, byEval.ID, "carol", "held"); err != nil {
		t.Errorf("dismiss refused: %v", err)
	}
}

// TestReleaseGrace: after a release nothing it covered is deleted before
// the grace period and a fresh evaluation.
func TestReleaseGrace(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, retentionConfig())
	f := dueFlag(t, en, "old.txt", tx["EPL-2.0"])
	if _, err := en.e.Approve(ctx, f.ID, "carol", "due"); err != nil {
		t.Fatal(err)
	}
	// A hold on a near-copy's seed arrives after the approval.
	seed := en.add(doc{bucket: "legal", key: "exhibit.txt", text: edit(tx["EPL-2.0"], 3, 4)})
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-2", Seeds: seed, Scope: policy.DefaultScope(), Mode: policy.ModeReport}, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.Execute(ctx, f.ID, "carol"); !errors.Is(err, policy.ErrLegalHold) {
		t.Fatalf("execute while held: %v", err)
	}
	en.clock.Advance(time.Hour)
	if _, err := en.e.ReleaseHold(ctx, "M-2", "case closed", "alice"); err != nil {
		t.Fatal(err)
	}
	en.clock.Advance(time.Hour)
	if _, err := en.e.Execute(ctx, f.ID, "carol"); !errors.Is(err, policy.ErrLegalHold) {
		t.Fatalf("execute within grace: %v", err)
	}
	// An evaluation within the grace period does not count.
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	en.clock.Advance(72 * time.Hour)
	if _, err := en.e.Execute(ctx, f.ID, "carol"); !errors.Is(err, policy.ErrLegalHold) {
		t.Fatalf("execute after grace without a fresh evaluation: %v", err)
	}
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.Execute(ctx, f.ID, "carol"); err != nil {
		t.Fatalf("execute after grace and evaluation: %v", err)
	}
	if len(en.enf.deleted) != 1 {
		t.Errorf("deleted %v", en.enf.deleted)
	}
}

func TestPublishingSurvivesFailure(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, retentionConfig())
	en.pub.fail = true
	en.add(doc{key: "a.txt", text: tx["EPL-2.0"], mod: epoch.AddDate(-8, 0, 0)}, doc{key: "b.txt", text: tx["MPL-2.0"], mod: epoch.AddDate(-8, 0, 0)})
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	if en.pub.count() != 0 {
		t.Fatal("published while failing")
	}
	en.pub.fail = false
	// A restarted process republishes at Sync.
	en.engine()
	if en.pub.count() != 2 {
		t.Fatalf("republished %d, want 2", en.pub.count())
	}
	if n, err := en.e.Republish(ctx); err != nil || n != 0 {
		t.Errorf("second republish: %d, %v", n, err)
	}
}

func TestSchedulerErrors(t *testing.T) {
	en := newEnv(t, policy.DefaultConfig())
	_, err := policy.NewScheduler(en.e, policy.Schedules{Evaluate: "0 25 * * *"}, nil)
	if !errors.Is(err, policy.ErrBadSchedule) || !strings.Contains(err.Error(), "policy.schedules.evaluate") {
		t.Errorf("bad schedule: %v", err)
	}
	s, err := policy.NewScheduler(en.e, policy.Schedules{Evaluate: "@every 1s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.Run(c) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runs, err := en.e.Runs(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && !runs[0].Ended.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no scheduled run within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestIngestEnforcementFailureIsRetried: when the legal hold of a new
// near-copy cannot be turned on, the document is still recorded held (so
// nothing deletes it) and flagged, the failure is audited, and the check
// fails so that the event is redelivered; the redelivery turns the hold on
// and audits it, without raising the flag again.
func TestIngestEnforcementFailureIsRetried(t *testing.T) {
	tx := texts(t)
	apache := tx["Apache-2.0"]
	en := newEnv(t, policy.DefaultConfig())
	ids := en.add(doc{key: "seed.txt", text: apache})
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "M-9", Reason: "litigation",
		Seeds: ids, Scope: policy.DefaultScope()}, "alice"); err != nil {
		t.Fatal(err)
	}
	enforced := func() (ok, failed int) {
		t.Helper()
		err := en.st.Audit(ctx, 1, func(a policy.AuditEntry) error {
			if a.Action == policy.AuditEnforceHold && a.Actor == "ingest" {
				if strings.Contains(string(a.Details), "connection refused") {
					failed++
				} else {
					ok++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok, failed
	}

	en.enf.mu.Lock()
	en.enf.failHold = true
	en.enf.mu.Unlock()
	later := en.add(doc{bucket: "uploads", key: "later.txt", text: edit(apache, 5, 3)})
	checks, err := en.e.CheckIngested(ctx, later)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("check with S3 unreachable: %v, want the enforcement error", err)
	}
	if en.enf.held["s3:main/uploads/later.txt@v1"] {
		t.Fatal("legal hold on although S3 failed")
	}
	held, err := en.e.HeldDocuments(ctx, "M-9")
	if err != nil || !slices.Contains(held, later[0]) {
		t.Fatalf("held documents %v, %v: the failed copy must be recorded held", held, err)
	}
	if len(checks) != 0 {
		t.Errorf("checks = %+v for a failed check", checks)
	}
	if ok, failed := enforced(); ok != 0 || failed != 1 {
		t.Errorf("audited %d enforcements and %d failures, want 0 and 1", ok, failed)
	}

	en.enf.mu.Lock()
	en.enf.failHold = false
	en.enf.mu.Unlock()
	again, err := en.e.CheckIngested(ctx, later)
	if err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if !en.enf.held["s3:main/uploads/later.txt@v1"] {
		t.Error("redelivery did not turn the legal hold on")
	}
	if len(again) != 1 || len(again[0].Flags) != 0 {
		t.Errorf("redelivery raised %+v", again)
	}
	if n := len(en.flags(policy.FlagFilter{Kind: policy.KindHoldMatch, Matter: "M-9"})); n != 1 {
		t.Errorf("%d hold-match flags, want 1", n)
	}
	if ok, failed := enforced(); ok != 1 || failed != 1 {
		t.Errorf("audited %d enforcements and %d failures, want 1 and 1", ok, failed)
	}
}

// TestSeedFilesStayInTheirMatter: a seed file uploaded for matter B
// ("hold-seed:B/...") is B's evidence. Another matter's hold never holds
// it, flags it or takes it as a seed (by id, key or selector); a new
// upload is never flagged as its duplicate, nor it as one; and retention
// never evaluates it, even as a near-copy of a due document. Reviewers
// of other matters would otherwise read its name in their flags.
func TestSeedFilesStayInTheirMatter(t *testing.T) {
	tx := texts(t)
	apache := tx["Apache-2.0"]
	cfg := retentionConfig()
	cfg.Duplicates.Enabled = true
	en := newEnv(t, cfg)
	orig := en.add(doc{key: "contracts/original.txt", text: apache})[0]
	res, err := en.ix.Add(ctx, []index.Input{{
		Doc:  index.Doc{Key: "hold-seed:B/secret.txt", VersionID: "s1", Name: "secret.txt", Source: "hold-seed", MediaType: "text/plain", KeepVersions: true},
		Text: []byte(edit(apache, 4, 9)), RawSize: int64(len(apache)), Parent: -1,
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("add seed file: %v %v", err, res)
	}
	secret := res[0].ID
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "B", Seeds: []index.DocID{secret}, Scope: policy.DefaultScope()}, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "A", Seeds: []index.DocID{orig}, Scope: policy.DefaultScope(),
		Selectors: []policy.Selector{{Source: "hold-seed"}}}, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "A2", Seeds: []index.DocID{secret}, Scope: policy.DefaultScope()}, "alice"); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("hold A2 seeded with B's seed file: %v, want index.ErrNotFound", err)
	}
	if _, _, err := en.e.CreateHold(ctx, policy.HoldSpec{Matter: "A3", SeedKeys: []string{"hold-seed:B/secret.txt"}, Scope: policy.DefaultScope()}, "alice"); !errors.Is(err, policy.ErrInvalidHold) {
		t.Errorf("hold A3 seeded with B's seed file's key: %v, want ErrInvalidHold (no seed)", err)
	}
	later := en.add(doc{bucket: "uploads", key: "later.txt", text: edit(apache, 3, 4)})
	if _, err := en.e.CheckIngested(ctx, append(later, secret)); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	held, err := en.e.HeldDocuments(ctx, "A")
	if err != nil || slices.Contains(held, secret) {
		t.Errorf("matter A holds %v (%v): B's seed file %d among them", held, err, secret)
	}
	for _, f := range en.flags(policy.FlagFilter{}) {
		mentions := f.Document.ID == secret || f.Source != nil && f.Source.ID == secret
		if mentions && f.Matter != "B" {
			t.Errorf("flag %d (%s, matter %q) names B's seed file: %+v", f.ID, f.Kind, f.Matter, f)
		}
	}
	if len(en.flags(policy.FlagFilter{Kind: policy.KindHoldMatch, Matter: "A", Document: later[0]})) != 1 {
		t.Error("the later copy was not flagged for A")
	}
}

// TestTextFieldsRefused: text that a store cannot keep as text (NUL, or
// bytes that are not UTF-8) is refused with ErrInvalidText naming the
// field, on either store, before anything is written.
func TestTextFieldsRefused(t *testing.T) {
	tx := texts(t)
	en := newEnv(t, retentionConfig())
	seed := en.add(doc{bucket: "legal", key: "exhibit.txt", text: tx["EPL-2.0"]})
	spec := func(edit func(*policy.HoldSpec)) policy.HoldSpec {
		s := policy.HoldSpec{Matter: "M-1", Seeds: seed, Scope: policy.DefaultScope()}
		edit(&s)
		return s
	}
	for name, tc := range map[string]struct {
		spec  policy.HoldSpec
		actor string
		field string
	}{
		"NUL in matter":       {spec(func(s *policy.HoldSpec) { s.Matter = "M\x001" }), "alice", ".matter"},
		"invalid reason":      {spec(func(s *policy.HoldSpec) { s.Reason = "caf\xe9" }), "alice", ".reason"},
		"NUL in seed key":     {spec(func(s *policy.HoldSpec) { s.SeedKeys = []string{"a\x00"} }), "alice", ".seed_keys[0]"},
		"NUL in selector tag": {spec(func(s *policy.HoldSpec) { s.Selectors = []policy.Selector{{Tags: map[string]string{"t": "\x00"}}} }), "alice", ".tags.t"},
		"NUL in actor":        {spec(func(*policy.HoldSpec) {}), "al\x00ice", "actor"},
	} {
		_, _, err := en.e.CreateHold(ctx, tc.spec, tc.actor)
		if !errors.Is(err, policy.ErrInvalidText) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want ErrInvalidText naming %s", name, err, tc.field)
		}
	}
	// A blank matter is refused by the rule tokens' matters follow too
	// (auth.CheckMatter).
	if _, _, err := en.e.CreateHold(ctx, spec(func(s *policy.HoldSpec) { s.Matter = " \t" }), "alice"); !errors.Is(err, policy.ErrInvalidHold) || !errors.Is(err, auth.ErrInvalidMatter) {
		t.Errorf("blank matter: %v, want ErrInvalidHold and auth.ErrInvalidMatter", err)
	}
	if hs, err := en.e.Holds(ctx, ""); err != nil || len(hs) != 0 {
		t.Fatalf("holds after refusals: %v, %v", hs, err)
	}
	if _, _, err := en.e.CreateHold(ctx, spec(func(*policy.HoldSpec) {}), "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := en.e.ReleaseHold(ctx, "M-1", "closed\x00", "alice"); !errors.Is(err, policy.ErrInvalidText) {
		t.Errorf("release with NUL in reason: %v", err)
	}
	f := dueFlag(t, en, "old.txt", tx["Apache-2.0"])
	if _, err := en.e.Approve(ctx, f.ID, "carol", "due\xff"); !errors.Is(err, policy.ErrInvalidText) {
		t.Errorf("approve with invalid reason: %v", err)
	}
	if _, err := en.e.Dismiss(ctx, f.ID, "car\x00ol", "not due"); !errors.Is(err, policy.ErrInvalidText) {
		t.Errorf("dismiss with NUL in actor: %v", err)
	}
}
