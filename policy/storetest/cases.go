package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

var ctx = context.Background()

func testRules(t *testing.T, open Open) {
	st := store(t, open)
	r := func(name string) policy.RetentionRule { return policy.RetentionRule{Name: name, Action: "flag"} }
	must(t, st.PutRules(ctx, "config", []policy.RetentionRule{r("a"), r("b")}, []policy.KeepRule{{Name: "k"}}))
	must(t, st.PutRules(ctx, "api", []policy.RetentionRule{r("c")}, nil))
	must(t, st.PutRules(ctx, "config", []policy.RetentionRule{r("b")}, nil))
	rs, ks, err := st.Rules(ctx)
	must(t, err)
	var names []string
	for _, x := range rs {
		names = append(names, x.Name)
	}
	if !slices.Equal(names, []string{"b", "c"}) || len(ks) != 0 {
		t.Fatalf("rules %v, keeps %v; want [b c] and none", names, ks)
	}
}

func testHolds(t *testing.T, open Open) {
	st := store(t, open)
	v0, err := st.HoldsVersion(ctx)
	must(t, err)
	createHold(t, st, "M-1", 1, 2)
	wantErr(t, st.CreateHold(ctx, hold("M-1"), nil, entry(policy.AuditHoldCreate, "hold:M-1")), policy.ErrHoldExists)
	v1, err := st.HoldsVersion(ctx)
	must(t, err)
	if v1 == v0 {
		t.Fatal("holds version did not move on create")
	}
	h, err := st.Hold(ctx, "M-1")
	must(t, err)
	if h.Held != 2 || h.Status != policy.HoldActive || h.Scope.Containment != 0.6 || !h.Created.Equal(epoch) {
		t.Fatalf("hold %+v", h)
	}
	_, err = st.Hold(ctx, "M-9")
	wantErr(t, err, policy.ErrNotFound)
	on, err := st.HoldsOn(ctx, policy.Object{IndexKey: object(2).IndexKey, VersionID: "v7"})
	must(t, err)
	if len(on) != 1 || on[0].Matter != "M-1" {
		t.Fatalf("holds on doc 2 (any version): %+v", on)
	}
	rel := policy.Hold{Matter: "M-1", Released: epoch.Add(time.Hour), ReleasedBy: "bob", ReleaseReason: "settled"}
	h, err = st.ReleaseHold(ctx, rel, entry(policy.AuditHoldRelease, "hold:M-1"))
	must(t, err)
	if h.Status != policy.HoldReleased || h.ReleasedBy != "bob" || !h.Released.Equal(rel.Released) {
		t.Fatalf("released hold %+v", h)
	}
	_, err = st.ReleaseHold(ctx, rel, entry(policy.AuditHoldRelease, "hold:M-1"))
	wantErr(t, err, policy.ErrHoldReleased)
	_, err = st.ReleaseHold(ctx, policy.Hold{Matter: "M-9"}, entry(policy.AuditHoldRelease, "hold:M-9"))
	wantErr(t, err, policy.ErrNotFound)
	if v2, err := st.HoldsVersion(ctx); err != nil || v2 == v1 {
		t.Fatalf("holds version %d after release, %d before (%v)", v2, v1, err)
	}
	createHold(t, st, "M-2", 3)
	for status, want := range map[policy.HoldStatus]int{"": 2, policy.HoldActive: 1, policy.HoldReleased: 1} {
		if hs, err := st.Holds(ctx, status); err != nil || len(hs) != want {
			t.Errorf("holds %q: %d (%v), want %d", status, len(hs), err, want)
		}
	}
	if n := verify(t, st); n != 3 {
		t.Errorf("audit has %d entries, want 3", n)
	}
}

func testHeldDocs(t *testing.T, open Open) {
	st := store(t, open)
	createHold(t, st, "M-1", 1)
	v1, err := st.HoldsVersion(ctx)
	must(t, err)
	n, err := st.AddHeld(ctx, []policy.HeldDoc{heldDoc("M-1", 1, true), heldDoc("M-1", 5, false), heldDoc("M-1", 6, false)})
	must(t, err)
	if n != 2 {
		t.Fatalf("AddHeld: %d new, want 2 (the seed was held already)", n)
	}
	if v, _ := st.HoldsVersion(ctx); v != v1 {
		t.Fatalf("holds version moved from %d to %d without a new seed", v1, v)
	}
	n, err = st.AddHeld(ctx, []policy.HeldDoc{heldDoc("M-1", 5, true), heldDoc("M-1", 6, false)})
	must(t, err)
	if n != 1 {
		t.Fatalf("AddHeld: %d new, want 1 (a near-copy becoming a seed)", n)
	}
	if v, _ := st.HoldsVersion(ctx); v == v1 {
		t.Fatal("holds version did not move on a new seed")
	}
	for _, tc := range []struct {
		seeds bool
		want  []index.DocID
	}{{true, []index.DocID{1, 5}}, {false, []index.DocID{1, 5, 6}}} {
		var got []index.DocID
		must(t, st.HeldDocs(ctx, "M-1", tc.seeds, func(d policy.HeldDoc) error {
			if d.Matter != "M-1" || d.Object.IndexKey != object(d.Document.ID).IndexKey || d.Content != index.ContentID(d.Document.ID+1000) || !d.Placed.Equal(epoch) {
				t.Errorf("held document %+v", d)
			}
			got = append(got, d.Document.ID)
			return nil
		}))
		if !slices.Equal(got, tc.want) {
			t.Errorf("HeldDocs(seeds=%v) = %v, want %v", tc.seeds, got, tc.want)
		}
	}
}

func testFlags(t *testing.T, open Open) {
	st := store(t, open)
	fs := []policy.Flag{flag(policy.KindDispositionDue, 1, "r1", ""), flag(policy.KindHoldMatch, 2, "", "M-1"), flag(policy.KindHoldMatch, 3, "", "M-2")}
	added, err := st.AddFlags(ctx, fs, "retention", epoch)
	must(t, err)
	if len(added) != 3 || added[0].Document.ID != 1 || added[0].ID == 0 || added[0].Status != policy.StatusOpen || added[0].Published {
		t.Fatalf("added %+v", added)
	}
	again, err := st.AddFlags(ctx, append(fs, flag(policy.KindDispositionDue, 4, "r1", "")), "retention", epoch)
	must(t, err)
	if len(again) != 1 || again[0].Document.ID != 4 {
		t.Fatalf("adding again: %+v, want only doc 4's", again)
	}
	f, err := st.Flag(ctx, added[1].ID)
	must(t, err)
	if f.Kind != policy.KindHoldMatch || f.Matter != "M-1" || !f.Created.Equal(epoch) || f.Evidence.Note != "test" {
		t.Fatalf("flag %+v", f)
	}
	_, err = st.Flag(ctx, 999999)
	wantErr(t, err, policy.ErrNotFound)
	for _, tc := range []struct {
		name   string
		filter policy.FlagFilter
		want   []index.DocID
	}{
		{"all", policy.FlagFilter{}, []index.DocID{1, 2, 3, 4}},
		{"kind", policy.FlagFilter{Kind: policy.KindHoldMatch}, []index.DocID{2, 3}},
		{"matter", policy.FlagFilter{Matter: "M-2"}, []index.DocID{3}},
		{"matters", policy.FlagFilter{Matters: []string{"M-1"}}, []index.DocID{2}},
		{"organisation-wide", policy.FlagFilter{Matters: []string{""}}, []index.DocID{1, 4}},
		{"matters and organisation-wide", policy.FlagFilter{Matters: []string{"", "M-1"}}, []index.DocID{1, 2, 4}},
		{"no matters", policy.FlagFilter{Matters: []string{}}, nil},
		{"rule", policy.FlagFilter{Rule: "r1"}, []index.DocID{1, 4}},
		{"document", policy.FlagFilter{Document: 3}, []index.DocID{3}},
		{"status", policy.FlagFilter{Status: policy.StatusApproved}, nil},
		{"page", policy.FlagFilter{After: added[0].ID, Limit: 2}, []index.DocID{2, 3}},
	} {
		got, err := st.Flags(ctx, tc.filter)
		must(t, err)
		var ids []index.DocID
		for _, f := range got {
			ids = append(ids, f.Document.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, ids, tc.want)
		}
	}
	un, err := st.Unpublished(ctx, 10)
	must(t, err)
	must(t, st.MarkPublished(ctx, []int64{un[0].ID, un[1].ID}))
	if rest, err := st.Unpublished(ctx, 10); err != nil || len(rest) != 2 || rest[0].ID != un[2].ID {
		t.Fatalf("unpublished after marking two: %d (%v)", len(rest), err)
	}
	if n := verify(t, st); n != 4 {
		t.Errorf("audit has %d entries, want one per flag raised (4)", n)
	}
}

func testTransition(t *testing.T, open Open) {
	st := store(t, open)
	added, err := st.AddFlags(ctx, []policy.Flag{flag(policy.KindDispositionDue, 1, "r1", ""), flag(policy.KindDispositionDue, 2, "r1", "")}, "retention", epoch)
	must(t, err)
	approve := func(id int64, check bool, releasedBefore time.Time) (policy.Flag, error) {
		return st.Transition(ctx, policy.Transition{ID: id, From: []policy.FlagStatus{policy.StatusOpen}, To: policy.StatusApproved,
			Actor: "bob", Reason: "expired", At: epoch.Add(time.Hour), Audit: entry(policy.AuditFlagApprove, "flag"),
			CheckHolds: check, ReleasedBefore: releasedBefore})
	}
	f, err := approve(added[0].ID, true, epoch)
	must(t, err)
	if f.Status != policy.StatusApproved || f.Actor != "bob" || !f.Updated.Equal(epoch.Add(time.Hour)) {
		t.Fatalf("transitioned %+v", f)
	}
	_, err = approve(added[0].ID, false, epoch)
	wantErr(t, err, policy.ErrFlagState)
	_, err = approve(999999, false, epoch)
	wantErr(t, err, policy.ErrNotFound)
	createHold(t, st, "M-1", 2)
	_, err = approve(added[1].ID, true, epoch)
	wantErr(t, err, policy.ErrLegalHold)
	_, err = st.ReleaseHold(ctx, policy.Hold{Matter: "M-1", Released: epoch.Add(2 * time.Hour)}, entry(policy.AuditHoldRelease, "hold:M-1"))
	must(t, err)
	_, err = approve(added[1].ID, true, epoch.Add(time.Hour))
	wantErr(t, err, policy.ErrLegalHold) // released after the cut-off: still refused
	if _, err := approve(added[1].ID, true, epoch.Add(3*time.Hour)); err != nil {
		t.Fatalf("released before the cut-off: %v", err)
	}
	if got, _ := st.Flag(ctx, added[1].ID); got.Status != policy.StatusApproved {
		t.Fatalf("flag is %s", got.Status)
	}
	testRefused(t, st, added[1].ID)
	verify(t, st)
}

// testRefused: an approved flag refused keeps the status, the reason and
// the approver and time given, and is found by its status.
func testRefused(t *testing.T, st policy.Store, id int64) {
	t.Helper()
	f, err := st.Transition(ctx, policy.Transition{ID: id, From: []policy.FlagStatus{policy.StatusApproved}, To: policy.StatusRefused,
		Actor: "bob", Reason: "held for matter M-1", At: epoch.Add(time.Hour), Audit: entry(policy.AuditFlagRefuse, "flag")})
	must(t, err)
	got, err := st.Flag(ctx, id)
	must(t, err)
	if f.Status != policy.StatusRefused || got.Status != policy.StatusRefused || got.Reason != "held for matter M-1" || got.Actor != "bob" {
		t.Fatalf("refused flag %+v, read back %+v", f, got)
	}
	if fs, err := st.Flags(ctx, policy.FlagFilter{Status: policy.StatusRefused}); err != nil || len(fs) != 1 || fs[0].ID != id {
		t.Fatalf("refused flags: %+v, %v", fs, err)
	}
	_, err = st.Transition(ctx, policy.Transition{ID: id, From: []policy.FlagStatus{policy.StatusApproved}, To: policy.StatusExecuting,
		Actor: "bob", At: epoch.Add(2 * time.Hour), Audit: entry(policy.AuditDeleteClaim, "flag")})
	wantErr(t, err, policy.ErrFlagState)
}

func testIngest(t *testing.T, open Open) {
	st := store(t, open)
	createHold(t, st, "M-1", 1)
	v1, _ := st.HoldsVersion(ctx)
	held := []policy.HeldDoc{heldDoc("M-1", 7, false)}
	flags := []policy.Flag{flag(policy.KindHoldMatch, 7, "", "M-1")}
	audit := []policy.AuditEntry{entry(policy.AuditEnforceHold, "s3:7")}
	v, added, err := st.AddHeldAndFlags(ctx, held, flags, audit, "ingest", epoch)
	must(t, err)
	if v != 0 || len(added) != 1 || added[0].ID == 0 {
		t.Fatalf("version %d, added %+v; want 0 and one flag", v, added)
	}
	v, added, err = st.AddHeldAndFlags(ctx, held, flags, nil, "ingest", epoch)
	must(t, err)
	if v != 0 || len(added) != 0 {
		t.Fatalf("again: version %d, added %+v; want nothing new", v, added)
	}
	v, _, err = st.AddHeldAndFlags(ctx, []policy.HeldDoc{heldDoc("M-1", 8, true)}, nil, nil, "ingest", epoch)
	must(t, err)
	if now, _ := st.HoldsVersion(ctx); v == 0 || v != now || v == v1 {
		t.Fatalf("a new seed: version %d, store at %d, was %d", v, now, v1)
	}
	if v, _, _ := st.AddHeldAndFlags(ctx, nil, nil, nil, "ingest", epoch); v != 0 {
		t.Fatalf("an empty commit moved the version to %d", v)
	}
	if n := verify(t, st); n != 3 {
		t.Errorf("audit has %d entries, want 3 (hold, flag, enforcement)", n)
	}
}

func testRuns(t *testing.T, open Open) {
	st := store(t, open)
	var ids []int64
	for i := range 3 {
		id, err := st.StartRun(ctx, policy.Run{Started: epoch.Add(time.Duration(i) * time.Hour), DryRun: i == 1})
		must(t, err)
		ids = append(ids, id)
	}
	must(t, st.FinishRun(ctx, policy.Run{ID: ids[0], Started: epoch, Ended: epoch.Add(time.Minute), Documents: 12, Flagged: 3}))
	wantErr(t, st.FinishRun(ctx, policy.Run{ID: 999999}), policy.ErrNotFound)
	rs, err := st.Runs(ctx, 2)
	must(t, err)
	if len(rs) != 2 || rs[0].ID != ids[2] || rs[1].ID != ids[1] || !rs[1].DryRun {
		t.Fatalf("latest runs %+v", rs)
	}
	rs, _ = st.Runs(ctx, 10)
	if last := rs[len(rs)-1]; last.Documents != 12 || last.Flagged != 3 || !last.Ended.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("finished run %+v", last)
	}
}

func testAudit(t *testing.T, open Open) {
	st := store(t, open)
	many := make([]policy.AuditEntry, 1200)
	for i := range many {
		many[i] = entry(policy.AuditFlagApprove, "flag")
		many[i].Time = epoch.Add(time.Duration(i) * time.Nanosecond)
	}
	must(t, st.Append(ctx, many...))
	for i := range 5 {
		must(t, st.Append(ctx, many[i]))
	}
	must(t, st.Append(ctx, entry("a", "x"), entry("b", "y")))
	if n := verify(t, st); n != 1207 {
		t.Fatalf("audit has %d entries, want 1207", n)
	}
	var got []policy.AuditEntry
	must(t, st.Audit(ctx, 1206, func(e policy.AuditEntry) error { got = append(got, e); return nil }))
	if len(got) != 2 || got[0].Action != "a" || got[1].Prev != got[0].Hash || string(got[1].Details) != `{"n":1}` {
		t.Fatalf("tail %+v", got)
	}
}

// testHoldChanges checks HoldsSince, for stores that implement it.
func testHoldChanges(t *testing.T, open Open) {
	st := store(t, open)
	hc, ok := st.(policy.HoldChanges)
	if !ok {
		t.Logf("%T does not implement policy.HoldChanges", st)
		return
	}
	createHold(t, st, "M-1", 1)
	v1, _ := st.HoldsVersion(ctx)
	createHold(t, st, "M-2", 2, 3)
	_, _, err := st.AddHeldAndFlags(ctx, []policy.HeldDoc{heldDoc("M-1", 4, true), heldDoc("M-1", 5, false)}, nil, nil, "ingest", epoch)
	must(t, err)
	d, err := hc.HoldsSince(ctx, v1)
	must(t, err)
	now, _ := st.HoldsVersion(ctx)
	var seeds []index.DocID
	for _, s := range d.Seeds {
		seeds = append(seeds, s.Document.ID)
	}
	if d.Version != now || len(d.Holds) != 1 || d.Holds[0].Matter != "M-2" || !slices.Equal(seeds, []index.DocID{4, 2, 3}) {
		t.Fatalf("since %d: version %d (store %d), holds %d, seeds %v", v1, d.Version, now, len(d.Holds), seeds)
	}
	_, err = st.ReleaseHold(ctx, policy.Hold{Matter: "M-1", Released: epoch}, entry(policy.AuditHoldRelease, "hold:M-1"))
	must(t, err)
	d, err = hc.HoldsSince(ctx, now)
	must(t, err)
	if len(d.Holds) != 1 || d.Holds[0].Status != policy.HoldReleased || len(d.Seeds) != 0 {
		t.Fatalf("after release: %+v", d)
	}
}

// texts are valid strings that must come back as they went in: scripts,
// quotes, escapes and JSON look-alikes.
var texts = []string{"Ünïcødé résumé", "日本語の文書", "שלום", "emoji 📄✅", `quote ' and " and \ backslash`,
	`{"json": [1, 2]}`, "line\nbreak\ttab", "\u2028separator", "%s %d $1 ?"}

// testText stores texts in every kind of field and reads them back.
func testText(t *testing.T, open Open) {
	st := store(t, open)
	for i, s := range texts {
		matter := fmt.Sprintf("M-%d %s", i, s)
		h := hold(matter, index.DocID(i+1))
		h.Name, h.Reason = s, s
		d := heldDoc(matter, index.DocID(i+1), true)
		d.Object.Key, d.Object.IndexKey, d.Document.Name = s, "s3:main/"+s, s
		must(t, st.CreateHold(ctx, h, []policy.HeldDoc{d}, policy.AuditEntry{Time: epoch, Actor: s, Action: policy.AuditHoldCreate, Object: s, Reason: s, Details: []byte(`{"s":1}`)}))
		got, err := st.Hold(ctx, matter)
		must(t, err)
		if got.Name != s || got.Reason != s {
			t.Errorf("hold %q: name %q, reason %q", matter, got.Name, got.Reason)
		}
		on, err := st.HoldsOn(ctx, d.Object)
		must(t, err)
		if len(on) != 1 || on[0].Matter != matter {
			t.Errorf("holds on %q: %+v", d.Object.IndexKey, on)
		}
		f := flag(policy.KindHoldMatch, index.DocID(i+1), s, matter)
		f.Evidence.Note = s
		added, err := st.AddFlags(ctx, []policy.Flag{f}, s, epoch)
		must(t, err)
		if fs, err := st.Flags(ctx, policy.FlagFilter{Rule: s, Matter: matter}); err != nil || len(fs) != 1 || fs[0].ID != added[0].ID || fs[0].Evidence.Note != s {
			t.Errorf("flag with %q: %+v, %v", s, fs, err)
		}
	}
	var actors []string
	must(t, st.Audit(ctx, 1, func(e policy.AuditEntry) error {
		if e.Action == policy.AuditHoldCreate {
			actors = append(actors, e.Actor)
		}
		return nil
	}))
	if !slices.Equal(actors, texts) {
		t.Errorf("audit actors %q, want %q", actors, texts)
	}
	verify(t, st)
}

// testPlacements: a hold is created with its placement pending; until the
// placement is recorded, a hold-checked transition on any object is
// refused, through another handle too; attempts are stored; finishing
// audits once; a release ends the placement.
func testPlacements(t *testing.T, open Open) {
	st, other := open(t)
	st2 := other(t)
	added, err := st.AddFlags(ctx, []policy.Flag{flag(policy.KindDispositionDue, 5, "r1", "")}, "retention", epoch)
	must(t, err)
	approve := func(s policy.Store) error {
		_, err := s.Transition(ctx, policy.Transition{ID: added[0].ID, From: []policy.FlagStatus{policy.StatusOpen}, To: policy.StatusApproved,
			Actor: "bob", Reason: "expired", At: epoch, Audit: entry(policy.AuditFlagApprove, "flag"), CheckHolds: true, ReleasedBefore: epoch})
		return err
	}
	createHold(t, st, "M-1", 1)
	ps, err := st2.Placements(ctx)
	must(t, err)
	if len(ps) != 1 || ps[0].Matter != "M-1" || ps[0].Recorded || ps[0].Attempts != 0 {
		t.Fatalf("placements after create: %+v", ps)
	}
	err = approve(st2)
	wantErr(t, err, policy.ErrLegalHold)
	wantErr(t, err, policy.ErrPlacementPending)

	next := epoch.Add(time.Minute)
	must(t, st2.UpdatePlacement(ctx, policy.PendingPlacement{Matter: "M-1", Attempts: 2, LastError: "S3 unreachable", Next: next}))
	must(t, st2.UpdatePlacement(ctx, policy.PendingPlacement{Matter: "M-9", Attempts: 1})) // none pending: nothing
	ps, err = st.Placements(ctx)
	must(t, err)
	if len(ps) != 1 || ps[0].Recorded || ps[0].Attempts != 2 || ps[0].LastError != "S3 unreachable" || !ps[0].Next.Equal(next) {
		t.Fatalf("placements after a failed attempt: %+v", ps)
	}
	must(t, st.UpdatePlacement(ctx, policy.PendingPlacement{Matter: "M-1", Recorded: true, Attempts: 2}))
	must(t, st.UpdatePlacement(ctx, policy.PendingPlacement{Matter: "M-1", Attempts: 3})) // Recorded stays set
	if ps, err = st2.Placements(ctx); err != nil || len(ps) != 1 || !ps[0].Recorded || ps[0].Attempts != 3 {
		t.Fatalf("placements after recording: %+v, %v", ps, err)
	}
	must(t, approve(st2)) // recorded: the held rows decide, and doc 5 is not held

	n := verify(t, st)
	done, err := st2.FinishPlacement(ctx, "M-1", entry(policy.AuditHoldPlaced, "hold:M-1"))
	must(t, err)
	if !done || verify(t, st) != n+1 {
		t.Fatalf("finish: done %v, audit %d entries, want %d", done, verify(t, st), n+1)
	}
	if done, err = st.FinishPlacement(ctx, "M-1", entry(policy.AuditHoldPlaced, "hold:M-1")); err != nil || done || verify(t, st) != n+1 {
		t.Fatalf("finish again: done %v, err %v, audit %d entries", done, err, verify(t, st))
	}
	createHold(t, st, "M-2", 2)
	_, err = st2.ReleaseHold(ctx, policy.Hold{Matter: "M-2", Released: epoch}, entry(policy.AuditHoldRelease, "hold:M-2"))
	must(t, err)
	if ps, err = st.Placements(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("placements after finish and release: %+v, %v", ps, err)
	}
}
