package app

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
)

// apiStoreTimeout is how long an /api call may take before it is answered
// 503 store_unavailable (CONTRACT §16: within 5 s when the database does
// not answer). Nearly every /api call is a few queries, so one that has
// not answered by then is waiting on a database that does not answer;
// without this a hung connection held the call for 20 s and more.
const apiStoreTimeout = 4500 * time.Millisecond

// slowAPIRoutes wait on something other than the database by design (an
// upstream provider, the marketplace, the identity provider, a plugin's
// hooks run on a sample, a large upload), under bounds of their own. A
// "*" stands for one path segment; a method, when given, must match.
var slowAPIRoutes = []string{
	"/api/channels/*/test",
	"/api/channels/*/upstream-models",
	"POST /api/plugin/task",
	"/api/plugin/task/dry-run",
	"/api/plugin/task/marketplace",
	"/api/plugin/task/marketplace/install",
	"/api/auth/oidc/login",
	"/api/auth/oidc/callback",
	// An export streams for as long as the window is large; each of its
	// pages is a bounded query under the request's own context.
	"GET /api/logs/export",
}

func slowAPIRoute(method, path string) bool {
	for _, p := range slowAPIRoutes {
		if m, rest, ok := strings.Cut(p, " "); ok {
			if m != method {
				continue
			}
			p = rest
		}
		if matchSegments(p, path) {
			return true
		}
	}
	return false
}

func matchSegments(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// storeGuard answers an /api call 503 store_unavailable when it has not
// finished within the timeout. The handler runs on with its context
// cancelled (the database drivers give up on a cancelled query) and its
// late answer is dropped; it writes into a buffer until then, so an answer
// is never cut in half.
func storeGuard(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") || slowAPIRoute(r.Method, r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		guardStore(timeout, next, w, r)
	})
}

// guardStore is storeGuard for a call it guards. It is a function of its
// own so that a /v1 call, which passes straight through, does not carry
// this frame on its stack for as long as its stream is open.
func guardStore(timeout time.Duration, next http.Handler, w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	bw := &bufferedWriter{header: http.Header{}, status: http.StatusOK}
	done := make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				panicked <- v
			}
		}()
		next.ServeHTTP(bw, r.WithContext(ctx))
		close(done)
	}()
	select {
	case v := <-panicked:
		// Raised again here, where the server's recovery sees it.
		panic(v)
	case <-done:
		bw.copyTo(w)
	case <-ctx.Done():
		bw.abandon()
		if r.Context().Err() != nil {
			return // the client went away
		}
		apijson.WriteError(w, http.StatusServiceUnavailable, apijson.Error{Code: "store_unavailable",
			Message: "the database did not answer in time; try again shortly"})
	}
}

// bufferedWriter holds a handler's answer until it is complete.
type bufferedWriter struct {
	mu        sync.Mutex
	header    http.Header
	status    int
	wrote     bool
	body      bytes.Buffer
	abandoned bool
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.abandoned {
		return 0, http.ErrHandlerTimeout
	}
	b.wrote = true
	return b.body.Write(p)
}

func (b *bufferedWriter) abandon() {
	b.mu.Lock()
	b.abandoned = true
	b.mu.Unlock()
}

func (b *bufferedWriter) copyTo(w http.ResponseWriter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
