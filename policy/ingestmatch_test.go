package policy

import (
	"reflect"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// rec is an S3 document of connector s3:main, bucket records.
func rec(id index.DocID, content index.ContentID, key string) *index.Record {
	return &index.Record{ID: id, Content: content, Doc: index.Doc{Source: "s3:main", Key: "s3:main/records/" + key, Name: key, VersionID: "v1"}}
}

// hold is an active hold over seeds (document → content).
func hold(matter, mode string, seeds map[index.DocID]index.ContentID, sels ...Selector) cachedHold {
	h := cachedHold{Hold: Hold{Matter: matter, Mode: mode, Selectors: sels, Scope: DefaultScope()},
		contents: map[index.ContentID]index.DocID{}, seeds: map[index.DocID]bool{}}
	for id, content := range seeds {
		h.seeds[id] = true
		h.contents[content] = id
	}
	return h
}

// TestMatchHolds: which holds hold a document, and why, from plain values.
func TestMatchHolds(t *testing.T) {
	near := index.Scores{Resemblance: 0.7, ContainmentAB: 0.9, ContainmentBA: 0.85}
	far := index.Scores{Resemblance: 0.2, ContainmentAB: 0.3, ContainmentBA: 0.3}
	exact := index.Scores{Exact: true, Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1}
	seedDoc := rec(1, 100, "legal/seed.txt")
	seedFile := &index.Record{ID: 9, Content: 900, Doc: index.Doc{Source: "upload", Key: SeedFilePrefix + "B/evidence.txt"}}
	a := hold("A", ModeHold, map[index.DocID]index.ContentID{1: 100})
	b := hold("B", ModeReport, nil, Selector{Prefix: "custodian/"})
	seedOfB := hold("B", ModeReport, map[index.DocID]index.ContentID{9: 900})
	cases := []struct {
		name     string
		r        *index.Record
		holds    []cachedHold
		ws       []index.WatchMatch
		ms       []index.Match
		watching bool
		want     []holdHit
	}{
		{name: "listed seed", r: rec(1, 100, "legal/seed.txt"), holds: []cachedHold{a},
			want: []holdHit{{hold: a.Hold, seed: true}}},
		{name: "selected seed", r: rec(5, 500, "custodian/mail.txt"), holds: []cachedHold{a, b},
			want: []holdHit{{hold: b.Hold, seed: true}}},
		{name: "identical content names the seed to load", r: rec(6, 100, "inbox/copy.txt"), holds: []cachedHold{a},
			want: []holdHit{{hold: a.Hold, scores: exact, sourceID: 1}}},
		{name: "watchlist match in scope", r: rec(7, 700, "inbox/near.txt"), holds: []cachedHold{a}, watching: true,
			ws:   []index.WatchMatch{{Content: 100, Scores: near}},
			want: []holdHit{{hold: a.Hold, scores: near, sourceID: 1}}},
		{name: "watchlist match out of scope", r: rec(7, 700, "inbox/far.txt"), holds: []cachedHold{a}, watching: true,
			ws: []index.WatchMatch{{Content: 100, Scores: far}}},
		{name: "index matches ignored when watching", r: rec(7, 700, "inbox/near.txt"), holds: []cachedHold{a}, watching: true,
			ms: []index.Match{{Record: seedDoc, Scores: near}}},
		{name: "index match without a watchlist", r: rec(7, 700, "inbox/near.txt"), holds: []cachedHold{a},
			ms:   []index.Match{{Record: rec(3, 300, "other.txt"), Scores: near}, {Record: seedDoc, Scores: near}},
			want: []holdHit{{hold: a.Hold, scores: near, source: seedDoc}}},
		{name: "near-copy of nothing held", r: rec(7, 700, "inbox/other.txt"), holds: []cachedHold{a, b},
			ms: []index.Match{{Record: rec(3, 300, "other.txt"), Scores: near}}},
		{name: "seed file of another matter", r: seedFile, holds: []cachedHold{a, seedOfB},
			want: []holdHit{{hold: seedOfB.Hold, seed: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := matchHolds(tc.r, tc.holds, tc.ws, tc.ms, tc.watching)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("matchHolds:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestOutcome: what the hits of a document record, from plain values.
func TestOutcome(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	near := index.Scores{Resemblance: 0.95, ContainmentAB: 0.97, ContainmentBA: 0.96}
	r := rec(7, 700, "inbox/copy.txt")
	older := rec(3, 300, "old/original.txt")
	seed := rec(1, 100, "legal/seed.txt")
	a := Hold{Matter: "A", Mode: ModeHold}
	b := Hold{Matter: "B", Mode: ModeReport}
	src := RefOf(seed)
	held := func(matter string, isSeed bool) HeldDoc {
		return HeldDoc{Matter: matter, Document: RefOf(r), Object: ObjectOf(r), Content: 700, Seed: isSeed, Placed: now}
	}
	cases := []struct {
		name       string
		duplicates DuplicateConfig
		hits       []holdHit
		ms         []index.Match
		want       ingestResult
	}{
		{name: "nothing", want: ingestResult{}},
		{name: "seed of a report hold", hits: []holdHit{{hold: b, seed: true}},
			want: ingestResult{matters: []string{"B"}, held: []HeldDoc{held("B", true)},
				flags: []Flag{holdFlag(b, r, nil, nil, "seed")}}},
		{name: "near-copy of a seed in mode hold", hits: []holdHit{{hold: a, scores: near, source: seed}},
			want: ingestResult{matters: []string{"A"}, held: []HeldDoc{held("A", false)},
				flags: []Flag{holdFlag(a, r, &src, &near, "near-copy")}, enforce: []Hold{a}}},
		{name: "seed source not loaded", hits: []holdHit{{hold: a, scores: near, sourceID: 1}},
			want: ingestResult{matters: []string{"A"}, held: []HeldDoc{held("A", false)},
				flags: []Flag{holdFlag(a, r, nil, &near, "near-copy")}, enforce: []Hold{a}}},
		{name: "duplicate after the hold flags", duplicates: DuplicateConfig{Enabled: true, Scope: index.Scope{Resemblance: 0.9, Containment: 0.95}},
			hits: []holdHit{{hold: b, seed: true}}, ms: []index.Match{{Record: older, Scores: near}},
			want: ingestResult{matters: []string{"B"}, held: []HeldDoc{held("B", true)},
				flags: []Flag{holdFlag(b, r, nil, nil, "seed"), dupFlag(r, older, near)}}},
		{name: "duplicates off", hits: nil, ms: []index.Match{{Record: older, Scores: near}}, want: ingestResult{}},
		{name: "newer documents are not duplicated", duplicates: DuplicateConfig{Enabled: true, Scope: index.Scope{Resemblance: 0.9, Containment: 0.95}},
			ms: []index.Match{{Record: rec(8, 800, "later.txt"), Scores: near}}, want: ingestResult{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &Engine{cfg: Config{Duplicates: tc.duplicates}}
			if got := e.outcome(r, tc.hits, tc.ms, now); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("outcome:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func dupFlag(r, older *index.Record, sc index.Scores) Flag {
	src := RefOf(older)
	return Flag{Kind: KindDuplicateUpload, Document: RefOf(r), Object: ObjectOf(r), Source: &src,
		Evidence: Evidence{Scores: &sc, Role: "duplicate", Note: "new upload duplicates existing content"}}
}
