package eval

// classes are the positive classes recall is measured on, in table order.
var classes = [...]Class{Exact, Near, Contained}

// classNames name classes for tables.
var classNames = map[Class]string{
	Exact:     "exact",
	Near:      "near (res ≥ 0.8)",
	Contained: "contained (≥ 0.9)",
	Unrelated: "unrelated (< 0.3)",
}

// Counts are the outcome of one method at one threshold over the ordered
// pairs (A, B) of a corpus: "is B among the versions reported for A?".
// Symmetric methods count each unordered pair twice.
type Counts struct {
	// Reported is the number of reported ordered pairs.
	Reported int
	// Positives and Found count, per positive class (exact, near,
	// contained), the ordered pairs in the class and those reported.
	Positives, Found [len(classes)]int
	// FalseAlarms is the number of reported pairs of unrelated texts.
	FalseAlarms int
	// Correct is the number of reported pairs in a positive class.
	Correct int
}

// Recall returns the share of class c's pairs that were reported, or 1
// when the class is empty.
func (c Counts) Recall(cl Class) float64 {
	for k, x := range classes {
		if x == cl {
			if c.Positives[k] == 0 {
				return 1
			}
			return float64(c.Found[k]) / float64(c.Positives[k])
		}
	}
	return 0
}

// FalseAlarmShare returns the share of reported pairs that are false
// alarms (0 when nothing is reported).
func (c Counts) FalseAlarmShare() float64 {
	if c.Reported == 0 {
		return 0
	}
	return float64(c.FalseAlarms) / float64(c.Reported)
}

// Precision returns the share of reported pairs in a positive class (1
// when nothing is reported); pairs between 0.3 and the class thresholds
// are neither positives nor false alarms and lower it.
func (c Counts) Precision() float64 {
	if c.Reported == 0 {
		return 1
	}
	return float64(c.Correct) / float64(c.Reported)
}

// Pair is an ordered pair of documents of a corpus, by position.
type Pair struct{ A, B int32 }

// Tally counts reported pairs against a truth table.
type Tally struct {
	truth     *Truth
	positives [len(classes)]int
}

// NewTally counts the positives of every class over all ordered pairs.
func NewTally(t *Truth) *Tally {
	ta := &Tally{truth: t}
	n := t.Len()
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			cl := Classify(t.Get(i, j))
			for k, x := range classes {
				if cl&x != 0 {
					ta.positives[k] += 2
				}
			}
		}
	}
	return ta
}

func (c *Counts) add(cl Class) {
	if cl&Unrelated != 0 {
		c.FalseAlarms++
	}
	if cl&(Exact|Near|Contained) != 0 {
		c.Correct++
	}
	for k, x := range classes {
		if cl&x != 0 {
			c.Found[k]++
		}
	}
}

// Scored is a pair with a method's score.
type Scored[V any] struct {
	Pair
	Score V
}

// CountPassing returns the counts of the pairs whose score passes; when
// symmetric, each pair also stands for (B, A).
func CountPassing[V any](ta *Tally, pairs []Scored[V], symmetric bool, pass func(V) bool) Counts {
	c := Counts{Positives: ta.positives}
	for _, p := range pairs {
		if !pass(p.Score) {
			continue
		}
		cl := Classify(ta.truth.Get(int(p.A), int(p.B)))
		c.Reported++
		c.add(cl)
		if symmetric {
			c.Reported++
			c.add(cl)
		}
	}
	return c
}
