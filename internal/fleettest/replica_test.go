package fleettest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// TestReplicasShareTheWorkQueue: two replicas, each with its own SQLite
// index, pull from the same durable consumer, so every upload is indexed
// by exactly one of them; a replica stopped and started again comes back
// ready on its data directory and answers with its token.
func TestReplicasShareTheWorkQueue(t *testing.T) {
	f := Start(t, Options{Replicas: 2})
	mc := f.MinIO.Client(t)
	c := NewCorpus(1, 40, 4)
	upload(t, mc, slices.Concat(c.Groups...), nil)
	f.WaitDrained(t, time.Minute)
	total := func() int64 {
		var sum int64
		for _, r := range f.Replicas {
			var st index.Stats
			if err := r.Get("/api/v1/stats", &st); err != nil {
				t.Fatal(err)
			}
			t.Logf("replica %d indexed %d", r.Index, st.Documents)
			sum += st.Documents
		}
		return sum
	}
	if got := total(); got != int64(c.Len()) {
		t.Fatalf("the replicas indexed %d documents together, want %d: each event once", got, c.Len())
	}
	f.Replicas[1].Stop()
	f.Replicas[1].Restart(t)
	var who struct {
		Role string `json:"role"`
	}
	if err := f.Replicas[1].Get("/api/v1/whoami", &who); err != nil || who.Role != "admin" {
		t.Fatalf("whoami after restart: %v, role %q", err, who.Role)
	}
	if got := total(); got != int64(c.Len()) {
		t.Errorf("after the restart the replicas hold %d documents, want %d", got, c.Len())
	}
	if _, err := f.Replicas[0].Metric("simdex_events_in_flight"); err != nil {
		t.Error(fmt.Errorf("metrics: %w", err))
	}
}
