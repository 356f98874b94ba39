package s3

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the Prometheus collectors of listen mode's probes, labelled
// by source name. One Metrics may serve many clients; a nil *Metrics
// records nothing.
type Metrics struct {
	// Stalls counts subscriptions found stalled (and replaced).
	Stalls *prometheus.CounterVec
	// Stalled is 1 from a stall's detection until an event arrives
	// through the new subscription, 0 otherwise.
	Stalled *prometheus.GaugeVec
	// ProbeWrites counts canary objects written (each also deleted).
	ProbeWrites *prometheus.CounterVec
	// ProbeFailures counts probes that could not write their canary.
	ProbeFailures *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg, if reg is
// not nil. It panics if they are already registered with reg, as
// prometheus.MustRegister does.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "simdex", Subsystem: "s3_listen", Name: name, Help: help,
		}, []string{"source"})
	}
	m := &Metrics{
		Stalls: counter("stalls_total", "Listen subscriptions whose probe canaries did not come through, each replaced by a new subscription and a reconciliation."),
		Stalled: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "simdex", Subsystem: "s3_listen", Name: "stalled",
			Help: "1 while a stalled listen subscription has not yet delivered through its replacement.",
		}, []string{"source"}),
		ProbeWrites:   counter("probe_writes_total", "Canary objects written (and deleted) to probe listen subscriptions."),
		ProbeFailures: counter("probe_failures_total", "Probes of listen subscriptions that could not write their canary."),
	}
	if reg != nil {
		reg.MustRegister(m.Stalls, m.Stalled, m.ProbeWrites, m.ProbeFailures)
	}
	return m
}

func (m *Metrics) add(c func(*Metrics) *prometheus.CounterVec, source string) {
	if m == nil {
		return
	}
	c(m).WithLabelValues(source).Inc()
}

func (m *Metrics) setStalled(source string, stalled bool) {
	if m == nil {
		return
	}
	v := 0.0
	if stalled {
		v = 1
	}
	m.Stalled.WithLabelValues(source).Set(v)
}

func stalls(m *Metrics) *prometheus.CounterVec        { return m.Stalls }
func probeWrites(m *Metrics) *prometheus.CounterVec   { return m.ProbeWrites }
func probeFailures(m *Metrics) *prometheus.CounterVec { return m.ProbeFailures }
