package fleettest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simdex/simdex/index"
)

// TestLosingMinIOsNATSNodeLosesNoEvent kills with SIGKILL, a third of the
// way through 600 uploads, the NATS node MinIO's notification target is
// connected to, and starts it again only after the last upload. MinIO's
// client moves to another node, and the events it could not publish
// meanwhile ("nats: no response from stream") wait in its queue directory
// and are published again: every object is indexed exactly once although
// nothing reconciles (issue 47, item 3: without the queue directory, 8 of
// 600 were lost).
func TestLosingMinIOsNATSNodeLosesNoEvent(t *testing.T) {
	start := time.Now()
	step := func(what string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), what) }
	f := Start(t, Options{Replicas: 1, Driver: SQLite}) // Reconcile "": only events index
	step("fleet ready")
	corpus := NewCorpus(47, 600, groupSize)
	objs := slices.Concat(corpus.Seeds(), corpus.Copies())
	upload(t, f.MinIO.Client(t), objs, func(done, total int) {
		if done == total/3 {
			f.NATS.Kill(0)
			step("MinIO's NATS node killed")
		}
	})
	step("uploads done")
	f.NATS.Restart(t, 0)
	step("node restarted")
	err := poll(3*time.Minute, nil, func() error {
		var st index.Stats
		if err := f.Replicas[0].Get("/api/v1/stats", &st); err != nil {
			return err
		}
		if st.Documents < int64(corpus.Len()) {
			return fmt.Errorf("%d documents of %d", st.Documents, corpus.Len())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("events lost with MinIO's NATS node: %v", err)
	}
	step("every object indexed")
	f.WaitDrained(t, 2*time.Minute)
	checkIndexedOnce(t, f, corpus)
}
