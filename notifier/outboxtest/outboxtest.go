// Package outboxtest is the conformance suite of notifier.Outbox: every
// outbox (notifier/sqlite, notifier/postgres) runs Run against its
// backend, so that they keep one contract. The suite opens several handles
// on one backend, as replicas of the daemon do, and checks what sharing an
// outbox demands: an alert enqueued by two replicas at once is delivered
// once per channel, two dispatchers never claim one delivery, and a
// delivery claimed by a replica that died is sent after its lease.
package outboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdex/simdex/notifier"
)

// Outbox is an outbox under test.
type Outbox interface {
	notifier.Outbox
	// Close releases the handle; the data stays for the next one.
	Close() error
}

// Opener opens a new handle on the backend's data: a restart of the
// process, or another replica on the same database. Each call may return
// an outbox on its own connections.
type Opener func(t testing.TB) Outbox

// Run runs the suite. newBackend makes an empty backend for one test and
// returns its opener.
func Run(t *testing.T, newBackend func(t *testing.T) Opener) {
	tests := []struct {
		name string
		run  func(t *testing.T, open Opener)
	}{
		{"SurvivesRestart", testSurvivesRestart},
		{"EnqueueRace", testEnqueueRace},
		{"ClaimsAreLeases", testClaimsAreLeases},
		{"LeaseExpires", testLeaseExpires},
		{"DispatchersSendOnce", testDispatchersSendOnce},
		{"RetryAndRequeue", testRetryAndRequeue},
		{"UnknownDeliveries", testUnknownDeliveries},
		{"List", testList},
		{"AlertIDs", testAlertIDs},
		{"Prune", testPrune},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newBackend(t)) })
	}
}

// Alert returns an alert for the tests.
func Alert(id string) notifier.Alert {
	return notifier.Alert{ID: id, Kind: notifier.KindDuplicateUpload, Document: 7, Name: "q3 report (copy).docx",
		Summary: "upload duplicates existing content", Evidence: json.RawMessage(`{"exact":true}`), Created: time.Now().UTC()}
}

func closeOutbox(t testing.TB, o Outbox) {
	t.Helper()
	if err := o.Close(); err != nil {
		t.Errorf("close outbox: %v", err)
	}
}

// recorder is a notifier.Sender that counts what it is sent, by alert id.
type recorder struct {
	mu    sync.Mutex
	sent  map[string]int
	calls atomic.Int32
}

func newRecorder() *recorder { return &recorder{sent: map[string]int{}} }

func (r *recorder) Send(_ context.Context, alerts []notifier.Alert) error {
	r.calls.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range alerts {
		r.sent[a.ID]++
	}
	return nil
}

// newNotifier returns a notifier on ob whose only channel, "hook", sends
// to rec.
func newNotifier(t testing.TB, ob notifier.Outbox, rec notifier.Sender) *notifier.Notifier {
	t.Helper()
	cfg := notifier.DefaultConfig()
	cfg.FlagsSubject = "" // only the channel configured here
	cfg.Channels = []notifier.ChannelConfig{{Name: "hook", Type: notifier.TypeNATS}}
	cfg.Routes = []notifier.Route{{Channels: []string{"hook"}}}
	n, err := notifier.New(notifier.Options{Config: cfg, Outbox: ob, Senders: map[string]notifier.Sender{"hook": rec}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// testSurvivesRestart: alerts notified before a crash are delivered by the
// next process, exactly those, once each.
func testSurvivesRestart(t *testing.T, open Opener) {
	ctx := context.Background()
	rec := newRecorder()
	ob := open(t)
	n := newNotifier(t, ob, rec)
	for _, id := range []string{"a", "b", "c"} {
		if err := n.Notify(ctx, Alert(id)); err != nil {
			t.Fatal(err)
		}
	}
	closeOutbox(t, ob) // the process dies before dispatching

	ob = open(t)
	defer closeOutbox(t, ob)
	n = newNotifier(t, ob, rec)
	if err := n.Notify(ctx, Alert("a")); err != nil { // re-raised after restart: no second delivery
		t.Fatal(err)
	}
	if sent, err := n.Dispatch(ctx); sent != 3 || err != nil {
		t.Fatalf("sent %d, %v", sent, err)
	}
	if sent, _ := n.Dispatch(ctx); sent != 0 || rec.calls.Load() != 3 {
		t.Fatalf("second dispatch sent %d; %d calls in all", sent, rec.calls.Load())
	}
	ds, err := n.Deliveries(ctx, notifier.StatusDelivered, 0)
	if err != nil || len(ds) != 3 {
		t.Fatalf("delivered: %+v, %v", ds, err)
	}
	for _, d := range ds {
		if d.Attempts != 1 || d.DeliveredAt.IsZero() || !d.NextAttempt.IsZero() || d.Channel != "hook" {
			t.Errorf("delivered %+v", d)
		}
	}
}

// testEnqueueRace: replicas enqueue the same alerts at once; each alert
// has one delivery per channel, whichever replica won.
func testEnqueueRace(t *testing.T, open Opener) {
	ctx := context.Background()
	replicas := []Outbox{open(t), open(t), open(t)}
	defer func() {
		for _, o := range replicas {
			closeOutbox(t, o)
		}
	}()
	now := time.Now()
	due := map[string]time.Time{"x": now, "y": now, "z": {}}
	var wg sync.WaitGroup
	errs := make(chan error, 20*len(replicas))
	for i := range 20 {
		for _, o := range replicas {
			wg.Go(func() { errs <- o.Enqueue(ctx, Alert(fmt.Sprintf("alert-%d", i)), due) })
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ds, err := replicas[0].List(ctx, "", 0)
	if err != nil || len(ds) != 60 {
		t.Fatalf("%d deliveries (%v), want 60", len(ds), err)
	}
	seen := map[string]bool{}
	for _, d := range ds {
		k := d.AlertID + "/" + d.Channel
		if seen[k] || d.Status != notifier.StatusPending || d.Attempts != 0 {
			t.Errorf("delivery %+v repeated or not pending", d)
		}
		seen[k] = true
	}
}

// enqueueMany records n alerts with one delivery each, to the channel
// "hook", due at now.
func enqueueMany(t testing.TB, ob notifier.Outbox, n int, now time.Time) {
	t.Helper()
	for i := range n {
		if err := ob.Enqueue(context.Background(), Alert(fmt.Sprintf("alert-%03d", i)), map[string]time.Time{"hook": now}); err != nil {
			t.Fatal(err)
		}
	}
}

// testClaimsAreLeases: dispatchers on two replicas claim disjoint sets
// that cover every due delivery, and hold them for their lease.
func testClaimsAreLeases(t *testing.T, open Opener) {
	ctx := context.Background()
	replicas := []Outbox{open(t), open(t)}
	defer func() {
		for _, o := range replicas {
			closeOutbox(t, o)
		}
	}()
	now := time.Now()
	enqueueMany(t, replicas[0], 50, now)
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for i := range 4 {
		ob := replicas[i%len(replicas)]
		wg.Go(func() {
			for {
				cs, err := ob.Claim(ctx, now, time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				mu.Lock()
				for _, c := range cs {
					seen[c.ID]++
					if c.Alert.ID != c.AlertID || c.Alert.Kind != notifier.KindDuplicateUpload {
						t.Errorf("claimed %d with alert %+v", c.ID, c.Alert)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 50 {
		t.Fatalf("%d deliveries claimed, want 50", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %d claimed %d times", id, n)
		}
	}
	if cs, _ := replicas[1].Claim(ctx, now.Add(59*time.Second), time.Minute, 100); len(cs) != 0 {
		t.Fatalf("within the lease: %d claimed again", len(cs))
	}
}

// leaseWait bounds how long testLeaseExpires polls for a short lease to
// end on the wall clock (a backend may lease by the database's clock).
const leaseWait = 10 * time.Second

// testLeaseExpires: a delivery whose dispatcher died without recording
// its outcome is due again, on another replica, once its lease is over.
func testLeaseExpires(t *testing.T, open Opener) {
	ctx := context.Background()
	a, b := open(t), open(t)
	defer closeOutbox(t, a)
	defer closeOutbox(t, b)
	enqueueMany(t, a, 5, time.Now())
	const lease = 300 * time.Millisecond
	if cs, err := a.Claim(ctx, time.Now(), lease, 100); err != nil || len(cs) != 5 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	// a dies here.
	var got []notifier.Claimed
	for deadline := time.Now().Add(leaseWait); len(got) < 5 && time.Now().Before(deadline); {
		cs, err := b.Claim(ctx, time.Now(), time.Minute, 100)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cs...)
		time.Sleep(lease / 10)
	}
	if len(got) != 5 {
		t.Fatalf("after the lease: %d claimed again, want 5", len(got))
	}
}

// testDispatchersSendOnce: two replicas' notifiers dispatch the same
// outbox at once; every alert is sent exactly once.
func testDispatchersSendOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	replicas := []Outbox{open(t), open(t)}
	defer func() {
		for _, o := range replicas {
			closeOutbox(t, o)
		}
	}()
	enqueueMany(t, replicas[0], 300, time.Now())
	rec := newRecorder()
	var sent atomic.Int64
	var wg sync.WaitGroup
	for _, ob := range replicas {
		n := newNotifier(t, ob, rec)
		for range 2 {
			wg.Go(func() {
				k, err := n.Dispatch(ctx)
				if err != nil {
					t.Error(err)
				}
				sent.Add(int64(k))
			})
		}
	}
	wg.Wait()
	if sent.Load() != 300 || len(rec.sent) != 300 {
		t.Fatalf("sent %d, %d distinct alerts; want 300", sent.Load(), len(rec.sent))
	}
	for id, k := range rec.sent {
		if k != 1 {
			t.Errorf("alert %s sent %d times", id, k)
		}
	}
	if ds, err := replicas[1].List(ctx, notifier.StatusDelivered, 0); err != nil || len(ds) != 300 {
		t.Errorf("%d delivered (%v), want 300", len(ds), err)
	}
}

// testRetryAndRequeue: a failed attempt is due again at its next time; a
// final one stays failed, visible, until an operator requeues it, which
// only failed deliveries can be, all or none.
func testRetryAndRequeue(t *testing.T, open Opener) {
	ctx := context.Background()
	ob := open(t)
	defer closeOutbox(t, ob)
	now := time.Now()
	enqueueMany(t, ob, 2, now)
	cs, err := ob.Claim(ctx, now, time.Minute, 10)
	if err != nil || len(cs) != 2 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	a, b := cs[0].ID, cs[1].ID
	next := now.Add(10 * time.Second)
	if err := ob.Retry(ctx, []int64{a}, "busy", next, false); err != nil {
		t.Fatal(err)
	}
	if err := ob.Retry(ctx, []int64{b}, "gone", next, true); err != nil {
		t.Fatal(err)
	}
	if cs, _ := ob.Claim(ctx, next.Add(-time.Millisecond), time.Minute, 10); len(cs) != 0 {
		t.Fatalf("claimed %d before the retry time", len(cs))
	}
	cs, err = ob.Claim(ctx, next, time.Minute, 10)
	if err != nil || len(cs) != 1 || cs[0].ID != a || cs[0].Attempts != 1 || cs[0].LastError != "busy" {
		t.Fatalf("claimed at the retry time %+v, %v", cs, err)
	}
	if err := ob.Delivered(ctx, []int64{a}, next); err != nil {
		t.Fatal(err)
	}
	failed, err := ob.List(ctx, notifier.StatusFailed, 0)
	if err != nil || len(failed) != 1 || failed[0].ID != b || failed[0].LastError != "gone" || failed[0].Attempts != 1 {
		t.Fatalf("failed %+v, %v", failed, err)
	}
	if err := ob.Requeue(ctx, []int64{a, b}, next); !errors.Is(err, notifier.ErrNotFound) {
		t.Fatalf("requeue of a pending delivery: %v, want ErrNotFound", err)
	}
	if failed, _ := ob.List(ctx, notifier.StatusFailed, 0); len(failed) != 1 {
		t.Fatalf("a refused requeue changed the failed delivery: %+v", failed)
	}
	later := next.Add(time.Hour)
	if err := ob.Requeue(ctx, []int64{b}, later); err != nil {
		t.Fatal(err)
	}
	cs, err = ob.Claim(ctx, later, time.Minute, 10)
	if err != nil || len(cs) != 1 || cs[0].ID != b || cs[0].Attempts != 0 {
		t.Fatalf("after requeue claimed %+v, %v", cs, err)
	}
}

// testUnknownDeliveries: recording an outcome for an id the outbox does
// not hold is ErrNotFound; empty lists are no-ops.
func testUnknownDeliveries(t *testing.T, open Opener) {
	ctx := context.Background()
	ob := open(t)
	defer closeOutbox(t, ob)
	now := time.Now()
	for name, err := range map[string]error{
		"delivered": ob.Delivered(ctx, []int64{12345}, now),
		"retry":     ob.Retry(ctx, []int64{12345}, "x", now, false),
		"requeue":   ob.Requeue(ctx, []int64{12345}, now),
	} {
		if !errors.Is(err, notifier.ErrNotFound) {
			t.Errorf("%s of an unknown id: %v, want ErrNotFound", name, err)
		}
	}
	for name, err := range map[string]error{
		"delivered": ob.Delivered(ctx, nil, now),
		"retry":     ob.Retry(ctx, nil, "x", now, false),
		"requeue":   ob.Requeue(ctx, nil, now),
	} {
		if err != nil {
			t.Errorf("%s of no ids: %v", name, err)
		}
	}
}

// testList: newest first, filtered by status, at most limit.
func testList(t *testing.T, open Opener) {
	ctx := context.Background()
	ob := open(t)
	defer closeOutbox(t, ob)
	now := time.Now()
	enqueueMany(t, ob, 5, now)
	cs, err := ob.Claim(ctx, now, time.Minute, 2)
	if err != nil || len(cs) != 2 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	if err := ob.Delivered(ctx, []int64{cs[0].ID, cs[1].ID}, now); err != nil {
		t.Fatal(err)
	}
	all, err := ob.List(ctx, "", 0)
	if err != nil || len(all) != 5 {
		t.Fatalf("list all: %d, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Fatalf("not newest first: %d after %d", all[i].ID, all[i-1].ID)
		}
	}
	if ds, err := ob.List(ctx, notifier.StatusPending, 2); err != nil || len(ds) != 2 || ds[0].ID != all[0].ID {
		t.Errorf("two newest pending: %+v, %v", ds, err)
	}
	if ds, err := ob.List(ctx, notifier.StatusDelivered, 0); err != nil || len(ds) != 2 || ds[0].DeliveredAt.IsZero() {
		t.Errorf("delivered: %+v, %v", ds, err)
	}
}

// BenchmarkCycle measures one alert's way through the outbox: Enqueue to
// one channel, Claim, Delivered.
func BenchmarkCycle(b *testing.B, open Opener) {
	ctx := context.Background()
	ob := open(b)
	defer closeOutbox(b, ob)
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := ob.Enqueue(ctx, Alert(fmt.Sprintf("alert-%d", i)), map[string]time.Time{"hook": now}); err != nil {
			b.Fatal(err)
		}
		cs, err := ob.Claim(ctx, now, time.Minute, 10)
		if err != nil || len(cs) != 1 {
			b.Fatalf("claimed %d, %v", len(cs), err)
		}
		if err := ob.Delivered(ctx, []int64{cs[0].ID}, now); err != nil {
			b.Fatal(err)
		}
	}
}

// testAlertIDs: alert ids in any script are delivered as they are; one
// with a NUL or invalid UTF-8, which not every outbox can key on, is
// refused by Notify before anything is recorded.
func testAlertIDs(t *testing.T, open Opener) {
	ctx := context.Background()
	ob := open(t)
	defer closeOutbox(t, ob)
	rec := newRecorder()
	n := newNotifier(t, ob, rec)
	for _, id := range []string{"flag/42", "Müller-株式会社-🙂", "x'; DROP TABLE y; --"} {
		if err := n.Notify(ctx, Alert(id)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a\x00b", "\xff"} {
		if err := n.Notify(ctx, Alert(id)); !errors.Is(err, notifier.ErrInvalidAlert) {
			t.Errorf("notify %q: %v, want ErrInvalidAlert", id, err)
		}
	}
	if sent, err := n.Dispatch(ctx); sent != 3 || err != nil {
		t.Fatalf("sent %d, %v", sent, err)
	}
	for _, id := range []string{"flag/42", "Müller-株式会社-🙂", "x'; DROP TABLE y; --"} {
		if rec.sent[id] != 1 {
			t.Errorf("alert %q sent %d times", id, rec.sent[id])
		}
	}
}

// testPrune: deliveries delivered before the cut are deleted, at most
// limit at a time, with the alerts left without a delivery; an alert with
// a delivery still pending or failed on another channel stays, and so do
// those deliveries.
func testPrune(t *testing.T, open Opener) {
	ctx := context.Background()
	ob := open(t)
	defer closeOutbox(t, ob)
	now := time.Now().UTC().Truncate(time.Millisecond)
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)
	enqueueMany(t, ob, 4, old) // alert-000..003 on "hook"
	if err := ob.Enqueue(ctx, Alert("alert-000"), map[string]time.Time{"mail": old}); err != nil {
		t.Fatal(err)
	}
	cs, err := ob.Claim(ctx, now, time.Minute, 10)
	if err != nil || len(cs) != 5 {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	id := map[string]int64{}
	for _, c := range cs {
		id[c.AlertID+"/"+c.Channel] = c.ID
	}
	deliver := func(at time.Time, keys ...string) {
		t.Helper()
		for _, k := range keys {
			if err := ob.Delivered(ctx, []int64{id[k]}, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	deliver(old, "alert-000/hook", "alert-001/hook", "alert-002/hook")
	deliver(recent, "alert-003/hook")
	if err := ob.Retry(ctx, []int64{id["alert-000/mail"]}, "refused", now, true); err != nil {
		t.Fatal(err)
	}
	cut := now.Add(-24 * time.Hour)
	if n, err := ob.Prune(ctx, cut, 2); err != nil || n != 2 {
		t.Fatalf("prune with limit 2: %d, %v", n, err)
	}
	if n, err := ob.Prune(ctx, cut, 100); err != nil || n != 1 {
		t.Fatalf("prune the rest: %d, %v", n, err)
	}
	if n, err := ob.Prune(ctx, cut, 100); err != nil || n != 0 {
		t.Fatalf("prune again: %d, %v", n, err)
	}
	left, err := ob.List(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range left {
		got[d.AlertID+"/"+d.Channel] = d.Status
	}
	want := map[string]string{"alert-000/mail": notifier.StatusFailed, "alert-003/hook": notifier.StatusDelivered}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	// The failed delivery's alert was kept: requeued, it is sent whole.
	if err := ob.Requeue(ctx, []int64{id["alert-000/mail"]}, now); err != nil {
		t.Fatal(err)
	}
	cs, err = ob.Claim(ctx, now, time.Minute, 10)
	if err != nil || len(cs) != 1 || cs[0].Alert.ID != "alert-000" || cs[0].Alert.Name == "" {
		t.Fatalf("claimed after prune %+v, %v", cs, err)
	}
	// A pruned alert enqueued again is a new alert.
	if err := ob.Enqueue(ctx, Alert("alert-001"), map[string]time.Time{"hook": now}); err != nil {
		t.Fatal(err)
	}
	if cs, err := ob.Claim(ctx, now, time.Minute, 10); err != nil || len(cs) != 1 || cs[0].AlertID != "alert-001" {
		t.Fatalf("claimed the re-enqueued alert %+v, %v", cs, err)
	}
}
