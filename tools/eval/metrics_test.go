package eval

import (
	"crypto/sha256"
	"testing"
)

// tinyTruth is a four-document corpus: 0 and 1 identical, 2 a near-copy of
// 0 and 1 (one word of 40 changed at the end), 3 unrelated.
func tinyTruth(t *testing.T) *Truth {
	t.Helper()
	base := "a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff gg hh ii jj kk ll mm nn"
	texts := []string{base, base, base[:len(base)-2] + "zz", "one two three four five six seven eight nine ten"}
	var sets [][]uint64
	var hashes [][32]byte
	for _, x := range texts {
		sets = append(sets, WordShingles([]byte(x), ShingleWords))
		hashes = append(hashes, sha256.Sum256([]byte(x)))
	}
	tr, err := NewTruth(sets, hashes)
	if err != nil {
		t.Fatal(err)
	}
	if c := Classify(tr.Get(0, 2)); c != Near|Contained {
		t.Fatalf("pair (0, 2) is %b, want near and contained", c)
	}
	return tr
}

func TestTallyCount(t *testing.T) {
	ta := NewTally(tinyTruth(t))
	// Positives: exact (0,1) both ways; near and contained (0,2), (1,2)
	// both ways.
	if ta.positives != [3]int{2, 4, 4} {
		t.Fatalf("positives %v", ta.positives)
	}
	c := CountPassing(ta, []Scored[int]{{Pair: Pair{0, 1}}, {Pair: Pair{0, 2}}, {Pair: Pair{2, 0}}, {Pair: Pair{0, 3}}}, false, func(int) bool { return true })
	if c.Reported != 4 || c.Found != [3]int{1, 2, 2} || c.FalseAlarms != 1 || c.Correct != 3 {
		t.Fatalf("counts %+v", c)
	}
	for _, tc := range []struct {
		got, want float64
		what      string
	}{
		{c.Recall(Exact), 0.5, "exact recall"},
		{c.Recall(Near), 0.5, "near recall"},
		{c.Recall(Contained), 0.5, "contained recall"},
		{c.FalseAlarmShare(), 0.25, "false alarms"},
		{c.Precision(), 0.75, "precision"},
	} {
		if !near(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	empty := CountPassing[int](ta, nil, false, nil)
	if empty.FalseAlarmShare() != 0 || empty.Precision() != 1 || empty.Recall(Near) != 0 {
		t.Errorf("nothing reported: %+v", empty)
	}
	if (Counts{}).Recall(Near) != 1 {
		t.Error("an empty class should have recall 1")
	}
}

func TestCountPassing(t *testing.T) {
	ta := NewTally(tinyTruth(t))
	scored := []Scored[int]{{Pair{0, 1}, 100}, {Pair{0, 2}, 60}, {Pair{1, 2}, 40}, {Pair{2, 3}, 10}}
	c := CountPassing(ta, scored, true, func(s int) bool { return s >= 50 })
	if c.Reported != 4 || c.Found != [3]int{2, 2, 2} || c.FalseAlarms != 0 {
		t.Errorf("symmetric ≥ 50: %+v", c)
	}
	c = CountPassing(ta, scored, false, func(int) bool { return true })
	if c.Reported != 4 || c.FalseAlarms != 1 || c.Found != [3]int{1, 2, 2} {
		t.Errorf("one-way, all: %+v", c)
	}
}

func TestGoalAndBest(t *testing.T) {
	c := Counts{Reported: 100, Positives: [3]int{10, 100, 100}, Found: [3]int{10, 97, 95}, FalseAlarms: 1}
	if !DefaultGoal.Meets(c) {
		t.Error("counts at the goal's limits should meet it")
	}
	c.Found[0] = 9
	if DefaultGoal.Meets(c) {
		t.Error("a missed exact duplicate should fail the goal")
	}
	rows := []ThresholdRow{
		{Label: "loose", Counts: Counts{Reported: 100, Positives: [3]int{0, 10, 10}, Found: [3]int{0, 10, 10}, FalseAlarms: 50}},
		{Label: "mid", Counts: Counts{Reported: 100, Positives: [3]int{0, 10, 10}, Found: [3]int{0, 8, 5}, FalseAlarms: 1}},
		{Label: "tight", Counts: Counts{Reported: 10, Positives: [3]int{0, 10, 10}, Found: [3]int{0, 8, 6}}},
	}
	if b := best(rows); b.Label != "tight" {
		t.Errorf("best = %s, want tight (same near recall, more contained, ≤ 1 %% false alarms)", b.Label)
	}
	if b := best(rows[:1]); b.Label != "loose" {
		t.Errorf("best of none qualifying = %s, want the first row", b.Label)
	}
}
