package fleettest

import (
	"strings"
	"testing"
)

// TestCorpus: the same seed gives the same objects; groups are whole, keys
// unique, and a copy differs from its seed in a few words only.
func TestCorpus(t *testing.T) {
	a, b := NewCorpus(7, 95, 10), NewCorpus(7, 95, 10)
	if a.Len() != 100 || len(a.Seeds()) != 10 || len(a.Copies()) != 90 {
		t.Fatalf("len %d, seeds %d, copies %d; want 100, 10, 90", a.Len(), len(a.Seeds()), len(a.Copies()))
	}
	keys := map[string]bool{}
	for g, objs := range a.Groups {
		for k, o := range objs {
			if o != b.Groups[g][k] {
				t.Fatalf("group %d copy %d differs between two corpora of one seed", g, k)
			}
			if keys[o.Key] {
				t.Fatalf("key %s twice", o.Key)
			}
			keys[o.Key] = true
			seed, text := strings.Fields(objs[0].Body), strings.Fields(o.Body)
			diff := 0
			for i := range seed {
				if seed[i] != text[i] {
					diff++
				}
			}
			if len(seed) != len(text) || diff > editsPer {
				t.Fatalf("group %d copy %d: %d words of %d differ from the seed", g, k, diff, len(seed))
			}
		}
	}
	if NewCorpus(8, 95, 10).Groups[0][0].Body == a.Groups[0][0].Body {
		t.Error("two seeds gave the same text")
	}
}
