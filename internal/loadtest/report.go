package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// WriteMarkdown writes results as a Markdown table, each gateway row with
// its ratios to the baseline row of the same mode and concurrency.
func WriteMarkdown(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString("| target | mode | conns | req/s | p50 | p99 | CPU µs/req | CPU × baseline | req/s ÷ baseline | chunk lag p50 / p99 | RSS after |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		if r.Mode == Idle {
			continue // WriteIdle reports these
		}
		cpuRatio, rpsRatio := "", ""
		if base, ok := baselineFor(results, r); ok && r.Target == Gateway {
			cpuRatio = ratio(float64(r.CPUPerRequest()), float64(base.CPUPerRequest()), "%.2f×")
			rpsRatio = ratio(r.RPS(), base.RPS(), "%.0f%%", 100)
		}
		lag := "–"
		if r.Mode == StreamPaced {
			lag = fmtDur(r.LagP50) + " / " + fmtDur(r.LagP99)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %s | %s | %.0f | %s | %s | %s | %.0f MB |\n",
			r.Target, r.Mode, r.Conns, r.RPS(), fmtDur(r.P50), fmtDur(r.P99),
			float64(r.CPUPerRequest())/float64(time.Microsecond), cpuRatio, rpsRatio, lag, float64(r.RSS)/(1<<20))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSummary writes, for each mode and concurrency measured in more than
// one round, the median and the range of the gateway's ratios to the
// baseline of the same round, and the largest resident memory seen. On a
// shared machine one pair of phases can differ from the next by a fifth;
// the median of several alternating rounds is the figure to compare with
// a target.
func WriteSummary(w io.Writer, results []Result) error {
	type key struct {
		mode  Mode
		conns int
	}
	var order []key
	cpu, rps := map[key][]float64{}, map[key][]float64{}
	rss := map[key]int64{}
	for _, r := range results {
		base, ok := baselineFor(results, r)
		if r.Target != Gateway || !ok || base.CPUPerRequest() == 0 || base.RPS() == 0 {
			continue
		}
		k := key{r.Mode, r.Conns}
		if _, seen := cpu[k]; !seen {
			order = append(order, k)
		}
		cpu[k] = append(cpu[k], float64(r.CPUPerRequest())/float64(base.CPUPerRequest()))
		rps[k] = append(rps[k], r.RPS()/base.RPS())
		rss[k] = max(rss[k], r.RSS)
	}
	var b strings.Builder
	b.WriteString("| mode | conns | rounds | CPU × baseline, median (range) | req/s ÷ baseline, median (range) | largest RSS |\n")
	b.WriteString("|---|---:|---:|---|---|---:|\n")
	for _, k := range order {
		c, q := cpu[k], rps[k]
		if len(c) < 2 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f× (%.2f–%.2f) | %.0f%% (%.0f–%.0f) | %.0f MB |\n", k.mode, k.conns, len(c),
			median(c), slices.Min(c), slices.Max(c), 100*median(q), 100*slices.Min(q), 100*slices.Max(q), float64(rss[k])/(1<<20))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// median is the middle value, or the mean of the two middle values.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func baselineFor(results []Result, r Result) (Result, bool) {
	for _, c := range results {
		if c.Target == Baseline && c.Mode == r.Mode && c.Conns == r.Conns && c.Round == r.Round {
			return c, true
		}
	}
	return Result{}, false
}

// ratio formats num/den with format, scaled by the optional factor; a
// zero denominator (too little CPU to measure) yields "n/a".
func ratio(num, den float64, format string, scale ...float64) string {
	if den == 0 {
		return "n/a"
	}
	v := num / den
	for _, s := range scale {
		v *= s
	}
	return fmt.Sprintf(format, v)
}

// fmtDur prints short durations in µs and longer ones in ms.
func fmtDur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// Machine describes the host for the record: cores, CPU model, Go version.
func Machine() string {
	model := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		model = cpuModel(raw)
	}
	return fmt.Sprintf("%d × %s, %s %s/%s", runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// cpuModel returns the first "model name" of a /proc/cpuinfo text.
func cpuModel(cpuinfo []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown CPU"
}
