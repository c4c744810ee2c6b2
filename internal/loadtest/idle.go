package loadtest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Idle measures each proxy with no calls at all for the phase's duration:
// the CPU the gateway spends then is its own background work (usage
// writers, pollers, rollups, reloads), which competes with calls on a
// small machine and is part of the spread between runs.
const Idle Mode = "idle"

// measureIdle waits out the phase's duration with no traffic and reports
// the CPU each target's process used meanwhile.
func measureIdle(ctx context.Context, o Options, t *child, name string, round int) (Result, error) {
	d := o.Duration
	if d <= 0 {
		d = 10 * time.Second
	}
	before, err := ProcessCPU(t.pid())
	if err != nil {
		return Result{}, fmt.Errorf("read CPU of %s: %w", name, err)
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case <-time.After(d):
	}
	after, err := ProcessCPU(t.pid())
	if err != nil {
		return Result{}, fmt.Errorf("read CPU of %s: %w", name, err)
	}
	rss, anon, err := ProcessRSS(t.pid())
	if err != nil {
		return Result{}, fmt.Errorf("read memory of %s: %w", name, err)
	}
	return Result{Target: name, Mode: Idle, Round: round, Elapsed: time.Since(start), CPU: after - before, RSS: rss, RSSAnon: anon}, nil
}

// IdleShare is the CPU a result's process used per second of wall time,
// as a fraction of one core.
func (r Result) IdleShare() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return r.CPU.Seconds() / r.Elapsed.Seconds()
}

func hasIdle(results []Result) bool {
	return slices.ContainsFunc(results, func(r Result) bool { return r.Mode == Idle })
}

// WriteIdle writes the background-work table: each target's CPU per
// second with no calls, in milliseconds of one core.
func WriteIdle(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString("| target | round | idle for | CPU ms per second (of one core) | RSS |\n|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		if r.Mode != Idle {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f s | %.2f | %.0f MB |\n", r.Target, r.Round, r.Elapsed.Seconds(), 1000*r.IdleShare(), float64(r.RSS)/(1<<20))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
