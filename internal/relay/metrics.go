package relay

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the relay's Prometheus instruments.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	attempts *prometheus.CounterVec
}

// NewMetrics registers the instruments on reg (nil: not registered, for
// tests and benchmarks that build several relays).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "turnpike_requests_total", Help: "Relayed model calls by surface and status.",
		}, []string{"surface", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "turnpike_request_duration_seconds", Help: "Time to the end of a relayed call.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"surface"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "turnpike_upstream_attempts_total", Help: "Upstream attempts by outcome.",
		}, []string{"outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.attempts)
	}
	return m
}

func (m *Metrics) observe(surface string, status int, seconds float64) {
	m.requests.WithLabelValues(surface, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(surface).Observe(seconds)
}

func (m *Metrics) attempt(outcome string) { m.attempts.WithLabelValues(outcome).Inc() }
