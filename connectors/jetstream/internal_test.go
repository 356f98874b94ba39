package jetstream

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
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

// lostReplyMsg is a message whose acknowledgement reaches the server but
// whose confirmation never comes back, as when the consumer's leader
// fails over between the two.
type lostReplyMsg struct {
	natsjs.Msg
	acks atomic.Int32
}

func (m *lostReplyMsg) DoubleAck(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (m *lostReplyMsg) Ack() error {
	m.acks.Add(1)
	return nil
}

// TestAckWithoutConfirmationDoesNotHang: an event whose acknowledgement is
// never confirmed is settled within ReplyTimeout, not at its handler's
// deadline (minutes), and acknowledged once more without confirmation.
func TestAckWithoutConfirmationDoesNotHang(t *testing.T) {
	cfg, err := Config{Name: "lost-reply", Stream: "S", Durable: "d", Subjects: []string{"s.>"}, ReplyTimeout: 50 * time.Millisecond}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	s := &Source{cfg: cfg, log: slog.New(slog.DiscardHandler), tracked: map[*inflight]struct{}{}}
	m := &lostReplyMsg{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	done := make(chan struct{})
	go func() {
		s.ack(ctx, &inflight{msg: m})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ack waited for the handler's deadline, not ReplyTimeout")
	}
	if n := m.acks.Load(); n != 1 {
		t.Errorf("unconfirmed acks sent: %d, want 1", n)
	}
}
