package benchcorpus

import (
	"testing"
	"time"
)

func TestFrontierWaitsForLateCommits(t *testing.T) {
	t0 := time.Unix(0, 0)
	f := Frontier{HoleWait: time.Second}
	for _, id := range []int64{1, 2, 4, 5} {
		if !f.Add(id) {
			t.Fatalf("Add(%d) = false, want new", id)
		}
	}
	f.Advance(t0)
	if f.Low() != 2 {
		t.Fatalf("Low = %d, want 2 (3 not yet committed)", f.Low())
	}
	if f.Add(2) || f.Add(4) {
		t.Fatal("an id seen before counted as new")
	}
	f.Add(3)
	f.Advance(t0.Add(time.Millisecond))
	if f.Low() != 5 {
		t.Fatalf("Low = %d, want 5", f.Low())
	}
}

func TestFrontierSkipsHoles(t *testing.T) {
	t0 := time.Unix(0, 0)
	f := Frontier{HoleWait: time.Second}
	f.Add(1)
	f.Add(3)
	f.Advance(t0)
	f.Advance(t0.Add(500 * time.Millisecond))
	if f.Low() != 1 {
		t.Fatalf("Low = %d before HoleWait, want 1", f.Low())
	}
	f.Advance(t0.Add(time.Second))
	if f.Low() != 3 {
		t.Fatalf("Low = %d after HoleWait, want 3", f.Low())
	}
}
