package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestSearchGateInTurn: at most n searches run, the others wait and run in
// order of arrival, and one whose client leaves while it waits never runs.
func TestSearchGateInTurn(t *testing.T) {
	reg := prometheus.NewRegistry()
	g, err := newSearchGate(2, reg)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		order   []string
		running int
		most    int
	)
	release := make(chan struct{})
	h := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.URL.Path)
		running++
		most = max(most, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
	}))
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	serve := func(ctx context.Context, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "GET", path, nil))
		}()
		return rec
	}
	// Two run; the rest arrive one after the other and wait.
	serve(context.Background(), "/1")
	serve(context.Background(), "/2")
	waitFor("two running", func() bool { return testutil.ToFloat64(g.running) == 2 })
	gone, leave := context.WithCancel(context.Background())
	left := serve(gone, "/left")
	waitFor("one waiting", func() bool { return testutil.ToFloat64(g.waiting) == 1 })
	for i, p := range []string{"/3", "/4", "/5", "/6"} {
		serve(context.Background(), p)
		waitFor(p+" waiting", func() bool { return testutil.ToFloat64(g.waiting) == float64(i+2) })
		// Counted as waiting just before it parks on the channel: give it
		// the time to park, so that the next one arrives after it.
		time.Sleep(50 * time.Millisecond)
	}
	leave()
	waitFor("the leaver gone", func() bool { return testutil.ToFloat64(g.waiting) == 4 })
	// One slot frees at a time: each goes to the longest waiting.
	for n := 3; n <= 6; n++ {
		release <- struct{}{}
		waitFor("the next search", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == n })
	}
	close(release)
	wg.Wait()
	if want := []string{"/1", "/2", "/3", "/4", "/5", "/6"}; !slices.Equal(order[2:], want[2:]) || len(order) != len(want) {
		t.Fatalf("ran %v, want the first two then %v", order, want[2:])
	}
	if most != 2 {
		t.Fatalf("%d ran at once, want 2", most)
	}
	if left.Code != http.StatusServiceUnavailable {
		t.Fatalf("a request whose client left answered %d", left.Code)
	}
	if testutil.ToFloat64(g.running) != 0 || testutil.ToFloat64(g.waiting) != 0 {
		t.Fatal("gauges not back to zero")
	}
}
