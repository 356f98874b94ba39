package policy_test

import (
	"context"
	"errors"
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

// TestEvaluateNowTakesTheLease: an evaluation asked for while the
// scheduled one holds the lease (here or on another replica) is refused
// with ErrEvaluationBusy and records nothing; a dry run goes ahead; once
// the lease is free the evaluation runs.
func TestEvaluateNowTakesTheLease(t *testing.T) {
	en := newEnv(t, policy.DefaultConfig())
	l := lease.NewLocal()
	s, err := policy.NewScheduler(en.e, policy.Schedules{Evaluate: "@daily"}, l)
	if err != nil {
		t.Fatal(err)
	}
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := l.Run(ctx, policy.JobEvaluate, func(context.Context) error {
			close(holding)
			<-release
			return nil
		})
		done <- err
	}()
	<-holding
	if _, err := s.EvaluateNow(ctx, false); !errors.Is(err, policy.ErrEvaluationBusy) {
		t.Fatalf("evaluation while another holds the lease: %v, want ErrEvaluationBusy", err)
	}
	if _, err := s.EvaluateNow(ctx, true); err != nil {
		t.Fatalf("dry run while another holds the lease: %v", err)
	}
	if runs, err := en.e.Runs(ctx, 10); err != nil || len(runs) != 0 {
		t.Fatalf("runs recorded: %v, %v", runs, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	run, err := s.EvaluateNow(ctx, false)
	if err != nil || run.ID == 0 || run.Ended.IsZero() {
		t.Fatalf("evaluation once the lease is free: %+v, %v", run, err)
	}
}
