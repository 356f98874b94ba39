package jetstream

import (
	"slices"
	"testing"
	"time"
)

func TestSubsumes(t *testing.T) {
	cases := []struct {
		pattern, subject string
		want             bool
	}{
		{"a.b", "a.b", true},
		{"a.b", "a.c", false},
		{"a.*", "a.b", true},
		{"a.*", "a.b.c", false},
		{"a.*", "a.>", false},
		{"a.*", "a.*", true},
		{"a.>", "a.b.c", true},
		{"a.>", "a.>", true},
		{"a.>", "a.*", true},
		{"a.>", "a", false},
		{">", "x", true},
		{"a.b.c", "a.b", false},
		{"simdex.deadletter.>", "simdex.deadletter.nats_docs", true},
	}
	for _, tc := range cases {
		if got := subsumes(tc.pattern, tc.subject); got != tc.want {
			t.Errorf("subsumes(%q, %q) = %v, want %v", tc.pattern, tc.subject, got, tc.want)
		}
	}
	if got := dedupe([]string{"x.a", "x.>", "x.a", "y"}); !slices.Equal(got, []string{"x.>", "y"}) {
		t.Errorf("dedupe = %v", got)
	}
}

func TestBackoffSchedule(t *testing.T) {
	c := Config{Backoff: []time.Duration{time.Second, 2 * time.Second}}
	for delivered, want := range map[uint64]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 9: 2 * time.Second} {
		if got := c.backoff(delivered); got != want {
			t.Errorf("backoff(%d) = %s, want %s", delivered, got, want)
		}
	}
}
