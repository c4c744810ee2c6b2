package app

import (
	"net/http"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/kv"
)

// announce wraps the /api handler: a state-changing request that
// succeeded is announced with its resource as kind. Other requests (the
// model surfaces, streams, upgraded sockets) pass untouched.
func announce(c *kv.Changes, next http.Handler) http.Handler {
	if !c.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, ok := changeKind(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		if sw.status < 400 {
			c.Publish(kind)
		}
	})
}

// readOnlyPosts are POSTs that answer a computation and change nothing:
// announcing them would make every node reload for a read.
var readOnlyPosts = map[string]bool{"pricing/estimate": true, "models/catalogue/preview": true}

// changeKind names the resource a state-changing /api request changes.
// Signing in and out change nothing other nodes cache (sessions are read
// from the database on every request).
func changeKind(r *http.Request) (string, bool) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return "", false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok {
		return "", false
	}
	kind, _, _ := strings.Cut(rest, "/")
	if kind == "" || kind == "auth" || readOnlyPosts[rest] {
		return "", false
	}
	return kind, true
}
