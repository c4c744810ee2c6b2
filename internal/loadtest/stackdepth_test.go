package loadtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// How deep a call's handler goroutine goes decides its stack: 8 KB while
// every moment of the call stays within 8 KB less the runtime's guard, 16 KB
// once one moment passes it, and a stream holds that stack for as long as it
// is open (the collector halves a stack only when less than a quarter of it
// is in use).
// These tests measure the depth at the three places an open call waits or
// works: inside the upstream exchange, reading the upstream's answer and
// writing the client's. The depth is the distance between a local of the
// handler's first frame and one of the probe's, both on the same stack; the
// handler runs on a stack grown beforehand past anything a call needs and
// the collector is off, so that stack is never moved during the call.

// stackDepths is the deepest each probe saw, in bytes below the handler's
// first frame, and the deepest the call's stack was written at all.
type stackDepths struct {
	exchange, read, write, deepest atomic.Int64
	// served hears each call's end once its deepest is recorded: a client
	// can have read a whole answer before the handler has settled it.
	served chan struct{}
}

type stackTopKey struct{}

// deepened serves h on a stack grown to 64 KB first and puts the address of
// a local of its own frame in the request's context. The stack below that
// frame is filled with a mark first and read back after the call: the
// lowest word no longer marked is the deepest the call went, wherever that
// was (inside the transport, an allocation's slow path, a system call).
func deepened(h http.Handler, depths *stackDepths) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		growStack(64)
		var top uint64 // 8-aligned, so the marks are whole words
		ctx := context.WithValue(r.Context(), stackTopKey{}, uintptr(unsafe.Pointer(&top)))
		mark(unsafe.Pointer(&top))
		h.ServeHTTP(w, r.WithContext(ctx))
		if d := int64(markedBelow(unsafe.Pointer(&top))); d > depths.deepest.Load() {
			depths.deepest.Store(d)
		}
		select {
		case depths.served <- struct{}{}:
		default: // a call the test no longer waits for
		}
	})
}

const (
	stackMark = 0x5ca1ab1e_d00dfeed
	// markFrom is where marking starts below the handler's frame, past
	// mark's own frame; markTo is well past any call's depth and within
	// the 64 KB growStack made.
	markFrom, markTo = 512, 48 << 10
)

//go:noinline
func mark(top unsafe.Pointer) {
	for off := markFrom; off < markTo; off += 8 {
		*(*uint64)(unsafe.Add(top, -off)) = stackMark
	}
}

// markedBelow is how far below top the stack was written since mark.
//
//go:noinline
func markedBelow(top unsafe.Pointer) int {
	for off := markTo - 8; off >= markFrom; off -= 8 {
		if *(*uint64)(unsafe.Add(top, -off)) != stackMark {
			return off
		}
	}
	return 0
}

// growStack uses n KB of stack and returns, leaving the goroutine's stack at
// least that large.
//
//go:noinline
func growStack(n int) byte {
	var pad [1024]byte
	touch(pad[:], n)
	if n <= 1 {
		return pad[0]
	}
	return growStack(n-1) + pad[n%len(pad)]
}

//go:noinline
func touch(b []byte, n int) { b[n%len(b)] = byte(n) }

// note records in deepest how far below the handler's first frame the
// caller's frame is, when ctx comes from a deepened handler.
//
//go:noinline
func note(ctx context.Context, deepest *atomic.Int64) {
	top, ok := ctx.Value(stackTopKey{}).(uintptr)
	if !ok {
		return
	}
	var here byte
	d := int64(top - uintptr(unsafe.Pointer(&here)))
	if d <= 0 || d >= markTo {
		return // the caller runs aside, on a stack of its own
	}
	for {
		old := deepest.Load()
		if d <= old || deepest.CompareAndSwap(old, d) {
			return
		}
	}
}

// probeTransport notes the depth where the relay hands a request to its
// transport and where the pump reads the answer.
type probeTransport struct {
	rt     http.RoundTripper
	depths *stackDepths
}

func (p probeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	note(req.Context(), &p.depths.exchange)
	resp, err := p.rt.RoundTrip(req)
	if err == nil {
		resp.Body = &probeBody{ReadCloser: resp.Body, ctx: req.Context(), depths: p.depths}
	}
	return resp, err
}

type probeBody struct {
	io.ReadCloser
	ctx    context.Context
	depths *stackDepths
}

func (b *probeBody) Read(p []byte) (int, error) {
	note(b.ctx, &b.depths.read)
	return b.ReadCloser.Read(p)
}

// probeWriter notes the depth where the gateway writes and flushes the
// client's answer.
type probeWriter struct {
	http.ResponseWriter
	ctx    context.Context
	depths *stackDepths
}

func (w *probeWriter) Write(b []byte) (int, error) {
	note(w.ctx, &w.depths.write)
	return w.ResponseWriter.Write(b)
}

func (w *probeWriter) Flush() {
	note(w.ctx, &w.depths.write)
	w.ResponseWriter.(http.Flusher).Flush()
}

func (w *probeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// probedWrites puts probeWriter between h and the server, under deepened.
func probedWrites(h http.Handler, depths *stackDepths) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&probeWriter{ResponseWriter: w, ctx: r.Context(), depths: depths}, r)
	})
}

// depthsSeen are one call's depths, in bytes below the handler's first
// frame.
type depthsSeen struct{ exchange, read, write, deepest int64 }

func (d *stackDepths) take() depthsSeen {
	return depthsSeen{d.exchange.Swap(0), d.read.Swap(0), d.write.Swap(0), d.deepest.Swap(0)}
}

// stackProbedGateway is the load tool's gateway (billing, logging and the
// unused capabilities on) behind the probes; call serves one call of mode
// through it and returns the depths that call reached.
func stackProbedGateway(t *testing.T, h2c bool) func(mode Mode) depthsSeen {
	if h2c {
		t.Setenv(H2CEnv, "1")
	}
	up := httptest.NewUnstartedServer(NewUpstream(20, 0).Handler())
	if h2c {
		h2cOnlyServer(up.Config)
	}
	up.Start()
	t.Cleanup(up.Close)
	a, err := NewGateway(context.Background(), GatewayConfig(t.TempDir(), up.URL), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { CloseGateway(a) })
	depths := &stackDepths{served: make(chan struct{}, 1)}
	for _, c := range []*http.Client{a.Relay.Client, a.Relay.H2CClient} {
		c.Transport = probeTransport{rt: c.Transport, depths: depths}
	}
	srv := httptest.NewServer(deepened(probedWrites(a.Handler, depths), depths))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	return func(mode Mode) depthsSeen {
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader((&phase{mode: mode}).body()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+BenchKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(answer, []byte("choices")) {
			t.Fatalf("status %d, %v: %.300s", resp.StatusCode, err, answer)
		}
		select {
		case <-depths.served:
		case <-time.After(30 * time.Second):
			t.Fatal("the handler did not return within 30 s of its answer")
		}
		return depths.take()
	}
}

// exchangeDepthBudget is how deep below the handler's first frame the relay
// may hand a request to its transport: the transport's own frames down to
// its wait for the answer's headers (about 1.4 KB over HTTP/2, 1.1 KB over
// HTTP/1) and an allocation's slow path there, with net/http's connection
// frames above the handler (about 1.3 KB), must stay within the 7.2 KB an
// 8 KB stack allows before it is doubled.
const exchangeDepthBudget = 3 << 10

// deepestDepthBudget is how deep below the handler's first frame any moment
// of a call may write, so that its handler goroutine keeps the 8 KB stack
// it starts with: 8,192 bytes less the runtime's 928-byte guard less
// net/http's frames above the handler (conn.serve and serverHandler, about
// 1.2 KB). The first call of a process goes deeper (one-time set-up) and is
// not held to it.
const deepestDepthBudget = 6000

func TestStackDepthOfACall(t *testing.T) {
	cases := []struct {
		name string
		mode Mode
		h2c  bool
	}{
		{"regular", Regular, false},
		{"stream", Stream, false},
		{"stream over h2c", Stream, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call := stackProbedGateway(t, tc.h2c)
			for i := range 3 {
				d := call(tc.mode)
				t.Logf("call %d, bytes below the handler's first frame: exchange %d, reading the answer %d, writing it %d, deepest written %d",
					i+1, d.exchange, d.read, d.write, d.deepest)
				for name, got := range map[string]int64{"exchange": d.exchange, "read": d.read, "write": d.write, "deepest": d.deepest} {
					if name == "write" && tc.mode == Regular && got == 0 {
						continue // a regular answer is written aside
					}
					if got <= 0 || got > 32<<10 {
						t.Errorf("%s: depth %d bytes; the probe did not run on the handler's stack", name, got)
					}
				}
				if d.exchange > exchangeDepthBudget && !raceDetector {
					t.Errorf("the upstream exchange starts %d bytes below the handler's first frame, past its budget of %d: "+
						"a frame on the way to the transport grew (build with -gcflags=-S to see the frame sizes)", d.exchange, exchangeDepthBudget)
				}
				if i > 0 && d.deepest > deepestDepthBudget && !raceDetector {
					t.Errorf("the call wrote its handler's stack %d bytes below the first frame, past the %d that keep it in 8 KB: "+
						"a deep moment (the answer's first write, settlement) runs on the handler's stack", d.deepest, deepestDepthBudget)
				}
			}
		})
	}
}
