package app

import (
	"context"
	"fmt"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/turnpike-gw/turnpike/internal/obs"
	"github.com/turnpike-gw/turnpike/internal/relay"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task/taskhttp"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

func newLogger(level string, out io.Writer) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(obs.NewContextHandler(slog.NewTextHandler(out, &slog.HandlerOptions{Level: l})))
}

// newUpstreamClient is tuned for many concurrent calls to few hosts: large
// idle pools so connections are reused instead of redialled.
func newUpstreamClient() *http.Client {
	return &http.Client{Transport: newUpstreamTransport()}
}

// newUpstreamH2CClient is the relay's client for channels whose http://
// address speaks HTTP/2 without TLS (settings.http2 prior_knowledge).
func newUpstreamH2CClient() *http.Client {
	return &http.Client{Transport: upstream.H2CTransport(newUpstreamTransport())}
}

func newUpstreamTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// accept is the first stage of every request: its request id (the
// client's X-Request-Id when printable and at most 128 characters, else a
// generated UUIDv7) on the answer and in the context, where the relay and
// every log line written with the context find it; the server span when
// tracing is on; panic recovery (a panic is logged and answered 500, never
// a stack trace); and a debug access log.
func accept(log *slog.Logger, tracer *obs.Tracer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := startAccepted(log, tracer, w, r)
		defer a.end()
		next.ServeHTTP(a, a.r)
	})
}

// accepted is a request accept passed on, and what its end needs. It is
// kept on the heap (the recorder it wraps is there anyway) rather than in
// a closure in accept's frame: that frame lies under every call, and under
// a streamed answer for as long as it is open.
type accepted struct {
	statusRecorder
	log   *slog.Logger
	r     *http.Request
	span  trace.Span
	id    string
	start time.Time
}

func startAccepted(log *slog.Logger, tracer *obs.Tracer, w http.ResponseWriter, r *http.Request) *accepted {
	start := time.Now()
	id := obs.RequestIDFrom(r.Header.Get(obs.HeaderRequestID))
	w.Header().Set(obs.HeaderRequestID, id)
	a := &accepted{statusRecorder: statusRecorder{ResponseWriter: w, status: 200}, log: log, id: id, start: start}
	a.r = r.WithContext(obs.WithRequestIDAt(r.Context(), &a.id))
	if tracer.On() {
		var ctx context.Context
		ctx, a.span = tracer.StartServer(a.r)
		a.r = a.r.WithContext(ctx)
	}
	return a
}

// end is deferred by accept, so its recover sees the handler's panic.
func (a *accepted) end() {
	r, log := a.r, a.log
	if v := recover(); v != nil {
		if v == http.ErrAbortHandler {
			if a.span != nil {
				obs.EndServer(a.span, r.Pattern, 499, a.id)
			}
			panic(v)
		}
		log.ErrorContext(r.Context(), "handler panicked", "path", r.URL.Path, "panic", v)
		if !a.wrote {
			panicAnswer(&a.statusRecorder, r)
		}
	}
	if a.span != nil {
		obs.EndServer(a.span, r.Pattern, a.status, a.id)
	}
	if log.Enabled(r.Context(), slog.LevelDebug) {
		log.DebugContext(r.Context(), "request", "method", r.Method, "path", r.URL.Path, "status", a.status, "ms", time.Since(a.start).Milliseconds(), "client", r.RemoteAddr)
	}
}

// panicAnswer is the 500 of a handler that panicked, as JSON in the
// surface's dialect (http.Error would label it text/plain).
func panicAnswer(w http.ResponseWriter, r *http.Request) {
	const msg = "the request could not be completed; see the server log"
	if strings.HasPrefix(r.URL.Path, "/api/") {
		apijson.WriteError(w, http.StatusInternalServerError, apijson.Error{Code: "internal_error", Message: msg})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(openai.Chat.EncodeError(&ir.Error{Status: 500, Kind: ir.KindInternal, Code: "internal_error", Message: msg}))
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Flush passes flushes through so streams are not buffered by the wrapper.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// testChannel sends one small chat request through a channel.
func (a *App) testChannel(ctx context.Context, c *store.Channel) (time.Duration, error) {
	return relay.TestChannel(ctx, a.Relay, c)
}

func (a *App) upstreamModels(ctx context.Context, c *store.Channel) ([]string, error) {
	return relay.UpstreamModels(ctx, a.Relay, c)
}

// fallback serves what no fixed route matched: task plugins' native routes
// first, then the console for everything else.
func fallback(tasks *taskhttp.Handlers, console http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tasks.ServeNative(w, r) {
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":"not_found"}}`,
				"no route for "+r.Method+" "+r.URL.Path)
			return
		}
		console.ServeHTTP(w, r)
	})
}
