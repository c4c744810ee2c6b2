package loadtest

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The added-latency targets, from the round's upstream figures: the
// gateway may add at most the bare proxy's added latency plus
// latencySlackP50 at the median, and at most latencyRatioP99 times the
// proxy's at p99.
const (
	latencySlackP50 = 50 * time.Microsecond
	latencyRatioP99 = 1.5
)

// added is what one round of one latency mode measured, as the time each
// proxy adds over calling the upstream directly.
type added struct {
	mode               Mode
	round              int
	upstream           Result
	proxy, gateway     [3]time.Duration // p50, p90, p99 added
	proxyOK, gatewayOK bool
}

func hasLatency(results []Result) bool {
	return slices.ContainsFunc(results, func(r Result) bool { return IsLatencyMode(r.Mode) })
}

// addedLatency pairs each round's three targets of the latency modes.
func addedLatency(results []Result) []added {
	var out []added
	for _, up := range results {
		if up.Target != Direct {
			continue
		}
		a := added{mode: up.Mode, round: up.Round, upstream: up}
		for _, r := range results {
			if r.Mode != up.Mode || r.Round != up.Round {
				continue
			}
			d := [3]time.Duration{r.P50 - up.P50, r.P90 - up.P90, r.P99 - up.P99}
			switch r.Target {
			case Baseline:
				a.proxy, a.proxyOK = d, true
			case Gateway:
				a.gateway, a.gatewayOK = d, true
			}
		}
		if a.proxyOK && a.gatewayOK {
			out = append(out, a)
		}
	}
	return out
}

// WriteLatency writes the added-latency table: per round, the upstream's
// own p50/p90/p99 and what the bare proxy and the gateway add to each,
// then per mode the medians over the rounds and whether the targets hold.
func WriteLatency(w io.Writer, results []Result) error {
	rows := addedLatency(results)
	var b strings.Builder
	b.WriteString("| call | round | upstream p50 / p90 / p99 | proxy adds p50 / p90 / p99 | gateway adds p50 / p90 / p99 | gateway − proxy, p50 | gateway ÷ proxy, p99 |\n")
	b.WriteString("|---|---:|---|---|---|---:|---:|\n")
	for _, a := range rows {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", latencyCallName(a.mode), a.round,
			triple([3]time.Duration{a.upstream.P50, a.upstream.P90, a.upstream.P99}), triple(a.proxy), triple(a.gateway),
			fmtSigned(a.gateway[0]-a.proxy[0]), ratio(float64(a.gateway[2]), float64(max(a.proxy[2], 0)), "%.2f×"))
	}
	for _, mode := range []Mode{LatencyRegular, LatencyStream} {
		var dp50, r99 []float64
		for _, a := range rows {
			if a.mode != mode {
				continue
			}
			dp50 = append(dp50, float64(a.gateway[0]-a.proxy[0]))
			// A round whose proxy added nothing measurable at p99 has no
			// ratio; the median is over the rounds that have one.
			if a.proxy[2] > 0 {
				r99 = append(r99, float64(a.gateway[2])/float64(a.proxy[2]))
			}
		}
		if len(dp50) == 0 {
			continue
		}
		m50 := time.Duration(median(dp50))
		p99 := "n/a"
		if len(r99) > 0 {
			m99 := median(r99)
			p99 = fmt.Sprintf("%.2f× (%s)", m99, verdict(m99 <= latencyRatioP99))
		}
		fmt.Fprintf(&b, "| %s | median of %d | | | | %s (%s) | %s |\n", latencyCallName(mode), len(dp50),
			fmtSigned(m50), verdict(m50 <= latencySlackP50), p99)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func latencyCallName(m Mode) string {
	if m == LatencyStream {
		return "streamed, first chunk"
	}
	return "regular"
}

func triple(d [3]time.Duration) string {
	return fmtSigned(d[0]) + " / " + fmtSigned(d[1]) + " / " + fmtSigned(d[2])
}

// fmtSigned is fmtDur for a difference, which noise can make negative.
func fmtSigned(d time.Duration) string {
	if d < 0 {
		return "−" + fmtDur(-d)
	}
	return fmtDur(d)
}

func verdict(ok bool) string {
	if ok {
		return "within target"
	}
	return "over target"
}
