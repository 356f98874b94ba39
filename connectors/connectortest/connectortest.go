// Package connectortest is the conformance suite every connector must
// pass. A connector's tests implement Harness, which makes a fresh,
// isolated Origin (a bucket, a stream, a folder) per subtest, and call Run.
//
// The suite checks the connectors.Source contract from the outside: the
// events that follow puts and deletes, bodies read through Open, version
// and idempotency keys, keys that need escaping, a few hundred objects
// delivered exactly once, cancellation, slow consumers, and settlement
// (redelivery on transient failure, none after success, dead letters on
// permanent failure and for garbage). Optional capabilities, declared by
// implementing the small interfaces below on the Origin, enable the checks
// that need them.
package connectortest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/connectors"
)

// ContentTypeKey in Put's meta gives the object's content type rather than
// a user metadata entry.
const ContentTypeKey = "Content-Type"

// Origin is where objects come from, driven by the suite.
type Origin interface {
	// Source returns a fresh source for this origin. It may be called
	// again after an earlier source's Run returned, to test restarts:
	// the new source must resume where the old one left off.
	Source(t *testing.T) connectors.Source
	// Put creates or updates the object key; an event must follow. meta
	// holds user metadata and, under ContentTypeKey, the content type;
	// origins that cannot carry them ignore them.
	Put(t *testing.T, key string, body []byte, meta map[string]string)
	// Delete removes the object key; a Removed event must follow.
	Delete(t *testing.T, key string)
}

// Optional capabilities of an Origin.
type (
	// Garbager injects a malformed event or message. It must be
	// dead-lettered or reported, must not crash the source and must not
	// block later events.
	Garbager interface{ Garbage(t *testing.T) }
	// DeadLetterer counts the origin's dead-lettered records.
	DeadLetterer interface{ DeadLetters(t *testing.T) int }
	// Redeliverer reports whether events settled with a transient error
	// (or not settled at all) are delivered again by the origin.
	Redeliverer interface{ Redelivers() bool }
	// MetadataKeeper reports whether events carry the content type and
	// user metadata given to Put.
	MetadataKeeper interface{ KeepsMetadata() bool }
	// Replayer reports whether a new source emits every existing object
	// again on start. Such replays must repeat the IdempotencyKey of the
	// event already settled, so that the pipeline skips them.
	Replayer interface{ Replays() bool }
	// Patient gives how long to wait for an event that should, or should
	// not, be redelivered (the origin's redelivery delay plus margin).
	// Default DefaultRedeliveryWait.
	Patient interface{ RedeliveryWait() time.Duration }
)

// Harness makes origins for the suite.
type Harness interface {
	// New returns a fresh origin isolated from every other; cleanup goes
	// through t.Cleanup.
	New(t *testing.T) Origin
}

// DefaultRedeliveryWait is the wait used for origins that are not Patient.
const DefaultRedeliveryWait = 2 * time.Second

// eventTimeout bounds the wait for an event that must come.
const eventTimeout = 20 * time.Second

// manyObjects is the object count of the bulk subtest.
const manyObjects = 200

// Run runs the conformance suite against h, one subtest per property.
func Run(t *testing.T, h Harness) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, Origin)
	}{
		{"Created", testCreated},
		{"Updated", testUpdated},
		{"Removed", testRemoved},
		{"Keys", testKeys},
		{"Many", testMany},
		{"Cancel", testCancel},
		{"SlowConsumer", testSlowConsumer},
		{"TransientRedelivered", testTransientRedelivered},
		{"SettledNotRedeliveredAfterRestart", testSettledNotRedelivered},
		{"PermanentDeadLettered", testPermanentDeadLettered},
		{"Garbage", testGarbage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h.New(t)) })
	}
}

func redeliveryWait(o Origin) time.Duration {
	if p, ok := o.(Patient); ok {
		return p.RedeliveryWait()
	}
	return DefaultRedeliveryWait
}

func has[T any](o Origin, check func(T) bool) bool {
	c, ok := o.(T)
	return ok && check(c)
}

// runner is a source running in the background.
type runner struct {
	t      *testing.T
	out    chan connectors.Event
	cancel context.CancelFunc
	done   chan error
	ended  bool
}

func start(t *testing.T, o Origin, buffer int) *runner {
	t.Helper()
	src := o.Source(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{t: t, out: make(chan connectors.Event, buffer), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- src.Run(ctx, r.out) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop cancels Run, checks that it returns promptly without error and
// without closing out.
func (r *runner) stop() {
	r.t.Helper()
	if r.ended {
		return
	}
	r.ended = true
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			r.t.Errorf("Run returned %v after cancel, want nil", err)
		}
	case <-time.After(5 * time.Second):
		r.t.Fatal("Run did not return within 5s of cancel")
	}
	select {
	case _, ok := <-r.out:
		if !ok {
			r.t.Error("Run closed its output channel")
		}
	default:
	}
}

// next returns the next event, failing the test if none comes in time.
func (r *runner) next() connectors.Event {
	r.t.Helper()
	select {
	case ev := <-r.out:
		return ev
	case err := <-r.done:
		r.ended = true
		r.t.Fatalf("Run returned before the expected event: %v", err)
	case <-time.After(eventTimeout):
		r.t.Fatalf("no event within %s", eventTimeout)
	}
	return connectors.Event{}
}

// quiet fails on any event within d, except replays that accept allows
// (they are settled with nil).
func (r *runner) quiet(d time.Duration, accept func(connectors.Event) bool) {
	r.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-r.out:
			if accept == nil || !accept(ev) {
				r.t.Fatalf("unexpected event %s %q (version %q)", ev.Kind, ev.Key, ev.VersionID)
			}
			ev.Settle(context.Background(), nil)
		case err := <-r.done:
			r.ended = true
			r.t.Fatalf("Run returned: %v", err)
		case <-deadline:
			return
		}
	}
}

// read returns the whole body through ev.Open.
func read(t *testing.T, ev connectors.Event) []byte {
	t.Helper()
	if ev.Open == nil {
		t.Fatalf("Created event %q has no Open", ev.Key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	rc, err := ev.Open(ctx)
	if err != nil {
		t.Fatalf("Open %q: %v", ev.Key, err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", ev.Key, err)
	}
	return b
}

func expect(t *testing.T, ev connectors.Event, kind connectors.Kind, key string) {
	t.Helper()
	if ev.Kind != kind || ev.Key != key {
		t.Fatalf("got %s %q, want %s %q", ev.Kind, ev.Key, kind, key)
	}
	if ev.Source == "" {
		t.Errorf("event %q has no Source", ev.Key)
	}
	if ev.Done == nil {
		t.Errorf("event %q has no Done", ev.Key)
	}
}

func transientErr() error {
	return &connectors.Error{Op: "conformance", Kind: connectors.Transient, Err: errors.New("index briefly unavailable")}
}

func permanentErr() error {
	return &connectors.Error{Op: "conformance", Kind: connectors.Permanent, Err: errors.New("document rejected")}
}

func testCreated(t *testing.T, o Origin) {
	r := start(t, o, 1)
	body := []byte("The quick brown fox jumps over the lazy dog.\n")
	o.Put(t, "docs/fox.txt", body, map[string]string{ContentTypeKey: "text/plain", "Author": "Ada"})
	ev := r.next()
	expect(t, ev, connectors.Created, "docs/fox.txt")
	for i := range 2 {
		if got := read(t, ev); !bytes.Equal(got, body) {
			t.Fatalf("Open #%d returned %q, want %q", i+1, got, body)
		}
	}
	if ev.Size != int64(len(body)) && ev.Size != -1 {
		t.Errorf("Size = %d, want %d or -1", ev.Size, len(body))
	}
	if ev.Time.IsZero() {
		t.Error("Time is zero")
	}
	if has(o, MetadataKeeper.KeepsMetadata) {
		if !strings.HasPrefix(ev.ContentType, "text/plain") {
			t.Errorf("ContentType = %q, want text/plain", ev.ContentType)
		}
		if got := lookupFold(ev.Metadata, "Author"); got != "Ada" {
			t.Errorf("Metadata = %v, want Author: Ada", ev.Metadata)
		}
	}
	ev.Settle(context.Background(), nil)
}

func lookupFold(m map[string]string, key string) string {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return ""
}

func testUpdated(t *testing.T, o Origin) {
	r := start(t, o, 1)
	o.Put(t, "report.txt", []byte("first draft"), nil)
	ev1 := r.next()
	expect(t, ev1, connectors.Created, "report.txt")
	ev1.Settle(context.Background(), nil)
	o.Put(t, "report.txt", []byte("second, longer draft"), nil)
	ev2 := r.next()
	expect(t, ev2, connectors.Created, "report.txt")
	if ev2.IdempotencyKey() == ev1.IdempotencyKey() {
		t.Errorf("update kept the idempotency key %q", ev1.IdempotencyKey())
	}
	if ev2.VersionID == ev1.VersionID && ev2.ETag == ev1.ETag {
		t.Errorf("update kept VersionID %q and ETag %q", ev1.VersionID, ev1.ETag)
	}
	if got := read(t, ev2); string(got) != "second, longer draft" {
		t.Errorf("Open after update = %q", got)
	}
	ev2.Settle(context.Background(), nil)
}

func testRemoved(t *testing.T, o Origin) {
	r := start(t, o, 1)
	o.Put(t, "gone.txt", []byte("short-lived"), nil)
	created := r.next()
	expect(t, created, connectors.Created, "gone.txt")
	created.Settle(context.Background(), nil)
	o.Delete(t, "gone.txt")
	removed := r.next()
	expect(t, removed, connectors.Removed, "gone.txt")
	if removed.IdempotencyKey() == created.IdempotencyKey() {
		t.Errorf("Removed event shares the idempotency key of the Created one: %q", removed.IdempotencyKey())
	}
	removed.Settle(context.Background(), nil)
}

// Keys that need escaping somewhere along the way must arrive unchanged.
var awkwardKeys = []string{
	"with space.txt",
	"plus+sign.txt",
	"percent%20literal.txt",
	"100%.txt",
	"dir/sub dir/deep/file.txt",
	"unicodé/naïve résumé.txt",
	"日本語/文書.txt",
	"emoji-📄.txt",
	"question?mark.txt",
	"hash#tag.txt",
	"amp&equals=.txt",
}

func testKeys(t *testing.T, o Origin) {
	r := start(t, o, len(awkwardKeys))
	for _, k := range awkwardKeys {
		o.Put(t, k, []byte("body of "+k), nil)
	}
	got := map[string]bool{}
	for range awkwardKeys {
		ev := r.next()
		if ev.Kind != connectors.Created {
			t.Fatalf("got %s %q", ev.Kind, ev.Key)
		}
		if !slices.Contains(awkwardKeys, ev.Key) {
			t.Fatalf("key %q (%+q) is not one that was put", ev.Key, ev.Key)
		}
		if got[ev.Key] {
			t.Fatalf("key %q delivered twice", ev.Key)
		}
		got[ev.Key] = true
		if b := read(t, ev); string(b) != "body of "+ev.Key {
			t.Errorf("body of %q = %q", ev.Key, b)
		}
		ev.Settle(context.Background(), nil)
	}
}

func testMany(t *testing.T, o Origin) {
	r := start(t, o, 16)
	for i := range manyObjects {
		key := fmt.Sprintf("bulk/%03d.txt", i)
		o.Put(t, key, []byte("object "+key), nil)
	}
	seen := map[string]int{}
	for len(seen) < manyObjects {
		ev := r.next()
		seen[ev.Key]++
		if seen[ev.Key] > 1 {
			t.Fatalf("%q delivered twice", ev.Key)
		}
		if b := read(t, ev); string(b) != "object "+ev.Key {
			t.Errorf("body of %q = %q", ev.Key, b)
		}
		ev.Settle(context.Background(), nil)
	}
	r.quiet(redeliveryWait(o), nil)
}

func testCancel(t *testing.T, o Origin) {
	r := start(t, o, 0)
	o.Put(t, "a.txt", []byte("a"), nil)
	ev := r.next()
	ev.Settle(context.Background(), nil)
	o.Put(t, "b.txt", []byte("b"), nil)
	// Nobody reads: the source is (or soon will be) blocked on out when
	// the cancel comes.
	time.Sleep(300 * time.Millisecond)
	r.stop()
}

func testSlowConsumer(t *testing.T, o Origin) {
	const n = 20
	r := start(t, o, 0)
	for i := range n {
		o.Put(t, fmt.Sprintf("slow/%02d.txt", i), []byte("slow"), nil)
	}
	time.Sleep(2 * redeliveryWait(o)) // nobody reads meanwhile
	first := map[string]string{}
	for len(first) < n {
		ev := r.next()
		if k, ok := first[ev.Key]; ok && k != ev.IdempotencyKey() {
			t.Fatalf("%q came again as a different version", ev.Key)
		}
		first[ev.Key] = ev.IdempotencyKey()
		ev.Settle(context.Background(), nil)
	}
	r.quiet(redeliveryWait(o), func(ev connectors.Event) bool { return first[ev.Key] == ev.IdempotencyKey() })
}

func testTransientRedelivered(t *testing.T, o Origin) {
	if !has(o, Redeliverer.Redelivers) {
		t.Skip("origin does not redeliver")
	}
	r := start(t, o, 1)
	o.Put(t, "retry.txt", []byte("try again"), nil)
	ev := r.next()
	expect(t, ev, connectors.Created, "retry.txt")
	ev.Settle(context.Background(), transientErr())
	again := r.next()
	expect(t, again, connectors.Created, "retry.txt")
	if again.IdempotencyKey() != ev.IdempotencyKey() {
		t.Errorf("redelivery changed the idempotency key: %q -> %q", ev.IdempotencyKey(), again.IdempotencyKey())
	}
	if b := read(t, again); string(b) != "try again" {
		t.Errorf("redelivered body = %q", b)
	}
	again.Settle(context.Background(), nil)
	r.quiet(redeliveryWait(o), nil)
}

func testSettledNotRedelivered(t *testing.T, o Origin) {
	r := start(t, o, 1)
	o.Put(t, "settled.txt", []byte("done"), nil)
	ev := r.next()
	expect(t, ev, connectors.Created, "settled.txt")
	ev.Settle(context.Background(), nil)
	r.quiet(redeliveryWait(o), nil)
	r.stop()

	r2 := start(t, o, 1)
	replays := has(o, Replayer.Replays)
	r2.quiet(redeliveryWait(o), func(e connectors.Event) bool {
		return replays && e.IdempotencyKey() == ev.IdempotencyKey()
	})
	// The restarted source still delivers new objects.
	o.Put(t, "after-restart.txt", []byte("new"), nil)
	next := r2.next()
	expect(t, next, connectors.Created, "after-restart.txt")
	next.Settle(context.Background(), nil)
}

func testPermanentDeadLettered(t *testing.T, o Origin) {
	r := start(t, o, 1)
	o.Put(t, "rejected.txt", []byte("bad"), nil)
	ev := r.next()
	expect(t, ev, connectors.Created, "rejected.txt")
	ev.Settle(context.Background(), permanentErr())
	if dl, ok := o.(DeadLetterer); ok {
		waitFor(t, "one dead letter", func() bool { return dl.DeadLetters(t) == 1 })
	}
	r.quiet(redeliveryWait(o), nil)
	o.Put(t, "accepted.txt", []byte("good"), nil)
	next := r.next()
	expect(t, next, connectors.Created, "accepted.txt")
	next.Settle(context.Background(), nil)
}

func testGarbage(t *testing.T, o Origin) {
	g, ok := o.(Garbager)
	if !ok {
		t.Skip("origin cannot inject garbage")
	}
	r := start(t, o, 1)
	g.Garbage(t)
	o.Put(t, "after-garbage.txt", []byte("fine"), nil)
	ev := r.next()
	expect(t, ev, connectors.Created, "after-garbage.txt")
	ev.Settle(context.Background(), nil)
	if dl, ok := o.(DeadLetterer); ok {
		waitFor(t, "a dead letter for the garbage", func() bool { return dl.DeadLetters(t) >= 1 })
	}
	r.quiet(redeliveryWait(o), nil)
}

// waitFor polls cond until it holds, failing after eventTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
