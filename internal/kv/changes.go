package kv

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// changesChannel is the Redis channel on which a node announces that it
// changed something other nodes keep a snapshot or cache of.
const changesChannel = "turnpike:changes"

// Changes spreads administrative changes between nodes. The node that made
// a change publishes one message ("<node> <kind>", kind being the /api
// resource: tokens, users, channels, models, groups, plugins, …); every
// other node drops its key cache and reloads its routing, price, limit and
// plugin snapshots from the database. Reloads are coalesced, so a burst of
// changes costs one reload per node. Without Redis nothing is published
// and the periodic refreshes (keys 10 s, snapshots 15 s, limits 5 s,
// plugins 3 s) are the only way; with it they remain the fallback for a
// message lost while a node was disconnected (a node also reloads
// everything whenever its subscription is re-established).
type Changes struct {
	rdb   Client
	node  string
	log   *slog.Logger
	apply func(ctx context.Context)
	dirty chan struct{}
}

// NewChanges announces this node's changes as node on rdb (nil: no Redis,
// nothing is announced) and calls apply for the changes of other nodes.
func NewChanges(rdb Client, node string, log *slog.Logger, apply func(context.Context)) *Changes {
	return &Changes{rdb: rdb, node: node, log: log, apply: apply, dirty: make(chan struct{}, 1)}
}

// Enabled reports whether changes reach other nodes at once.
func (c *Changes) Enabled() bool { return c != nil && c.rdb != nil }

// Publish tells the other nodes that kind changed. It never fails the
// change: a lost message is made good by the periodic refresh.
func (c *Changes) Publish(kind string) {
	if !c.Enabled() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := Announce(ctx, c.rdb, c.node, kind); err != nil {
		c.log.Warn("change not announced to other nodes; they see it at their next refresh", "kind", kind, "err", err)
	}
}

// Announce publishes one change on rdb as made by node: the command line
// uses it to tell running nodes, which then reload.
func Announce(ctx context.Context, rdb Client, node, kind string) error {
	return rdb.Publish(ctx, changesChannel, node+" "+kind).Err()
}

// Run subscribes until ctx ends and reloads on every change announced by
// another node.
func (c *Changes) Run(ctx context.Context) {
	if !c.Enabled() {
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
	c.receive(ctx)
}

// receive marks a reload for every message of another node until ctx ends.
func (c *Changes) receive(ctx context.Context) {
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

func (c *Changes) mark() {
	select {
	case c.dirty <- struct{}{}:
	default:
	}
}
