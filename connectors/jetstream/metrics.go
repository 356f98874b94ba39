package jetstream

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the Prometheus collectors a Source updates, labelled by
// source name. One Metrics may serve many sources.
type Metrics struct {
	// Received counts messages received, redeliveries included.
	Received *prometheus.CounterVec
	// Events counts events decoded from messages and handed to the pipeline.
	Events *prometheus.CounterVec
	// Acked counts messages acknowledged after all their events settled.
	Acked *prometheus.CounterVec
	// Nacked counts messages handed back for redelivery.
	Nacked *prometheus.CounterVec
	// DeadLettered counts messages recorded in the dead-letter stream.
	DeadLettered *prometheus.CounterVec
	// Lag is the consumer's backlog: messages not yet delivered plus those
	// delivered and not yet acknowledged.
	Lag *prometheus.GaugeVec
}

// NewMetrics creates the collectors and registers them with reg, if reg is
// not nil. It panics if they are already registered with reg, as
// prometheus.MustRegister does.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "simdex",
			Subsystem: "jetstream",
			Name:      name,
			Help:      help,
		}, []string{"source"})
	}
	m := &Metrics{
		Received:     counter("messages_received_total", "JetStream messages received, redeliveries included."),
		Events:       counter("events_total", "Events decoded from JetStream messages and handed to the pipeline."),
		Acked:        counter("messages_acked_total", "JetStream messages acknowledged after all their events were committed."),
		Nacked:       counter("messages_nacked_total", "JetStream messages handed back for redelivery."),
		DeadLettered: counter("messages_dead_lettered_total", "JetStream messages recorded in the dead-letter stream."),
		Lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "simdex",
			Subsystem: "jetstream",
			Name:      "consumer_lag",
			Help:      "Messages pending delivery plus delivered and not yet acknowledged, per durable consumer.",
		}, []string{"source"}),
	}
	if reg != nil {
		reg.MustRegister(m.Received, m.Events, m.Acked, m.Nacked, m.DeadLettered, m.Lag)
	}
	return m
}

func (m *Metrics) add(c func(*Metrics) *prometheus.CounterVec, source string, n int) {
	if m == nil || n == 0 {
		return
	}
	c(m).WithLabelValues(source).Add(float64(n))
}

func (m *Metrics) setLag(source string, lag uint64) {
	if m == nil {
		return
	}
	m.Lag.WithLabelValues(source).Set(float64(lag))
}

func received(m *Metrics) *prometheus.CounterVec     { return m.Received }
func events(m *Metrics) *prometheus.CounterVec       { return m.Events }
func acked(m *Metrics) *prometheus.CounterVec        { return m.Acked }
func nacked(m *Metrics) *prometheus.CounterVec       { return m.Nacked }
func deadLettered(m *Metrics) *prometheus.CounterVec { return m.DeadLettered }
