package relay

import (
	"context"
	"math/rand/v2"
	"sync"
)

// stopSignal is the gateway's "the shutdown grace is over": a context that
// every upstream exchange watches, made on first use. Calls watch one of
// several child contexts, picked at random, rather than the root itself:
// context.AfterFunc registers with its context under that context's lock,
// and one context watched by every call would be a lock every call takes
// twice. Cancelling the root cancels every shard.
type stopSignal struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	shards [stopShards]context.Context
	// ends are the shards' own cancels, kept for vet's sake: cancelling
	// the root ends them.
	ends [stopShards]context.CancelFunc
}

const stopShards = 16

func (s *stopSignal) context() context.Context {
	s.once.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		for i := range s.shards {
			s.shards[i], s.ends[i] = context.WithCancel(s.ctx)
		}
	})
	return s.ctx
}

// watch is the context a call watches for the end of the grace: one of the
// root's shards.
func (s *stopSignal) watch() context.Context {
	s.context()
	return s.shards[rand.N(stopShards)]
}

// EndOpenCalls ends every upstream exchange still open, for a shutdown
// whose grace is over (CONTRACT §22). A stream that already sent bytes
// ends the way a broken upstream stream does: the client gets its
// dialect's error event and the call is billed for what was delivered,
// through the one stream tail (relayEvents); a call that sent nothing
// fails without a charge. The HTTP server's shutdown then sees the
// handlers return.
func (rl *Relay) EndOpenCalls() {
	rl.stopped.context()
	rl.stopped.cancel()
}
