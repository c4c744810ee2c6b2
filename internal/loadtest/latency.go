package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The added-latency modes send one call at a time and time it through
// the fake upstream directly, the bare proxy and the gateway in turn, so
// each target's latency minus the upstream's is what that proxy adds.
const (
	// LatencyRegular times whole non-streamed calls.
	LatencyRegular Mode = "latency"
	// LatencyStream times streamed calls to their first content chunk.
	LatencyStream Mode = "latency-stream"
)

// Direct is the target name of calls made straight to the fake upstream.
const Direct = "upstream"

// IsLatencyMode reports whether m is measured one call at a time across
// all three targets rather than per target under load.
func IsLatencyMode(m Mode) bool { return m == LatencyRegular || m == LatencyStream }

// latencyTarget is one of the three places a latency call can go.
type latencyTarget struct {
	name   string
	url    string
	pid    int // 0 for the upstream, whose CPU is not the subject
	client *http.Client
	times  []time.Duration
	sample sample
}

// measureLatency runs one round of an added-latency mode. The three
// targets take turns call by call, in an order that rotates, so a slow
// spell of a shared machine lands on all three alike instead of on
// whichever target a phase-by-phase run happened to be measuring.
func measureLatency(ctx context.Context, o Options, targets []*latencyTarget, mode Mode, round int) ([]Result, error) {
	body := latencyBody(mode)
	loop := func(d time.Duration, n int, record bool) {
		deadline := time.Now().Add(d)
		for i := 0; ctx.Err() == nil; i++ {
			if n > 0 && i >= n || n <= 0 && !time.Now().Before(deadline) {
				return
			}
			for k := range targets {
				t := targets[(i+k)%len(targets)]
				took, err := latencyCall(ctx, t.client, t.url, body, mode)
				switch {
				case err != nil:
					t.sample.fail(err)
				case record:
					t.times = append(t.times, took)
				}
			}
		}
	}
	if o.Warmup > 0 {
		loop(o.Warmup, 0, false)
	}
	for _, t := range targets {
		t.times, t.sample = t.times[:0], sample{}
	}
	cpuBefore := make([]time.Duration, len(targets))
	for i, t := range targets {
		if t.pid > 0 {
			cpuBefore[i], _ = ProcessCPU(t.pid)
		}
	}
	start := time.Now()
	loop(o.Duration, o.Requests, true)
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out := make([]Result, 0, len(targets))
	for i, t := range targets {
		r := latencyResult(t, mode, round, elapsed)
		if t.pid > 0 {
			after, err := ProcessCPU(t.pid)
			if err != nil {
				return nil, fmt.Errorf("read CPU of %s: %w", t.name, err)
			}
			r.CPU = after - cpuBefore[i]
			if r.RSS, r.RSSAnon, err = ProcessRSS(t.pid); err != nil {
				return nil, fmt.Errorf("read memory of %s: %w", t.name, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func latencyResult(t *latencyTarget, mode Mode, round int, elapsed time.Duration) Result {
	lat := sortedCopy(t.times)
	return Result{Target: t.name, Mode: mode, Conns: 1, Round: round, Requests: len(lat),
		Errors: t.sample.errors, FirstErr: t.sample.firstErr, Elapsed: elapsed,
		P50: percentile(lat, 0.5), P90: percentile(lat, 0.9), P99: percentile(lat, 0.99)}
}

func latencyBody(mode Mode) []byte {
	if mode == LatencyStream {
		return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Say hello in a few words."}],"stream":true,"stream_options":{"include_usage":true}}`, BenchModel)
	}
	return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Say hello in a few words."}]}`, BenchModel)
}

// latencyCall makes one call and returns how long it took: to the end of
// the answer for a regular call, to the first content chunk for a stream
// (the rest is read, unrecorded, so the connection is reused).
func latencyCall(ctx context.Context, client *http.Client, url string, body []byte, mode Mode) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+BenchKey)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("%s: status %d: %s", url, resp.StatusCode, bytes.TrimSpace(msg))
	}
	if mode == LatencyRegular {
		err = readAnswer(resp.Body)
		return time.Since(start), err
	}
	if err := readChunks(resp.Body, 1); err != nil {
		return 0, err
	}
	took := time.Since(start)
	_, err = io.Copy(io.Discard, resp.Body)
	return took, err
}

// newLatencyTargets names the upstream, the bare proxy and the gateway,
// each with a client of its own that keeps one connection open.
func newLatencyTargets(upstreamURL string, proxies []*child, names []string) []*latencyTarget {
	mk := func(name, url string, pid int) *latencyTarget {
		tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}
		return &latencyTarget{name: name, url: url, pid: pid, client: &http.Client{Transport: tr, Timeout: time.Minute}}
	}
	out := []*latencyTarget{mk(Direct, upstreamURL, 0)}
	for i, c := range proxies {
		out = append(out, mk(names[i], c.URL, c.pid()))
	}
	return out
}

// latencyRounds measures every round of one added-latency mode.
func latencyRounds(ctx context.Context, o Options, targets []*latencyTarget, mode Mode) ([]Result, error) {
	var out []Result
	for round := 1; round <= max(o.Rounds, 1); round++ {
		rs, err := measureLatency(ctx, o, targets, mode, round)
		if err != nil {
			return out, err
		}
		for _, r := range rs {
			fmt.Fprintf(o.Log, "%-8s %-14s round %d: p50 %-9s p90 %-9s p99 %s\n", r.Target, r.Mode, round, fmtDur(r.P50), fmtDur(r.P90), fmtDur(r.P99))
		}
		out = append(out, rs...)
	}
	return out, nil
}
