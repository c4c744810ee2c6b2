package relay

import (
	"context"
	"sync"
)

// stopSignal is the gateway's "the shutdown grace is over": a context that
// every upstream exchange watches, made on first use.
type stopSignal struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *stopSignal) context() context.Context {
	s.once.Do(func() { s.ctx, s.cancel = context.WithCancel(context.Background()) })
	return s.ctx
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
