package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is the kind of call a phase makes.
type Mode string

// The call kinds.
const (
	// Regular is a non-streamed chat call.
	Regular Mode = "regular"
	// Stream is a streamed chat call whose chunks come as fast as possible.
	Stream Mode = "stream"
	// StreamPaced is a streamed chat call whose upstream pauses before each
	// chunk, to show whether the proxy delays chunks.
	StreamPaced Mode = "stream-paced"
	// ManyStreams holds many slow streams open at once (the upstream pauses
	// Options.ManyDelay before each chunk), to show the cost of each open
	// stream in memory and CPU.
	ManyStreams Mode = "many-streams"
	// Cached is a non-streamed chat call of a model with a response cache:
	// after the first call every call is a hit, which the gateway answers
	// without its upstream while the bare proxy still asks it.
	Cached Mode = "cached"
)

// contentMarker is the text of every content chunk of the fake upstream.
var contentMarker = []byte("word ")

// phase is one measured load: one kind of call, at one concurrency,
// against one target.
type phase struct {
	target   string
	url      string
	mode     Mode
	conns    int
	duration time.Duration
	// requests, when positive, ends the phase after that many calls
	// instead of after duration.
	requests int
	chunks   int
	delay    time.Duration
	// abortPercent of the streamed calls disconnect after half their
	// content chunks, as real clients do.
	abortPercent int
	calls        atomic.Int64
}

// sample is what one worker observed.
type sample struct {
	latencies []time.Duration
	// lags are, for paced streams, how late each content chunk arrived
	// compared with when the upstream sent it (request start + i × delay).
	lags     []time.Duration
	errors   int
	aborted  int
	firstErr string
}

// run drives the phase with closed-loop workers, each with its own
// connection, until the duration or the request count is reached.
func (p *phase) run(ctx context.Context) sample {
	tr := &http.Transport{MaxIdleConnsPerHost: p.conns, MaxConnsPerHost: p.conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	body := p.body()
	deadline := time.Now().Add(p.duration)
	var issued atomic.Int64
	more := func() bool {
		if ctx.Err() != nil {
			return false
		}
		if p.requests > 0 {
			return issued.Add(1) <= int64(p.requests)
		}
		return time.Now().Before(deadline)
	}
	samples := make([]sample, p.conns)
	var wg sync.WaitGroup
	for w := range samples {
		wg.Go(func() {
			s := &samples[w]
			for more() {
				p.once(ctx, client, body, s)
			}
		})
	}
	wg.Wait()
	var all sample
	for _, s := range samples {
		all.latencies = append(all.latencies, s.latencies...)
		all.lags = append(all.lags, s.lags...)
		all.errors += s.errors
		all.aborted += s.aborted
		if all.firstErr == "" {
			all.firstErr = s.firstErr
		}
	}
	return all
}

func (p *phase) body() []byte {
	switch p.mode {
	case ManyStreams:
		return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Say hello in a few words."}],"stream":true,"stream_options":{"include_usage":true}}`, BenchModel+SlowSuffix)
	case Stream:
		return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Say hello in a few words."}],"stream":true,"stream_options":{"include_usage":true}}`, BenchModel)
	case StreamPaced:
		return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Say hello in a few words."}],"stream":true,"stream_options":{"include_usage":true}}`, BenchModel+PacedSuffix)
	case Cached:
		return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Say hello in a few words."}]}`, BenchModel+CachedSuffix)
	}
	return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"Say hello in a few words."}]}`, BenchModel)
}

// once makes one call and records its latency, or the error.
func (p *phase) once(ctx context.Context, client *http.Client, body []byte, s *sample) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		s.fail(err)
		return
	}
	req.Header.Set("Authorization", "Bearer "+BenchKey)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(err)
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		s.fail(fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(msg))))
		return
	}
	switch {
	case p.mode == Regular || p.mode == Cached:
		err = readAnswer(resp.Body)
	case abortsCall(p.calls.Add(1), p.abortPercent):
		// Leaving after half the chunks closes the connection under the
		// proxy mid-stream; the call counts as aborted, not as completed.
		if err = readChunks(resp.Body, p.chunks/2); err == nil {
			s.aborted++
			return
		}
	default:
		err = p.readStream(resp.Body, start, s)
	}
	if err != nil {
		s.fail(err)
		return
	}
	s.latencies = append(s.latencies, time.Since(start))
}

func readAnswer(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(`"choices"`)) {
		return fmt.Errorf("answer without choices: %.200s", b)
	}
	return nil
}

// readStream reads a stream to its end, checking that every content chunk
// arrived, and for paced streams records each chunk's lag.
func (p *phase) readStream(r io.Reader, start time.Time, s *sample) error {
	seen := 0
	err := readSSE(r, func(payload []byte) {
		if !bytes.Contains(payload, contentMarker) {
			return
		}
		seen++
		if p.mode == StreamPaced {
			s.lags = append(s.lags, time.Since(start)-time.Duration(seen)*p.delay)
		}
	})
	if err != nil {
		return err
	}
	// Reading past [DONE] to the end of the body lets the connection be
	// reused; closing it early would look like a client abort to the proxy.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	if seen != p.chunks {
		return fmt.Errorf("stream carried %d content chunks, want %d", seen, p.chunks)
	}
	return nil
}

// abortsCall reports whether call n (from 1) of a phase is one of the
// percent in a hundred that disconnect; the aborts are spread evenly, so
// any run of 100 calls holds exactly percent of them.
func abortsCall(n int64, percent int) bool {
	if percent <= 0 || n <= 0 {
		return false
	}
	return n*int64(percent)/100 > (n-1)*int64(percent)/100
}

// readChunks reads a stream until n content chunks have arrived.
func readChunks(r io.Reader, n int) error {
	if n <= 0 {
		return nil
	}
	seen := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("data:")) && bytes.Contains(sc.Bytes(), contentMarker) {
			if seen++; seen == n {
				return nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("stream ended after %d content chunks, before the %d to abort at", seen, n)
}

func (s *sample) fail(err error) {
	s.errors++
	if s.firstErr == "" {
		s.firstErr = err.Error()
	}
}

// percentile returns the q-quantile (0 ≤ q ≤ 1) of sorted by the
// nearest-rank method, or 0 for no values.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func sortedCopy(d []time.Duration) []time.Duration {
	out := slices.Clone(d)
	slices.Sort(out)
	return out
}
