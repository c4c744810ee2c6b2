package loadtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
)

// The relay benchmarks call the gateway's handler directly with an
// in-memory recorder; the fake upstream runs in the same process behind a
// loopback listener, so ns/op covers the gateway's work, one loopback HTTP
// round trip and the (small) upstream. The baseline benchmarks put the bare
// reverse proxy in the same harness for reference.

func BenchmarkRelayChatRegular(b *testing.B) {
	benchHandler(b, gatewayHandler(b), Regular)
}

func BenchmarkRelayChatStream(b *testing.B) {
	benchHandler(b, gatewayHandler(b), Stream)
}

// BenchmarkRelayChatRegularAffinityOff is BenchmarkRelayChatRegular with
// the model's cache affinity off: the difference is what looking up and
// renewing a session's pin costs a call.
func BenchmarkRelayChatRegularAffinityOff(b *testing.B) {
	benchHandler(b, gatewayHandlerWith(b, func(cfg *config.Config) {
		p := cfg.Models[BenchModel]
		p.Affinity = map[string]any{"enabled": false}
		cfg.Models[BenchModel] = p
	}), Regular)
}

func BenchmarkBaselineChatRegular(b *testing.B) {
	benchHandler(b, baselineHandler(b), Regular)
}

func BenchmarkBaselineChatStream(b *testing.B) {
	benchHandler(b, baselineHandler(b), Stream)
}

func fakeUpstream(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(NewUpstream(20, 0).Handler())
	b.Cleanup(srv.Close)
	return srv
}

func gatewayHandler(b *testing.B) http.Handler { return gatewayHandlerWith(b, nil) }

func gatewayHandlerWith(b *testing.B, change func(*config.Config)) http.Handler {
	up := fakeUpstream(b)
	cfg := GatewayConfig(b.TempDir(), up.URL)
	if change != nil {
		change(&cfg)
	}
	a, err := NewGateway(context.Background(), cfg, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { CloseGateway(a) })
	return a.Handler
}

func baselineHandler(b *testing.B) http.Handler {
	u, err := url.Parse(fakeUpstream(b).URL)
	if err != nil {
		b.Fatal(err)
	}
	return NewBaselineProxy(u)
}

func benchHandler(b *testing.B, h http.Handler, mode Mode) {
	body := (&phase{mode: mode}).body()
	call := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+BenchKey)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	// One checked call first: a benchmark of error answers would be fast
	// and meaningless.
	if rec := call(); rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte("choices")) {
		b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	b.ReportAllocs()
	before := processCPU(b)
	for b.Loop() {
		if rec := call(); rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	// Wall time per call swings with whatever else runs on a shared
	// machine; the process's own CPU time per call swings much less.
	b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRelayChatRegularBare and BenchmarkRelayChatStreamBare are the
// relay benchmarks on a gateway without the fourth wave's unused
// configuration (teams, plans, guardrails, MCP servers): against the
// default ones they show what a configured but unused capability costs.
func BenchmarkRelayChatRegularBare(b *testing.B) {
	benchHandler(b, bareGatewayHandler(b), Regular)
}

func BenchmarkRelayChatStreamBare(b *testing.B) {
	benchHandler(b, bareGatewayHandler(b), Stream)
}

func bareGatewayHandler(b *testing.B) http.Handler {
	up := fakeUpstream(b)
	a, err := NewGateway(context.Background(), BareGatewayConfig(b.TempDir(), up.URL), io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { CloseGateway(a) })
	return a.Handler
}
