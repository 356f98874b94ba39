package s3_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/internal/miniotest"
)

// listener runs Client.Listen in the background.
type listener struct {
	ch     chan connectors.Event
	cancel context.CancelFunc
	done   chan error
}

func startListen(t testing.TB, c *s3.Client) *listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{ch: make(chan connectors.Event, 64), cancel: cancel, done: make(chan error, 1)}
	go func() { l.done <- c.Listen(ctx, l.ch) }()
	t.Cleanup(func() { l.stop(t) })
	return l
}

// stop cancels Listen and checks that it returns nil promptly.
func (l *listener) stop(t testing.TB) {
	t.Helper()
	l.cancel()
	select {
	case err := <-l.done:
		if err != nil {
			t.Errorf("Listen returned %v after cancel, want nil", err)
		}
		l.done <- nil // later stops return at once
	case <-time.After(5 * time.Second):
		t.Fatal("Listen did not return within 5s of cancel")
	}
}

// TestListen checks the subscription's life cycle against a real MinIO:
// Listen stays subscribed while the server runs, survives a server restart
// and returns nil promptly when cancelled; it asks for a catch-up once its
// first subscription holds (what happened before it is lost) and again
// after the restart. Delivery is TestListenDeliversUnflushedStream's and
// TestListenRestartsStalledSubscription's.
func TestListen(t *testing.T) {
	ms := startMinIO(t)
	const bucket = "listened"
	ms.MakeBucket(t, bucket, true, false)
	catchUps := make(chan struct{}, 8)
	c := newClient(t, ms, bucket, func(cfg *s3.Config) {
		cfg.Mode = s3.ModeListen
		cfg.CatchUp = func(context.Context) { catchUps <- struct{}{} }
	})
	l := startListen(t, c)
	caughtUp := func(when string) {
		t.Helper()
		select {
		case <-catchUps:
		case <-time.After(testTimeout):
			t.Fatalf("%s: no catch-up", when)
		}
	}
	caughtUp("at start")
	alive := func(when string) {
		t.Helper()
		select {
		case err := <-l.done:
			t.Fatalf("%s: Listen returned %v while subscribed", when, err)
		case <-time.After(2 * time.Second):
		}
	}
	alive("running")
	ms.Restart(t)
	alive("after a MinIO restart")
	caughtUp("after a MinIO restart")
	l.stop(t)
}

// TestListenDeliversUnflushedStream: the pinned MinIO never flushes the
// listen stream, so its events leave the server in pieces cut in the
// middle of HTTP chunks; Listen must still hand each event on as soon as
// its bytes arrive. Of 20 uploads, all but the last few (still in the
// server's write buffers, about 6 KB) must arrive while the connection
// stays open. Before listenIdentity read one byte at a time, none did:
// minio-go's 4 MB read waited for the buffer to fill or the stream to end.
func TestListenDeliversUnflushedStream(t *testing.T) {
	ms := startMinIO(t)
	const bucket = "unflushed"
	ms.MakeBucket(t, bucket, true, false)
	m := s3.NewMetrics(nil)
	c := newClient(t, ms, bucket, func(cfg *s3.Config) {
		cfg.Mode = s3.ModeListen
		cfg.ProbeInterval = time.Second
		cfg.Metrics = m
	})
	l := startListen(t, c)
	waitFor(t, "a first probe", func() bool { return testutil.CollectAndCount(m.Stalled) == 1 })
	mc := ms.Client(t)
	const uploads, held = 20, 8
	for i := range uploads {
		put(t, mc, bucket, fmt.Sprintf("doc-%02d", i), []byte("body"), minio.PutObjectOptions{})
	}
	got := map[string]bool{}
	deadline := time.After(15 * time.Second)
	for len(got) < uploads-held {
		select {
		case ev := <-l.ch:
			ev.Settle(context.Background(), nil)
			got[ev.Key] = true
		case <-deadline:
			t.Fatalf("Listen delivered %d of %d uploads within 15s, want at least %d", len(got), uploads, uploads-held)
		}
	}
	for i := range uploads - held {
		if k := fmt.Sprintf("doc-%02d", i); !got[k] {
			t.Errorf("upload %s not delivered", k)
		}
	}
}

// TestListenRestartsStalledSubscription: a listen stream that stays open
// but delivers nothing (the proxy drops the server's bytes) is found by
// the probe, reported by ListenHealth, replaced by a new subscription that
// delivers, and followed by a catch-up; the canaries are never handed on
// and none is left in the bucket.
func TestListenRestartsStalledSubscription(t *testing.T) {
	ms := startMinIO(t)
	const bucket = "stalling"
	ms.MakeBucket(t, bucket, true, false)
	proxy := miniotest.StartProxy(t, ms)
	catchUps := make(chan struct{}, 8)
	m := s3.NewMetrics(nil)
	c := newClient(t, ms, bucket, func(cfg *s3.Config) {
		cfg.Endpoint = proxy.Endpoint()
		cfg.Mode = s3.ModeListen
		cfg.ProbeInterval = time.Second
		cfg.Metrics = m
		cfg.CatchUp = func(context.Context) { catchUps <- struct{}{} }
	})
	l := startListen(t, c)
	// Subscribed once a probe's canary has come through (the gauge is
	// set, to 0).
	waitFor(t, "a first probe", func() bool { return testutil.CollectAndCount(m.Stalled) == 1 })
	select {
	case <-catchUps: // the first subscription's
	case <-time.After(testTimeout):
		t.Fatal("no catch-up at start")
	}
	mc := ms.Client(t)
	// A single upload comes through: the probe's canaries push it out of
	// MinIO's buffers.
	put(t, mc, bucket, "before", []byte("body"), minio.PutObjectOptions{})
	wantKeys(t, l.ch, "before")
	if err := c.ListenHealth(); err != nil {
		t.Fatalf("ListenHealth before the stall: %v", err)
	}

	if n := proxy.StallListens(); n != 1 {
		t.Fatalf("stalled %d listen streams, want 1", n)
	}
	waitFor(t, "ListenHealth reports the stall", func() bool { return errors.Is(c.ListenHealth(), s3.ErrListenStalled) })
	if got := testutil.ToFloat64(m.Stalls.WithLabelValues(c.Name())); got < 1 {
		t.Errorf("stalls_total = %v, want at least 1", got)
	}
	select {
	case <-catchUps:
	case <-time.After(testTimeout):
		t.Fatal("no catch-up after the stall")
	}
	put(t, mc, bucket, "after", []byte("body"), minio.PutObjectOptions{})
	wantKeys(t, l.ch, "after")
	waitFor(t, "ListenHealth clears", func() bool { return c.ListenHealth() == nil })
	if got := testutil.ToFloat64(m.Stalled.WithLabelValues(c.Name())); got != 0 {
		t.Errorf("stalled gauge = %v after recovery, want 0", got)
	}
	l.stop(t)
	if left := listKeys(t, mc, bucket); len(left) != 2 {
		t.Errorf("bucket holds %v, want only the two uploads (no canary left)", left)
	}
}

// wantKeys receives events until every key has come, skipping others;
// canaries must never come.
func wantKeys(t testing.TB, ch <-chan connectors.Event, keys ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	deadline := time.After(testTimeout)
	for len(want) > 0 {
		select {
		case ev := <-ch:
			ev.Settle(context.Background(), nil)
			if strings.Contains(ev.Key, s3.ProbeDir) {
				t.Fatalf("canary %q handed on", ev.Key)
			}
			delete(want, ev.Key)
		case <-deadline:
			t.Fatalf("events of %v not delivered within %s", want, testTimeout)
		}
	}
}

// waitFor polls cond until it holds or testTimeout passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, testTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listKeys lists every version's key in bucket.
func listKeys(t testing.TB, mc *minio.Client, bucket string) []string {
	t.Helper()
	var keys []string
	for o := range mc.ListObjects(testContext(t), bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true}) {
		if o.Err != nil {
			t.Fatalf("list %s: %v", bucket, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}
