package app

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// changesChannel is the Redis channel on which a node announces that it
// changed something other nodes keep a snapshot or cache of.
const changesChannel = "turnpike:changes"

// changes spreads administrative changes between nodes. The node that made
// a change publishes one message ("<node> <kind>", kind being the /api
// resource: tokens, users, channels, models, groups, plugins, …); every
// other node drops its key cache and reloads its routing, price, limit and
// plugin snapshots from the database. Reloads are coalesced, so a burst of
// changes costs one reload per node. Without Redis nothing is published
// and the periodic refreshes (keys 10 s, snapshots 15 s, limits 5 s,
// plugins 3 s) are the only way; with it they remain the fallback for a
// message lost while a node was disconnected (a node also reloads
// everything whenever its subscription is re-established).
type changes struct {
	rdb   redis.UniversalClient
	node  string
	log   *slog.Logger
	apply func(ctx context.Context)
	dirty chan struct{}
}

func newChanges(rdb redis.UniversalClient, node string, log *slog.Logger, apply func(context.Context)) *changes {
	return &changes{rdb: rdb, node: node, log: log, apply: apply, dirty: make(chan struct{}, 1)}
}

// Publish tells the other nodes that kind changed. It never fails the
// change: a lost message is made good by the periodic refresh.
func (c *changes) Publish(kind string) {
	if c == nil || c.rdb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.rdb.Publish(ctx, changesChannel, c.node+" "+kind).Err(); err != nil {
		c.log.Warn("change not announced to other nodes; they see it at their next refresh", "kind", kind, "err", err)
	}
}

// Run subscribes until ctx ends and reloads on every change announced by
// another node.
func (c *changes) Run(ctx context.Context) {
	if c == nil || c.rdb == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.dirty:
				c.apply(ctx)
			}
		}
	}()
	defer func() { <-done }()
	ps := c.rdb.Subscribe(ctx, changesChannel)
	// Receive does not return when ctx ends while it waits on the socket;
	// closing the subscription does.
	stop := context.AfterFunc(ctx, func() { ps.Close() })
	defer stop()
	defer ps.Close()
	for {
		msg, err := ps.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			// (Re)subscribed: whatever was published while the
			// connection was down is picked up by one full reload.
			c.mark()
		case *redis.Message:
			if node, _, _ := strings.Cut(m.Payload, " "); node != c.node {
				c.mark()
			}
		}
		if err != nil {
			c.log.Warn("change subscription interrupted; reconnecting", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

func (c *changes) mark() {
	select {
	case c.dirty <- struct{}{}:
	default:
	}
}

// announce wraps the /api handler: a state-changing request that
// succeeded is announced with its resource as kind. Other requests (the
// model surfaces, streams, upgraded sockets) pass untouched.
func (c *changes) announce(next http.Handler) http.Handler {
	if c == nil || c.rdb == nil {
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
