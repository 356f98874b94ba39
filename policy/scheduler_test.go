package policy_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/lease"
	"github.com/simdex/simdex/policy"
)

// TestSchedulersShareOneLease: two schedulers (two replicas) on one lease
// and one store run each scheduled evaluation once between them.
func TestSchedulersShareOneLease(t *testing.T) {
	en := newEnv(t, policy.DefaultConfig())
	l := &countingLease{Local: lease.NewLocal(), ran: map[time.Time]int{}}
	c, cancel := context.WithCancel(ctx)
	done := make(chan error, 2)
	for range 2 {
		s, err := policy.NewScheduler(en.e, policy.Schedules{Evaluate: "@every 1s"}, l)
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- s.Run(c) }()
	}
	start := time.Now()
	var runs []policy.Run
	for time.Since(start) < 10*time.Second {
		var err error
		if runs, err = en.e.Runs(ctx, 10); err != nil {
			t.Fatal(err)
		}
		if len(runs) >= 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if len(runs) < 2 {
		t.Fatalf("%d scheduled runs within 10 s, want 2", len(runs))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	total := 0
	for slot, n := range l.ran {
		total += n
		if n != 1 {
			t.Errorf("slot %s ran %d times", slot, n)
		}
	}
	if total != len(runs) && total != len(runs)+1 {
		t.Errorf("%d slots ran, %d runs recorded", total, len(runs))
	}
}

// countingLease counts the runs of each slot.
type countingLease struct {
	*lease.Local
	mu  sync.Mutex
	ran map[time.Time]int
}

func (l *countingLease) RunSlot(ctx context.Context, job string, slot time.Time, fn lease.Func) (bool, error) {
	ran, err := l.Local.RunSlot(ctx, job, slot, fn)
	if ran {
		l.mu.Lock()
		l.ran[slot]++
		l.mu.Unlock()
	}
	return ran, err
}
