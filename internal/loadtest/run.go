package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Target names.
const (
	// Baseline is the bare reverse proxy.
	Baseline = "baseline"
	// Gateway is Turnpike with billing and logging on.
	Gateway = "gateway"
)

// Options set up a run.
type Options struct {
	// Self is the executable re-run for the child servers.
	Self string
	// Duration is how long each phase is measured; Warmup precedes it.
	Duration, Warmup time.Duration
	// Requests, when positive, ends each phase after that many calls
	// instead of after Duration.
	Requests int
	Conns    []int
	Modes    []Mode
	// Rounds is how many times each baseline-then-gateway pair of phases is
	// measured; more than one gives WriteSummary medians to report.
	Rounds int
	// Chunks is the number of content chunks per streamed answer, and
	// ChunkDelay the upstream's pause before each in paced streams.
	Chunks     int
	ChunkDelay time.Duration
	// ManyConns is the concurrency of the many-streams mode (which ignores
	// Conns), and ManyDelay its upstream's pause before each chunk.
	ManyConns int
	ManyDelay time.Duration
	// AbortPercent of the calls of the stream and stream-paced modes
	// disconnect halfway through the stream.
	AbortPercent int
	// CPUProfile, if set, is where the gateway child writes a CPU profile.
	CPUProfile string
	// ProfileDir, if set, receives heap, allocation and goroutine profiles
	// of both proxies taken halfway through every measured phase.
	ProfileDir string
	// LoadTokenizer has the gateway count one prompt before the phases,
	// which loads its tokenizer tables (loadTokenizer).
	LoadTokenizer bool
	// UpstreamH2C has proxy and gateway speak h2c to the upstream (h2c.go).
	UpstreamH2C bool
	// Log receives the children's diagnostics and progress lines.
	Log io.Writer
}

// Result is one measured phase.
type Result struct {
	Target string
	Mode   Mode
	Conns  int
	// Round numbers the repeats of a phase from 1.
	Round    int
	Requests int
	// Aborted counts the calls the client left mid-stream on purpose; they
	// are not in Requests.
	Aborted  int
	Errors   int
	FirstErr string
	Elapsed  time.Duration
	// P90 is filled in by the added-latency modes only.
	P50, P90, P99 time.Duration
	// CPU is the proxy process's user+system time during the phase.
	CPU time.Duration
	// LagP50 and LagP99 are, for paced streams, how late content chunks
	// reached the client relative to when the upstream sent them.
	LagP50, LagP99 time.Duration
	// RSS is the proxy process's resident memory right after the phase.
	RSS int64
	// RSSAnon is the anonymous part of RSS (heap, stacks, the store's
	// caches); the rest is file pages of the binary.
	RSSAnon int64
}

// RPS is completed requests per second.
func (r Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// CPUPerRequest is the proxy's CPU time per completed request.
func (r Result) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// Run starts the fake upstream, the bare proxy and the gateway as child
// processes on loopback, measures every mode × concurrency against each
// and returns the results. It fails if any call failed.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	dir, err := os.MkdirTemp("", "turnpike-load-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	up, err := startChild(o.Self, roleUpstream, []string{"-chunks", fmt.Sprint(o.Chunks), "-delay", o.ChunkDelay.String(), "-slow-delay", o.ManyDelay.String()}, h2cEnv(o), o.Log)
	if err != nil {
		return nil, err
	}
	defer up.stop()
	names := []string{Baseline, Gateway}
	targets, err := startProxies(o, up.URL, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	if o.LoadTokenizer {
		if err := loadTokenizer(ctx, targets[1].URL); err != nil {
			return nil, err
		}
	}
	var results []Result
	var latency []*latencyTarget
	for _, mode := range o.Modes {
		if IsLatencyMode(mode) {
			if latency == nil {
				latency = newLatencyTargets(up.URL, targets, names)
			}
			rs, err := latencyRounds(ctx, o, latency, mode)
			if results = append(results, rs...); err != nil {
				return results, err
			}
			continue
		}
		for _, conns := range phaseConns(o, mode) {
			// Baseline and gateway run back to back so each pair sees the
			// same machine conditions; rounds alternate the two, so a slow
			// spell of a shared machine lands in one pair, not one target.
			for round := 1; round <= max(o.Rounds, 1); round++ {
				for i, t := range targets {
					r, err := measurePhase(ctx, o, t, names[i], mode, conns, round)
					if err != nil {
						return results, err
					}
					r.Round = round
					fmt.Fprintf(o.Log, "%-8s %-12s %3d conns: %8.0f req/s  p50 %-9s  CPU %s/req  %d aborted  RSS %.0f MB (anon %.0f)\n",
						r.Target, r.Mode, r.Conns, r.RPS(), fmtDur(r.P50), fmtDur(r.CPUPerRequest()), r.Aborted, float64(r.RSS)/(1<<20), float64(r.RSSAnon)/(1<<20))
					results = append(results, r)
				}
			}
		}
	}
	return results, failures(results)
}

// phaseConns is the concurrencies mode is measured at.
func phaseConns(o Options, mode Mode) []int {
	switch mode {
	case ManyStreams:
		return []int{o.ManyConns}
	case Idle:
		return []int{0}
	}
	return o.Conns
}

func newPhase(o Options, url, name string, mode Mode, conns int) *phase {
	p := &phase{target: name, url: url, mode: mode, conns: conns, chunks: o.Chunks, delay: o.ChunkDelay,
		duration: o.Duration, requests: o.Requests}
	switch mode {
	case ManyStreams:
		p.delay = o.ManyDelay
	case Stream, StreamPaced:
		p.abortPercent = o.AbortPercent
	}
	return p
}

func measure(ctx context.Context, o Options, t *child, name string, mode Mode, conns, round int) (Result, error) {
	if o.Warmup > 0 {
		warm := newPhase(o, t.URL, name, mode, conns)
		warm.duration, warm.requests = o.Warmup, 0
		warm.run(ctx)
	}
	p := newPhase(o, t.URL, name, mode, conns)
	before, err := ProcessCPU(t.pid())
	if err != nil {
		return Result{}, fmt.Errorf("read CPU of %s: %w", name, err)
	}
	start := time.Now()
	profiled := make(chan error, 1)
	if o.ProfileDir != "" && o.Requests == 0 {
		// Halfway through, the phase's streams are open in their steady state.
		stem := fmt.Sprintf("%s-%s-%d-r%d", name, mode, conns, round)
		time.AfterFunc(o.Duration/2, func() { profiled <- takeProfiles(ctx, t, o.ProfileDir, stem) })
	} else {
		profiled <- nil
	}
	s := p.run(ctx)
	elapsed := time.Since(start)
	if err := <-profiled; err != nil {
		return Result{}, err
	}
	after, err := ProcessCPU(t.pid())
	if err != nil {
		return Result{}, fmt.Errorf("read CPU of %s: %w", name, err)
	}
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	rss, anon, err := ProcessRSS(t.pid())
	if err != nil {
		return Result{}, fmt.Errorf("read memory of %s: %w", name, err)
	}
	lat, lags := sortedCopy(s.latencies), sortedCopy(s.lags)
	return Result{
		Target: name, Mode: mode, Conns: conns, Requests: len(lat), Aborted: s.aborted, Errors: s.errors, FirstErr: s.firstErr,
		Elapsed: elapsed, P50: percentile(lat, 0.5), P99: percentile(lat, 0.99), CPU: after - before,
		LagP50: percentile(lags, 0.5), LagP99: percentile(lags, 0.99), RSS: rss, RSSAnon: anon,
	}, nil
}

// failures reports every phase that saw a failed call, so a run whose
// figures include errors is never mistaken for a good one.
func failures(results []Result) error {
	var errs []string
	for _, r := range results {
		if r.Errors > 0 {
			errs = append(errs, fmt.Sprintf("%s %s %d conns: %d failed calls, first: %s", r.Target, r.Mode, r.Conns, r.Errors, r.FirstErr))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// measurePhase measures one target in one phase; an idle phase makes no
// calls at all.
func measurePhase(ctx context.Context, o Options, t *child, name string, mode Mode, conns, round int) (Result, error) {
	if mode == Idle {
		return measureIdle(ctx, o, t, name, round)
	}
	return measure(ctx, o, t, name, mode, conns, round)
}

// startProxies starts the bare proxy and the gateway in front of the
// upstream, in that order (the order of the target names).
func startProxies(o Options, upstreamURL, dir string) ([]*child, error) {
	env := h2cEnv(o)
	if o.ProfileDir != "" {
		env = append(env, PprofEnv+"=1")
	}
	proxy, err := startChild(o.Self, roleProxy, []string{"-upstream", upstreamURL}, env, o.Log)
	if err != nil {
		return nil, err
	}
	if o.CPUProfile != "" {
		env = append(env, ProfileEnv+"="+o.CPUProfile)
	}
	gateway, err := startChild(o.Self, roleGateway, []string{"-upstream", upstreamURL, "-dir", dir}, env, o.Log)
	if err != nil {
		proxy.stop()
		return nil, err
	}
	return []*child{proxy, gateway}, nil
}
