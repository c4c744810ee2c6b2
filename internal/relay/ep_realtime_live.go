package relay

import (
	"context"
	"sync"

	"github.com/coder/websocket"
)

// rtRegistry tracks live realtime sessions. The HTTP server forgets a
// connection once it is upgraded, so shutdown must end these sessions
// itself, before the billing writer stops, or their last usage is lost.
type rtRegistry struct {
	mu      sync.Mutex
	live    map[*rtSession]struct{}
	wg      sync.WaitGroup
	closing bool
}

// add registers a session; false once shutdown has begun.
func (g *rtRegistry) add(s *rtSession) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	if g.live == nil {
		g.live = map[*rtSession]struct{}{}
	}
	g.live[s] = struct{}{}
	g.wg.Add(1)
	return true
}

func (g *rtRegistry) remove(s *rtSession) {
	g.mu.Lock()
	delete(g.live, s)
	g.mu.Unlock()
	g.wg.Done()
}

// CloseRealtime ends every live realtime session with a going-away close
// on both sockets and waits until each has settled its billing, or ctx
// ends. Sessions that connect afterwards are refused. Call it on shutdown
// before the billing writer is closed.
func (rl *Relay) CloseRealtime(ctx context.Context) error {
	g := &rl.sockets
	g.mu.Lock()
	g.closing = true
	live := make([]*rtSession, 0, len(g.live))
	for s := range g.live {
		live = append(live, s)
	}
	g.mu.Unlock()
	for _, s := range live {
		go func() {
			_ = s.client.Close(websocket.StatusGoingAway, "the gateway is shutting down")
			_ = s.up.Close(websocket.StatusGoingAway, "the gateway is shutting down")
		}()
	}
	return waitCtx(ctx, &g.wg)
}

// waitCtx waits for wg, or until ctx ends.
func waitCtx(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
