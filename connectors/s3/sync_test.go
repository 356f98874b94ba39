package s3_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"go.uber.org/goleak"

	"github.com/simdex/simdex/connectors"
)

// memInventory is an index stand-in: the versions committed so far.
type memInventory struct {
	mu   sync.Mutex
	seen map[string]bool              // idempotency keys
	live map[string]map[string]string // key -> version -> idempotency key
}

func newInventory() *memInventory {
	return &memInventory{seen: map[string]bool{}, live: map[string]map[string]string{}}
}

func (m *memInventory) Seen(_ context.Context, k string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[k], nil
}

func (m *memInventory) Objects(_ context.Context, _, _ string, fn func(key, vid string) error) error {
	m.mu.Lock()
	var keys, vids []string
	for k, vs := range m.live {
		for v := range vs {
			keys, vids = append(keys, k), append(vids, v)
		}
	}
	m.mu.Unlock()
	for i := range keys {
		if err := fn(keys[i], vids[i]); err != nil {
			return err
		}
	}
	return nil
}

// apply commits events the way the pipeline does.
func (m *memInventory) apply(evs []connectors.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ev := range evs {
		switch {
		case ev.Kind == connectors.Created:
			m.seen[ev.IdempotencyKey()] = true
			if m.live[ev.Key] == nil {
				m.live[ev.Key] = map[string]string{}
			}
			m.live[ev.Key][ev.VersionID] = ev.IdempotencyKey()
		case ev.DeleteMarker:
			delete(m.live, ev.Key)
		default:
			delete(m.live[ev.Key], ev.VersionID)
		}
	}
}

func run(t *testing.T, f func(chan<- connectors.Event), n int) []connectors.Event {
	t.Helper()
	ch := make(chan connectors.Event, 64)
	done := make(chan struct{})
	go func() { f(ch); close(done) }()
	evs := collect(t, ch, n)
	<-done
	sort.Slice(evs, func(i, j int) bool { return evs[i].Key+evs[i].VersionID < evs[j].Key+evs[j].VersionID })
	return evs
}

// TestBackfillAndReconcile walks a versioned bucket: Backfill emits every
// version except those a delete marker hides; Reconcile then finds the
// versions uploaded and deleted while "simdex was down", and a key hidden
// by a delete marker leaves the index once, not at every run.
func TestBackfillAndReconcile(t *testing.T) {
	ms := startMinIO(t)
	const bucket = "synced"
	ms.MakeBucket(t, bucket, true, false)
	mc := ms.Client(t)
	c := newClient(t, ms, bucket, nil)
	ctx := testContext(t)

	put(t, mc, bucket, "a.txt", []byte("a1"), minio.PutObjectOptions{})
	put(t, mc, bucket, "a.txt", []byte("a2"), minio.PutObjectOptions{})
	put(t, mc, bucket, "gone.txt", []byte("g"), minio.PutObjectOptions{})
	remove(t, mc, bucket, "gone.txt", "") // a delete marker hides it

	inv := newInventory()
	evs := run(t, func(ch chan<- connectors.Event) {
		if _, err := c.Backfill(ctx, ch); err != nil {
			t.Errorf("Backfill: %v", err)
		}
	}, 2)
	for _, ev := range evs {
		if ev.Kind != connectors.Created || ev.Key != "a.txt" {
			t.Errorf("backfill emitted %s %q", ev.Kind, ev.Key)
		}
	}
	inv.apply(evs)

	// While down: a new object, a permanent delete of one version, and a
	// delete marker over an indexed key.
	put(t, mc, bucket, "new.txt", []byte("n"), minio.PutObjectOptions{})
	vs, err := c.Versions(ctx, "a.txt")
	if err != nil || len(vs) != 2 {
		t.Fatalf("Versions(a.txt) = %v, %v", vs, err)
	}
	remove(t, mc, bucket, "a.txt", vs[1].VersionID) // the older version, for good
	put(t, mc, bucket, "b.txt", []byte("b"), minio.PutObjectOptions{})
	inv.apply(run(t, func(ch chan<- connectors.Event) {
		if _, err := c.Reconcile(ctx, inv, ch); err != nil {
			t.Errorf("Reconcile: %v", err)
		}
	}, 3)) // new.txt, b.txt created; a.txt's old version removed
	remove(t, mc, bucket, "b.txt", "")

	evs = run(t, func(ch chan<- connectors.Event) {
		if _, err := c.Reconcile(ctx, inv, ch); err != nil {
			t.Errorf("Reconcile: %v", err)
		}
	}, 1)
	if ev := evs[0]; ev.Kind != connectors.Removed || ev.Key != "b.txt" || !ev.DeleteMarker {
		t.Fatalf("second reconcile: %s %q marker=%v, want the delete marker of b.txt", ev.Kind, ev.Key, ev.DeleteMarker)
	}
	inv.apply(evs)

	counts, err := c.Reconcile(ctx, inv, make(chan connectors.Event, 1))
	if err != nil || counts.Emitted != 0 {
		t.Fatalf("third reconcile: %+v, %v; want nothing to do", counts, err)
	}
	var live []string
	for k, vs := range inv.live {
		for range vs {
			live = append(live, k)
		}
	}
	sort.Strings(live)
	if want := []string{"a.txt", "new.txt"}; len(live) != 2 || live[0] != want[0] || live[1] != want[1] {
		t.Fatalf("indexed after reconciliation: %v, want %v", live, want)
	}
}

// TestBackfillStoppedMidListingLeaksNothing: a backfill whose consumer
// stops reading and whose context ends mid-listing returns, and leaves no
// listing goroutine behind (minio-go's sends the context's error on its
// channel and blocked there for good when nobody drained it).
func TestBackfillStoppedMidListingLeaksNothing(t *testing.T) {
	ms := startMinIO(t)
	const bucket = "stopped"
	ms.MakeBucket(t, bucket, true, false)
	mc := ms.Client(t)
	for i := range 20 {
		put(t, mc, bucket, fmt.Sprintf("k%02d.txt", i), []byte("x"), minio.PutObjectOptions{})
	}
	c := newClient(t, ms, bucket, nil)
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(testContext(t))
	out := make(chan connectors.Event) // never read: the pipeline has stopped
	done := make(chan error, 1)
	go func() {
		_, err := c.Backfill(ctx, out)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // the listing is under way, blocked on out
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Backfill stopped mid-listing returned no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Backfill did not return after its context ended")
	}
	goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"), goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}
