package app

import (
	"log/slog"
	"net/http"
	"time"
)

// Server timeouts. There is no WriteTimeout: it would cut long streamed
// answers and large downloads, whose length the gateway cannot know.
const (
	// readHeaderTimeout bounds how long a client may take to send the
	// request line and headers (slow-header attacks).
	readHeaderTimeout = 30 * time.Second
	// idleTimeout closes keep-alive connections with no request in flight.
	idleTimeout = 120 * time.Second
	// bodyBaseTimeout and bodyMinRate size ReadTimeout: a fixed grace plus
	// the time the largest accepted body takes at the slowest rate served.
	bodyBaseTimeout = 2 * time.Minute
	bodyMinRate     = 64 << 10 // bytes per second
)

// bodyReadTimeout is how long a request, headers and a body of up to limit
// bytes, may take to arrive: 2 minutes plus the limit at 64 KiB/s (32 MiB →
// about 10.5 minutes).
func bodyReadTimeout(limit int64) time.Duration {
	return bodyBaseTimeout + time.Duration(limit/bodyMinRate)*time.Second
}

// newServer is the gateway's HTTP server. ReadTimeout covers reading the
// request only: net/http lifts the read deadline once the handler has the
// whole body, so a streamed answer may run past it (a test holds this).
func newServer(h http.Handler, readTimeout time.Duration, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
