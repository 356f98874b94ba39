package daemon

import (
	"context"
	"errors"
	"testing"
)

// TestRunGroup: a member's failure stops the others and is returned named
// by the member; members that stop with the context report no failure;
// started and stopping are called once each, in order.
func TestRunGroup(t *testing.T) {
	boom := errors.New("boom")
	waits := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	for _, tc := range []struct {
		name    string
		members []member
		cancel  bool
		want    string
	}{
		{"failure", []member{{"waits", waits}, {"connector x", func(context.Context) error { return boom }}}, false, "connector x: boom"},
		{"stopped", []member{{"waits", waits}, {"returns at once", func(context.Context) error { return nil }}}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls []string
			err := runGroup(ctx, tc.members, func() {
				calls = append(calls, "started")
				if tc.cancel {
					cancel()
				}
			}, func() { calls = append(calls, "stopping") })
			if (tc.want == "") != (err == nil) || err != nil && (err.Error() != tc.want || !errors.Is(err, boom)) {
				t.Errorf("runGroup: %v, want %q", err, tc.want)
			}
			if len(calls) != 2 || calls[0] != "started" || calls[1] != "stopping" {
				t.Errorf("calls %v, want started then stopping", calls)
			}
		})
	}
}
