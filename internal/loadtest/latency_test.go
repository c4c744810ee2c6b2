package loadtest

import (
	"strings"
	"testing"
	"time"
)

func TestLatencyModesTimeEveryTargetInTurnWithoutErrors(t *testing.T) {
	results := runChildren(t, Options{Requests: 30, Modes: []Mode{LatencyRegular, LatencyStream}, Rounds: 2, Chunks: 4})
	if len(results) != 12 {
		t.Fatalf("got %d results, want 2 modes × 2 rounds × 3 targets = 12", len(results))
	}
	seen := map[string]int{}
	for _, r := range results {
		seen[r.Target]++
		if r.Requests != 30 || r.Errors != 0 || r.Conns != 1 {
			t.Errorf("%s/%s round %d: %d calls, %d errors at %d conns; want 30, 0 at 1 (%s)", r.Target, r.Mode, r.Round, r.Requests, r.Errors, r.Conns, r.FirstErr)
		}
		if r.P50 <= 0 || r.P90 < r.P50 || r.P99 < r.P90 {
			t.Errorf("%s/%s: p50 %v p90 %v p99 %v, want positive and ordered", r.Target, r.Mode, r.P50, r.P90, r.P99)
		}
		if (r.Target == Direct) != (r.CPU == 0 && r.RSS == 0) {
			t.Errorf("%s/%s: CPU %v RSS %d; only the proxies' processes are measured", r.Target, r.Mode, r.CPU, r.RSS)
		}
	}
	if seen[Direct] != 4 || seen[Baseline] != 4 || seen[Gateway] != 4 {
		t.Errorf("targets measured %v, want 4 rounds of each", seen)
	}
	var table strings.Builder
	if err := WriteLatency(&table, results); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(table.String(), "| median of 2 |"); n != 2 {
		t.Errorf("latency table has %d median rows, want one per mode:\n%s", n, table.String())
	}
}

func TestWriteLatencySubtractsTheUpstreamAndJudgesTheTargets(t *testing.T) {
	us := time.Microsecond
	row := func(target string, mode Mode, p50, p90, p99 time.Duration) Result {
		return Result{Target: target, Mode: mode, Conns: 1, Round: 1, P50: p50, P90: p90, P99: p99}
	}
	tests := []struct {
		name    string
		results []Result
		want    []string
	}{
		{
			name: "a gateway within 50 µs at p50 and 1.5× at p99 is within target",
			results: []Result{
				row(Direct, LatencyRegular, 100*us, 150*us, 300*us),
				row(Baseline, LatencyRegular, 200*us, 260*us, 500*us),
				row(Gateway, LatencyRegular, 240*us, 300*us, 580*us),
			},
			want: []string{"| regular | 1 | 100 µs / 150 µs / 300 µs | 100 µs / 110 µs / 200 µs | 140 µs / 150 µs / 280 µs | 40 µs | 1.40× |",
				"| regular | median of 1 | | | | 40 µs (within target) | 1.40× (within target) |"},
		},
		{
			name: "a gateway 80 µs slower at p50 and twice the proxy at p99 is over both targets",
			results: []Result{
				row(Direct, LatencyStream, 100*us, 100*us, 100*us),
				row(Baseline, LatencyStream, 150*us, 150*us, 200*us),
				row(Gateway, LatencyStream, 230*us, 250*us, 300*us),
			},
			want: []string{"| streamed, first chunk | median of 1 | | | | 80 µs (over target) | 2.00× (over target) |"},
		},
		{
			name: "noise that makes the proxy faster than the upstream prints a negative difference",
			results: []Result{
				row(Direct, LatencyRegular, 100*us, 100*us, 100*us),
				row(Baseline, LatencyRegular, 90*us, 110*us, 120*us),
				row(Gateway, LatencyRegular, 120*us, 130*us, 140*us),
			},
			want: []string{"| −10 µs / 10 µs / 20 µs |"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteLatency(&b, tt.results); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("table lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestIdleModeReportsEachProxysBackgroundCPUWithoutCalls(t *testing.T) {
	results := runChildren(t, Options{Duration: 400 * time.Millisecond, Modes: []Mode{Idle}, Conns: []int{1}, Chunks: 2})
	if len(results) != 2 {
		t.Fatalf("got %d results, want one per proxy", len(results))
	}
	for _, r := range results {
		if r.Requests != 0 || r.Elapsed < 400*time.Millisecond || r.CPU < 0 || r.RSS <= 0 {
			t.Errorf("%s: %d calls over %v, CPU %v, RSS %d; want no calls, at least 400ms, a reading of both", r.Target, r.Requests, r.Elapsed, r.CPU, r.RSS)
		}
	}
	var table strings.Builder
	if err := WriteIdle(&table, results); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "| gateway | 1 |") || !strings.Contains(table.String(), "| baseline | 1 |") {
		t.Errorf("idle table lacks a row per proxy:\n%s", table.String())
	}
}
