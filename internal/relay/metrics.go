package relay

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Metrics are the relay's Prometheus instruments (CONTRACT §11). Labels are
// bounded: surfaces are fixed, models are those of the price table (any
// other name is "other"), channels are the configured channels' names, and
// statuses are HTTP codes; nothing names a user or a key.
//
// Label children are cached per label set, so recording a call looks up
// maps under a read lock and allocates nothing once the set was seen.
type Metrics struct {
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	attempts  *prometheus.CounterVec
	tokens    *prometheus.CounterVec
	quota     *prometheus.CounterVec
	upstream  *prometheus.HistogramVec
	firstByte *prometheus.HistogramVec
	affinity  *prometheus.CounterVec

	reqs      childCache[requestLabels, prometheus.Counter]
	lat       childCache[string, prometheus.Observer]
	toks      childCache[[2]string, *tokenCounters]
	quotas    childCache[string, prometheus.Counter]
	upstreams childCache[string, prometheus.Observer]
	firsts    childCache[string, prometheus.Observer]
	outcomes  childCache[string, prometheus.Counter]
	affs      childCache[[2]string, prometheus.Counter]
}

type requestLabels struct {
	surface, model, channel string
	status                  int
}

type tokenCounters struct{ input, output, cached, reasoning prometheus.Counter }

// metricsNoChannel is the channel label of a call no channel served
// (refused at admission, or no channel available).
const metricsNoChannel = "none"

// metricsOtherModel is the model label of a name that is not in the price
// table, so a client cannot grow the label set by inventing models.
const metricsOtherModel = "other"

var upstreamBuckets = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// NewMetrics registers the instruments on reg (nil: not registered, for
// tests and benchmarks that build several relays).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "turnpike_requests_total", Help: "Model calls by surface, model, serving channel and HTTP status.",
		}, []string{"surface", "model", "channel", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "turnpike_request_duration_seconds", Help: "Time to the end of a relayed call.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"surface"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "turnpike_upstream_attempts_total", Help: "Upstream attempts by outcome.",
		}, []string{"outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "turnpike_tokens_total", Help: "Tokens billed by model, channel and kind (input, output, cached, reasoning).",
		}, []string{"model", "channel", "kind"}),
		quota: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "turnpike_quota_total", Help: "Quota units charged by model.",
		}, []string{"model"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "turnpike_upstream_seconds", Help: "Duration of upstream attempts by channel, to the end of the relayed answer.",
			Buckets: upstreamBuckets,
		}, []string{"channel"}),
		firstByte: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "turnpike_first_byte_seconds", Help: "Time from sending an upstream request to its response headers, by channel.",
			Buckets: upstreamBuckets,
		}, []string{"channel"}),
		affinity: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "turnpike_affinity_total", Help: "Calls of sessions with cache affinity, by model and result (hit, miss, repin).",
		}, []string{"model", "result"}),
	}
	m.reqs.make = func(k requestLabels) prometheus.Counter {
		return m.requests.WithLabelValues(k.surface, k.model, k.channel, strconv.Itoa(k.status))
	}
	m.lat.make = func(s string) prometheus.Observer { return m.latency.WithLabelValues(s) }
	m.toks.make = func(k [2]string) *tokenCounters {
		return &tokenCounters{input: m.tokens.WithLabelValues(k[0], k[1], "input"), output: m.tokens.WithLabelValues(k[0], k[1], "output"),
			cached: m.tokens.WithLabelValues(k[0], k[1], "cached"), reasoning: m.tokens.WithLabelValues(k[0], k[1], "reasoning")}
	}
	m.quotas.make = func(s string) prometheus.Counter { return m.quota.WithLabelValues(s) }
	m.upstreams.make = func(s string) prometheus.Observer { return m.upstream.WithLabelValues(s) }
	m.firsts.make = func(s string) prometheus.Observer { return m.firstByte.WithLabelValues(s) }
	m.outcomes.make = func(s string) prometheus.Counter { return m.attempts.WithLabelValues(s) }
	m.affs.make = func(k [2]string) prometheus.Counter { return m.affinity.WithLabelValues(k[0], k[1]) }
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.attempts, m.tokens, m.quota, m.upstream, m.firstByte, m.affinity)
	}
	return m
}

// observe records a finished call.
func (m *Metrics) observe(surface, model, channel string, status int, seconds float64) {
	m.reqs.get(requestLabels{surface, model, channel, status}).Inc()
	m.lat.get(surface).Observe(seconds)
}

// settled records a call's billed tokens and quota.
func (m *Metrics) settled(model, channel string, u ir.Usage, quota int64) {
	t := m.toks.get([2]string{model, channel})
	addTokens(t.input, u.InputTokens)
	addTokens(t.output, u.OutputTokens)
	addTokens(t.cached, u.CacheReadTokens)
	addTokens(t.reasoning, u.ReasoningTokens)
	if quota > 0 {
		m.quotas.get(model).Add(float64(quota))
	}
}

func addTokens(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}

// upstreamDone records one upstream attempt's duration.
func (m *Metrics) upstreamDone(channel string, seconds float64) {
	m.upstreams.get(channel).Observe(seconds)
}

// firstByteAt records the time to an upstream's response headers.
func (m *Metrics) firstByteAt(channel string, seconds float64) {
	m.firsts.get(channel).Observe(seconds)
}

func (m *Metrics) attempt(outcome string) { m.outcomes.get(outcome).Inc() }

// affinityResult counts a call's cache affinity result.
func (m *Metrics) affinityResult(model, result string) { m.affs.get([2]string{model, result}).Inc() }

// childCache keeps the children of a metric vector by label set. The set
// of keys is bounded by the label rules above; a cache that still grows
// past childCacheMax (channels and prices renamed many times over) is
// started afresh, the vector keeping its series.
type childCache[K comparable, V any] struct {
	mu   sync.RWMutex
	m    map[K]V
	make func(K) V
}

const childCacheMax = 4096

func (c *childCache[K, V]) get(k K) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok = c.m[k]; ok {
		return v
	}
	if c.m == nil || len(c.m) >= childCacheMax {
		c.m = make(map[K]V)
	}
	v = c.make(k)
	c.m[k] = v
	return v
}
