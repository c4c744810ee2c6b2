package loadtest

import (
	"strings"
	"testing"
	"time"
)

func TestWriteMarkdownGivesGatewayRowsTheirRatiosToTheBaseline(t *testing.T) {
	results := []Result{
		{Target: Baseline, Mode: Regular, Conns: 1, Requests: 1000, Elapsed: time.Second, P50: 200 * time.Microsecond, P99: 2 * time.Millisecond, CPU: 200 * time.Millisecond},
		{Target: Gateway, Mode: Regular, Conns: 1, Requests: 800, Elapsed: time.Second, P50: 250 * time.Microsecond, P99: 3 * time.Millisecond, CPU: 240 * time.Millisecond, RSS: 48 << 20},
		{Target: Baseline, Mode: StreamPaced, Conns: 50, Requests: 10, Elapsed: time.Second, LagP50: time.Millisecond, LagP99: 4 * time.Millisecond},
		{Target: Gateway, Mode: StreamPaced, Conns: 50, Requests: 10, Elapsed: time.Second, CPU: time.Millisecond, LagP50: 1500 * time.Microsecond, LagP99: 5 * time.Millisecond},
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"| baseline | regular | 1 | 1000 | 200 µs | 2.00 ms | 200 |  |  | – | 0 MB |",
		"| gateway | regular | 1 | 800 | 250 µs | 3.00 ms | 300 | 1.50× | 80% | – | 48 MB |",
		"| baseline | stream-paced | 50 | 10 | 0 µs | 0 µs | 0 |  |  | 1.00 ms / 4.00 ms | 0 MB |",
		"| gateway | stream-paced | 50 | 10 | 0 µs | 0 µs | 100 | n/a | 100% | 1.50 ms / 5.00 ms | 0 MB |",
	}
	if len(lines) != 2+len(want) {
		t.Fatalf("got %d lines, want header, rule and %d rows:\n%s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		if lines[2+i] != w {
			t.Errorf("row %d:\n got %s\nwant %s", i, lines[2+i], w)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"no values give zero", nil, 0.5, 0},
		{"one value is every quantile", ms(7), 0.99, 7 * time.Millisecond},
		{"median of an odd count is the middle", ms(1, 2, 3), 0.5, 2 * time.Millisecond},
		{"median of an even count is the lower middle", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p99 of 1..100 is 99", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p100 is the maximum", ms(1, 5, 9), 1, 9 * time.Millisecond},
		{"p0 is the minimum", ms(1, 5, 9), 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.q, got, tt.want)
			}
		})
	}
}

func TestCPUModelTakesTheFirstModelName(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: other\n"
	if got := cpuModel([]byte(info)); got != "AMD EPYC 7B13" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel([]byte("processor\t: 0\n")); got != "unknown CPU" {
		t.Errorf("cpuModel without a model name = %q", got)
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(t *testing.T, o Options, markdown string)
	}{
		{name: "defaults measure every mode at 1 and 50 connections", check: func(t *testing.T, o Options, _ string) {
			if len(o.Modes) != 3 || len(o.Conns) != 2 || o.Conns[1] != 50 || o.Duration != 10*time.Second || o.Chunks != 20 {
				t.Errorf("defaults %+v", o)
			}
		}},
		{name: "lists and the markdown file are read", args: []string{"-conns", "2, 8", "-modes", "stream", "-markdown", "out.md", "-requests", "9"},
			check: func(t *testing.T, o Options, markdown string) {
				if len(o.Conns) != 2 || o.Conns[1] != 8 || len(o.Modes) != 1 || o.Modes[0] != Stream || markdown != "out.md" || o.Requests != 9 {
					t.Errorf("got %+v, markdown %q", o, markdown)
				}
			}},
		{name: "many streams default to 1000 connections 50 ms apart, with a tenth of streams aborted",
			args: []string{"-modes", "many-streams"}, check: func(t *testing.T, o Options, _ string) {
				if len(o.Modes) != 1 || o.Modes[0] != ManyStreams || o.ManyConns != 1000 || o.ManyDelay != 50*time.Millisecond || o.AbortPercent != 10 {
					t.Errorf("got %+v", o)
				}
			}},
		{name: "more than 10000 many-streams connections are refused", args: []string{"-many-conns", "10001"}, wantErr: true},
		{name: "the added-latency modes are accepted", args: []string{"-modes", "latency,latency-stream"},
			check: func(t *testing.T, o Options, _ string) {
				if len(o.Modes) != 2 || !IsLatencyMode(o.Modes[0]) || !IsLatencyMode(o.Modes[1]) {
					t.Errorf("got modes %v", o.Modes)
				}
			}},
		{name: "an abort share over 100 percent is refused", args: []string{"-abort-percent", "101"}, wantErr: true},
		{name: "a zero many-streams delay is refused", args: []string{"-many-delay", "0s"}, wantErr: true},
		{name: "an unknown mode is refused", args: []string{"-modes", "regular,batch"}, wantErr: true},
		{name: "a zero connection count is refused", args: []string{"-conns", "0"}, wantErr: true},
		{name: "a huge connection count is refused", args: []string{"-conns", "100000"}, wantErr: true},
		{name: "zero chunks are refused", args: []string{"-chunks", "0"}, wantErr: true},
		{name: "an unknown flag is refused", args: []string{"-bogus"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			o, markdown, err := parseFlags(tt.args, &stderr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t, o, markdown)
			}
		})
	}
}

func TestWriteSummaryGivesTheMedianAndRangeOfEachRoundsRatios(t *testing.T) {
	phase := func(target string, mode Mode, round int, cpuMicros, requests int, rss int64) Result {
		return Result{Target: target, Mode: mode, Conns: 50, Round: round, Requests: requests, Elapsed: time.Second,
			CPU: time.Duration(cpuMicros*requests) * time.Microsecond, RSS: rss}
	}
	results := []Result{
		phase(Baseline, Regular, 1, 100, 1000, 30<<20), phase(Gateway, Regular, 1, 110, 950, 48<<20),
		phase(Baseline, Regular, 2, 100, 1000, 30<<20), phase(Gateway, Regular, 2, 150, 700, 52<<20),
		phase(Baseline, Regular, 3, 200, 500, 30<<20), phase(Gateway, Regular, 3, 240, 450, 50<<20),
		// A phase measured once has no spread to summarise.
		phase(Baseline, Stream, 1, 100, 1000, 30<<20), phase(Gateway, Stream, 1, 130, 900, 49<<20),
	}
	var b strings.Builder
	if err := WriteSummary(&b, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := "| regular | 50 | 3 | 1.20× (1.10–1.50) | 90% (70–95) | 52 MB |"
	if len(lines) != 3 || lines[2] != want {
		t.Fatalf("got:\n%s\nwant the header, the rule and\n%s", b.String(), want)
	}
}

func TestMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tc := range tests {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
