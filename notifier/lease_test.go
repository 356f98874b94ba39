package notifier

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/internal/lease"
)

type countSender struct{ n atomic.Int32 }

func (s *countSender) Send(_ context.Context, alerts []Alert) error {
	s.n.Add(int32(len(alerts)))
	return nil
}

// TestDispatchOnlyUnderLease: a notifier whose dispatch lease is held
// elsewhere (another replica) records alerts but sends none; once the
// lease is released it takes it over and sends them.
func TestDispatchOnlyUnderLease(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig()
	cfg.Interval = 50 * time.Millisecond
	cfg.Channels = []ChannelConfig{{Name: "a", Type: TypeNATS}}
	cfg.Routes = []Route{{Channels: []string{"a"}}}
	l := lease.NewLocal()
	held, release, other := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		other <- l.Hold(ctx, DispatchLease, func(context.Context) error { close(held); <-release; return nil })
	}()
	<-held
	s := &countSender{}
	n, err := New(Options{Config: cfg, Outbox: newMemOutbox(), Senders: map[string]Sender{"a": s}, Lease: l})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	if err := n.Notify(ctx, testAlert("a1")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if s.n.Load() != 0 {
		t.Fatal("sent without the dispatch lease")
	}
	close(release)
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.n.Load() != 1 {
		t.Fatalf("sent %d alerts after taking the lease over, want 1", s.n.Load())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
