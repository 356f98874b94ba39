package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"
)

// searchGate runs the API's near-copy searches a few at a time and lets
// the others wait their turn, in order of arrival (semaphore.Weighted
// serves its waiters first in, first out), in the manner of Prometheus's
// query concurrency gate.
//
// Without it, every request ran at once and competed, at each of a
// search's half-dozen store calls (a search now holds one connection for
// all of them), for one of a few read connections, which database/sql
// hands to a waiter chosen at random: at 1,000,000
// documents and 50 clients the slowest hundredth of searches took more
// than twice the median (p99 98 ms, p50 43 ms). Searches are CPU-bound, so
// running more of them at once than there are cores only shares the cores
// among more of them; in turn, each runs without interruption and the
// wait is about the same for all.
type searchGate struct {
	slots            *semaphore.Weighted
	running, waiting prometheus.Gauge
}

// newSearchGate admits n searches at once and registers its gauges.
func newSearchGate(n int, reg prometheus.Registerer) (*searchGate, error) {
	g := &searchGate{
		slots: semaphore.NewWeighted(int64(n)),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "simdex_http_searches_running",
			Help: "Near-copy searches the API is running (at most http.max_searches).",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "simdex_http_searches_waiting",
			Help: "Near-copy search requests waiting for their turn (http.max_searches are running).",
		}),
	}
	for _, c := range []prometheus.Collector{g.running, g.waiting} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// unregister removes the gauges.
func (g *searchGate) unregister(reg prometheus.Registerer) {
	reg.Unregister(g.running)
	reg.Unregister(g.waiting)
}

// wrap runs h in turn. A request whose client goes away while it waits is
// dropped without running; nil runs h at once.
func (g *searchGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.run(r.Context(), func() { h.ServeHTTP(w, r) }); err != nil {
			writeError(w, http.StatusServiceUnavailable, err)
		}
	})
}

// run runs fn in turn, or returns an error without running it when ctx
// ends first; nil runs fn at once. Work as heavy as a search (extracting
// an object read again from its origin) takes its turn too.
func (g *searchGate) run(ctx context.Context, fn func()) error {
	if g == nil {
		fn()
		return nil
	}
	g.waiting.Inc()
	err := g.slots.Acquire(ctx, 1)
	g.waiting.Dec()
	if err != nil {
		return errors.New("request ended while waiting for a search slot")
	}
	g.running.Inc()
	defer func() {
		g.running.Dec()
		g.slots.Release(1)
	}()
	fn()
	return nil
}
