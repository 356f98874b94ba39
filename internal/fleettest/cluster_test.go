package fleettest

import (
	"context"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
)

// TestClusterSurvivesNodeKill: a stream replicated on three nodes keeps
// accepting and delivering messages while one node is killed with
// SIGKILL, and the node catches up when it is started again.
func TestClusterSurvivesNodeKill(t *testing.T) {
	start0 := time.Now()
	bins := Build(t)
	t.Logf("%s: built", time.Since(start0).Round(time.Millisecond))
	c := StartCluster(t, bins, 3)
	t.Logf("%s: cluster up", time.Since(start0).Round(time.Millisecond))
	c.CreateStreams(t)
	js, err := natsjs.New(c.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	publish := func(n int) {
		t.Helper()
		for i := range n {
			err := poll(30*time.Second, nil, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_, err := js.Publish(ctx, EventSubject, []byte{byte(i)})
				return err
			})
			if err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
		}
	}
	t.Logf("%s: publish", time.Since(start0).Round(time.Millisecond))
	publish(50)
	t.Logf("%s: kill 0", time.Since(start0).Round(time.Millisecond))
	c.Kill(0)
	publish(50)
	t.Logf("%s: restart 0", time.Since(start0).Round(time.Millisecond))
	c.Restart(t, 0)
	t.Logf("%s: restarted 0", time.Since(start0).Round(time.Millisecond))
	c.Kill(1)
	t.Logf("%s: killed 1", time.Since(start0).Round(time.Millisecond))
	publish(50)
	t.Logf("%s: restart 1", time.Since(start0).Round(time.Millisecond))
	c.Restart(t, 1)
	t.Logf("%s: restarted 1", time.Since(start0).Round(time.Millisecond))
	s, err := js.Stream(context.Background(), EventStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().State.Msgs; got != 150 {
		t.Errorf("stream holds %d messages, want 150", got)
	}
	for name, r := range c.Replicas(t) {
		if r != 3 {
			t.Errorf("stream %s has %d replicas, want 3", name, r)
		}
	}
}
