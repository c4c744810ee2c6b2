package loadtest

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `Usage: turnpike-load [flags]

Starts a fake upstream, a bare reverse proxy and the gateway on loopback as
separate processes, drives the same load through both proxies and prints
requests/s, latency and CPU time per request as a Markdown table.

Flags:
`

// Main runs the load tool (or, for a hidden child subcommand, one of its
// servers) and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && IsChildRole(args[0]) {
		return RunChild(args[0], args[1:], stdin, stdout, stderr)
	}
	o, markdown, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	results, runErr := Run(ctx, o)
	var table strings.Builder
	fmt.Fprintf(&table, "Machine: %s. Each phase: %s after %s warm-up, %d round(s); streams of %d chunks, paced %s apart.\n\n",
		Machine(), phaseLength(o), o.Warmup, o.Rounds, o.Chunks, o.ChunkDelay)
	_ = WriteMarkdown(&table, results)
	if o.Rounds > 1 {
		table.WriteString("\n")
		_ = WriteSummary(&table, results)
	}
	if hasIdle(results) {
		table.WriteString("\n")
		_ = WriteIdle(&table, results)
	}
	if hasLatency(results) {
		table.WriteString("\n")
		_ = WriteLatency(&table, results)
	}
	fmt.Fprint(stdout, table.String())
	if markdown != "" && len(results) > 0 {
		if err := appendFile(markdown, "\n"+table.String()); err != nil {
			fmt.Fprintln(stderr, "turnpike-load:", err)
			return 1
		}
	}
	if runErr != nil {
		fmt.Fprintln(stderr, "turnpike-load: FAILED:", runErr)
		return 1
	}
	return 0
}

func phaseLength(o Options) string {
	if o.Requests > 0 {
		return fmt.Sprintf("%d requests", o.Requests)
	}
	return o.Duration.String()
}

func parseFlags(args []string, stderr io.Writer) (Options, string, error) {
	fs := flag.NewFlagSet("turnpike-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	o := Options{Log: stderr}
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured length of each phase")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "unmeasured load before each phase")
	fs.IntVar(&o.Requests, "requests", 0, "end each phase after this many calls instead of -duration")
	fs.IntVar(&o.Chunks, "chunks", 20, "content chunks per streamed answer")
	fs.DurationVar(&o.ChunkDelay, "chunk-delay", 5*time.Millisecond, "upstream pause before each chunk in the stream-paced mode")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the gateway process to this file")
	fs.StringVar(&o.ProfileDir, "profile-dir", "", "save heap, allocs and goroutine profiles and the memory map (smaps) of both proxies, taken halfway through each phase, in this directory")
	fs.IntVar(&o.Rounds, "rounds", 1, "measure each baseline-then-gateway pair this many times and report the medians")
	fs.IntVar(&o.ManyConns, "many-conns", 1000, "concurrent streams of the many-streams mode")
	fs.DurationVar(&o.ManyDelay, "many-delay", 50*time.Millisecond, "upstream pause before each chunk in the many-streams mode")
	fs.IntVar(&o.AbortPercent, "abort-percent", 10, "percent of stream and stream-paced calls the client abandons halfway")
	fs.BoolVar(&o.LoadTokenizer, "tokenizer", true, "have the gateway count one prompt (/v1/messages/count_tokens) before the phases, so its RSS includes the tokenizer's tables as in any gateway that has counted a token")
	registerH2CFlag(fs, &o)
	conns := fs.String("conns", "1,50", "comma-separated connection counts")
	modes := fs.String("modes", "regular,stream,stream-paced", "comma-separated modes: regular, stream, stream-paced, many-streams, cached (every call after the first a response cache hit), latency, latency-stream (one call at a time through the upstream, the proxy and the gateway in turn), idle (CPU with no calls: background work)")
	markdown := fs.String("markdown", "", "append the result table to this file")
	if err := fs.Parse(args); err != nil {
		return o, "", err
	}
	var err error
	if o.Conns, err = parseConns(*conns); err == nil {
		o.Modes, err = parseModes(*modes)
	}
	if err == nil && (o.Chunks <= 0 || o.Rounds <= 0 || o.Duration <= 0 && o.Requests <= 0) {
		err = fmt.Errorf("-chunks, -rounds and -duration (or -requests) must be positive")
	}
	if err == nil && (o.ManyConns <= 0 || o.ManyConns > 10000 || o.ManyDelay <= 0 || o.AbortPercent < 0 || o.AbortPercent > 100) {
		err = fmt.Errorf("-many-conns must be 1 to 10000, -many-delay positive and -abort-percent 0 to 100")
	}
	if err == nil {
		o.Self, err = os.Executable()
	}
	if err != nil {
		fmt.Fprintln(stderr, "turnpike-load:", err)
		return o, "", err
	}
	return o, *markdown, nil
}

func parseConns(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || n > 1000 {
			return nil, fmt.Errorf("-conns: %q is not a count between 1 and 1000", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseModes(s string) ([]Mode, error) {
	var out []Mode
	for _, f := range strings.Split(s, ",") {
		m := Mode(strings.TrimSpace(f))
		if m != Regular && m != Stream && m != StreamPaced && m != ManyStreams && m != Idle && m != Cached && !IsLatencyMode(m) {
			return nil, fmt.Errorf("-modes: unknown mode %q", f)
		}
		out = append(out, m)
	}
	return out, nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
