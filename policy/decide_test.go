package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/policy"
)

func TestDecidePrecedence(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	past := func(years int) time.Time { return now.AddDate(-years, 0, 0) }
	future := func(years int) time.Time { return now.AddDate(years, 0, 0) }
	del := func(rule string, due time.Time, explicit bool) policy.Candidate {
		return policy.Candidate{Rule: rule, Due: due, Action: policy.ActionDelete, Deletable: true, Explicit: explicit}
	}
	rev := func(rule string, due time.Time, explicit bool) policy.Candidate {
		return policy.Candidate{Rule: rule, Due: due, Action: policy.ActionReview, Explicit: explicit}
	}
	for _, tc := range []struct {
		name    string
		f       policy.Facts
		outcome policy.Outcome
		winner  string
	}{
		{"nothing applies", policy.Facts{}, "", ""},
		{"not yet due", policy.Facts{Candidates: []policy.Candidate{del("a", future(1), true)}}, "", ""},
		{"due", policy.Facts{Candidates: []policy.Candidate{del("a", past(1), true)}}, policy.OutcomeFlag, "a"},
		{"hold beats deletion", policy.Facts{Candidates: []policy.Candidate{del("a", past(1), true)}, Holds: []string{"M"}}, policy.OutcomeHeld, "a"},
		{"longest retention wins", policy.Facts{Candidates: []policy.Candidate{del("short", past(1), true), del("long", future(3), true)}}, policy.OutcomeKept, "long"},
		{"longest retention wins, both due", policy.Facts{Candidates: []policy.Candidate{del("short", past(3), true), rev("long", past(1), true)}}, policy.OutcomeFlag, "long"},
		{"keep_at_least beats shorter delete", policy.Facts{Candidates: []policy.Candidate{del("a", past(1), true)}, Keeps: []policy.Keep{{Rule: "k", Until: future(2)}}}, policy.OutcomeKept, "a"},
		{"keep_at_least over", policy.Facts{Candidates: []policy.Candidate{del("a", past(1), true)}, Keeps: []policy.Keep{{Rule: "k", Until: past(1)}}}, policy.OutcomeFlag, "a"},
		{"explicit beats implicit", policy.Facts{Candidates: []policy.Candidate{del("inherited", past(5), false), del("own", future(5), true)}}, "", ""},
		{"implicit when no explicit", policy.Facts{Candidates: []policy.Candidate{del("inherited", past(5), false)}}, policy.OutcomeFlag, "inherited"},
		{"implicit longest wins", policy.Facts{Candidates: []policy.Candidate{del("i1", past(5), false), del("i2", future(1), false)}}, policy.OutcomeKept, "i2"},
		{"tie: review beats delete", policy.Facts{Candidates: []policy.Candidate{del("d", past(1), true), rev("r", past(1), true)}}, policy.OutcomeFlag, "r"},
		{"hold beats keep and flag alike", policy.Facts{Candidates: []policy.Candidate{rev("r", past(1), true)}, Holds: []string{"M"}}, policy.OutcomeHeld, "r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Now = now
			v := policy.Decide(tc.f)
			if v.Outcome != tc.outcome || v.Outcome != "" && v.Winner.Rule != tc.winner {
				t.Errorf("Decide = %s by %q (%s), want %s by %q", v.Outcome, v.Winner.Rule, v.Reason, tc.outcome, tc.winner)
			}
			if v.Outcome != "" && v.Reason == "" {
				t.Error("no reason")
			}
		})
	}
}

// FuzzSeedFileMatter: any key parses without panic; a seed file's
// matter is a single path element, and a key built from a matter and a
// name gives that matter back.
func FuzzSeedFileMatter(f *testing.F) {
	for _, s := range []string{"hold-seed:M-17/exhibit A.txt", "hold-seed:", "hold-seed:/x", "s3:main/records/a.txt", "hold-seed:B/a.eml!/att.pdf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		m, ok := policy.SeedFileMatter(key)
		if !ok {
			return
		}
		if strings.Contains(m, "/") || !strings.HasPrefix(key, policy.SeedFilePrefix+m) {
			t.Fatalf("SeedFileMatter(%q) = %q", key, m)
		}
		if got, ok := policy.SeedFileMatter(policy.SeedFilePrefix + m + "/name.txt"); !ok || got != m {
			t.Fatalf("round trip of %q: %q, %v", m, got, ok)
		}
	})
}
