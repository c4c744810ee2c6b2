package loadtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// runChildren runs o with this test binary as the child servers, failing
// the test (with the children's log) if the run fails.
func runChildren(t *testing.T, o Options) []Result {
	t.Helper()
	if testing.Short() {
		t.Skip("starts three servers as child processes")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	o.Self, o.Log = self, &log
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("Run: %v\nlog:\n%s", err, log.String())
	}
	return results
}

func TestRunMeasuresEveryPhaseOfBothTargetsWithoutErrors(t *testing.T) {
	results := runChildren(t, Options{Requests: 50, Conns: []int{1, 4}, Modes: []Mode{Regular, Stream, StreamPaced},
		Chunks: 5, ChunkDelay: time.Millisecond})
	if len(results) != 12 {
		t.Fatalf("got %d results, want 3 modes × 2 conns × 2 targets = 12", len(results))
	}
	for _, r := range results {
		name := fmt.Sprintf("%s/%s/%d", r.Target, r.Mode, r.Conns)
		if r.Requests != 50 || r.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors; want 50 and 0", name, r.Requests, r.Errors)
		}
		if r.P50 <= 0 || r.P99 < r.P50 || r.RPS() <= 0 {
			t.Errorf("%s: p50 %v p99 %v rps %.0f, want positive and ordered", name, r.P50, r.P99, r.RPS())
		}
		if r.CPU < 0 {
			t.Errorf("%s: negative CPU %v", name, r.CPU)
		}
		if paced := r.Mode == StreamPaced; paced != (r.LagP99 > 0) {
			t.Errorf("%s: chunk lag p99 %v; lags are measured for paced streams only", name, r.LagP99)
		}
	}
	var table strings.Builder
	if err := WriteMarkdown(&table, results); err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(table.String(), "\n| gateway |"); rows != 6 {
		t.Errorf("table has %d gateway rows, want 6:\n%s", rows, table.String())
	}
}

func TestRunAlternatesTheTargetsRoundByRound(t *testing.T) {
	results := runChildren(t, Options{Requests: 20, Conns: []int{2}, Modes: []Mode{Regular}, Rounds: 3, Chunks: 5})
	var order []string
	for _, r := range results {
		order = append(order, fmt.Sprintf("%s#%d", r.Target, r.Round))
	}
	want := "baseline#1 gateway#1 baseline#2 gateway#2 baseline#3 gateway#3"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("phases ran as %s, want %s", got, want)
	}
}

func TestRunFailsWhenTheChildCannotStart(t *testing.T) {
	_, err := Run(context.Background(), Options{Self: "/nonexistent/turnpike-load", Requests: 1, Conns: []int{1}, Modes: []Mode{Regular}, Chunks: 1})
	if err == nil || !strings.Contains(err.Error(), "start _upstream") {
		t.Fatalf("Run with a missing executable: err = %v, want a start error", err)
	}
}

func TestFailuresNamesEveryPhaseWithFailedCalls(t *testing.T) {
	results := []Result{
		{Target: Baseline, Mode: Regular, Conns: 1},
		{Target: Gateway, Mode: Stream, Conns: 50, Errors: 3, FirstErr: "status 502: boom"},
	}
	err := failures(results)
	if err == nil || !strings.Contains(err.Error(), "gateway stream 50 conns: 3 failed calls, first: status 502: boom") {
		t.Fatalf("failures = %v", err)
	}
	if err := failures(results[:1]); err != nil {
		t.Fatalf("failures without errors = %v, want nil", err)
	}
}

func TestMainExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{name: "bad flags exit 2", args: []string{"-conns", "x"}, want: 2},
		{name: "no rounds exit 2", args: []string{"-rounds", "0"}, want: 2},
		{name: "a child given an unknown flag exits 2", args: []string{"_proxy", "-bogus"}, want: 2},
		{name: "a gateway child without an upstream exits 1", args: []string{"_gateway"}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			if got := Main(tt.args, strings.NewReader(""), &out, &errOut); got != tt.want {
				t.Errorf("exit %d, want %d; stderr %s", got, tt.want, errOut.String())
			}
		})
	}
}

func TestAbortsCallSpreadsTheShareEvenly(t *testing.T) {
	cases := []struct {
		percent    int
		calls      int64
		wantAborts int
	}{
		{0, 1000, 0},
		{10, 100, 10},
		{10, 1000, 100},
		{7, 1000, 70},
		{100, 50, 50},
		{33, 300, 99},
	}
	for _, tc := range cases {
		got, run := 0, 0
		for n := int64(1); n <= tc.calls; n++ {
			if abortsCall(n, tc.percent) {
				got++
				run = 0
			} else if run++; tc.percent > 0 && run > 100/tc.percent {
				t.Errorf("%d%%: %d calls in a row without an abort at call %d", tc.percent, run, n)
			}
		}
		if got != tc.wantAborts {
			t.Errorf("%d%% of %d calls: %d aborts, want %d", tc.percent, tc.calls, got, tc.wantAborts)
		}
	}
}

func TestManyStreamsAndAbortedStreamsRunWithoutErrors(t *testing.T) {
	results := runChildren(t, Options{Requests: 40, Conns: []int{4}, Modes: []Mode{Stream, ManyStreams},
		Chunks: 6, ChunkDelay: time.Millisecond, ManyConns: 8, ManyDelay: 2 * time.Millisecond, AbortPercent: 25})
	if len(results) != 4 {
		t.Fatalf("got %d results, want 2 modes × 2 targets", len(results))
	}
	for _, r := range results {
		name := fmt.Sprintf("%s/%s/%d", r.Target, r.Mode, r.Conns)
		wantAborted, wantConns := 10, 4
		if r.Mode == ManyStreams {
			wantAborted, wantConns = 0, 8
		}
		if r.Errors != 0 || r.Aborted != wantAborted || r.Requests != 40-wantAborted || r.Conns != wantConns {
			t.Errorf("%s: %d completed, %d aborted, %d errors at %d conns; want %d, %d, 0 at %d",
				name, r.Requests, r.Aborted, r.Errors, r.Conns, 40-wantAborted, wantAborted, wantConns)
		}
		if r.RSS <= 0 {
			t.Errorf("%s: no RSS reported", name)
		}
	}
}
