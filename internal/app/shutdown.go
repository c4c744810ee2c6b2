package app

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// endStreamsTimeout bounds the wait, after the grace, for the handlers of
// the streams just ended to write their error event and settle.
const endStreamsTimeout = 10 * time.Second

// inFlight counts the requests being served, so the shutdown can say how
// many it waits for.
type inFlight struct{ n atomic.Int64 }

func (f *inFlight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.n.Add(1)
		defer f.n.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// drainCalls stops accepting and lets calls finish for the configured
// grace; then it ends the streams still open, each told in its dialect and
// billed for what it delivered (CONTRACT §22), and waits for their
// handlers. It returns the context the rest of the shutdown runs under.
func (a *App) drainCalls(srv *http.Server, calls *inFlight) {
	grace := a.Config.ShutdownGrace()
	a.Log.Info("shutting down: finishing calls in flight", "in_flight", calls.n.Load(), "grace", grace.String())
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(ctx); err == nil {
		return
	}
	a.Log.Warn("shutdown grace over: ending the calls still open and billing what they delivered",
		"open", calls.n.Load())
	a.Relay.EndOpenCalls()
	ctx, cancel = context.WithTimeout(context.Background(), endStreamsTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		a.Log.Warn("calls did not end after the grace; closing their connections", "open", calls.n.Load(), "err", err)
		srv.Close()
	}
}
