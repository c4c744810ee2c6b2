package relay

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/routing"
)

// A background Responses call (`background: true`) answers at once with a
// queued response and no usage; the model works afterwards. Its hold is kept
// and a follower polls the channel until the response is terminal, then
// settles it on the final usage. A client's own GET of the response settles
// it as soon as that answer is terminal. A hold still open when the process
// stops is released by the billing sweep like any other in-flight hold.

const (
	defaultBackgroundPoll = 2 * time.Second
	maxBackgroundPoll     = 30 * time.Second
	// backgroundLimit is how long a response may stay unfinished; past it
	// the hold is refunded with an error row rather than kept forever.
	backgroundLimit = 24 * time.Hour
)

// bgFollowers tracks background responses whose hold is still open.
type bgFollowers struct {
	mu      sync.Mutex
	pending map[string]*bgFollow
	wg      sync.WaitGroup
	stop    chan struct{}
	once    sync.Once
	closing bool
}

// bgFollow is one background response and the call that reserved for it.
type bgFollow struct {
	rc      *respCall
	channel *routing.Channel
	id      string
	// queued is the answer the client got at once.
	queued []byte
	// settled is closed when the hold has ended.
	settled chan struct{}
	once    sync.Once
}

func (g *bgFollowers) stopCh() chan struct{} {
	g.once.Do(func() { g.stop = make(chan struct{}) })
	return g.stop
}

// isPending reports whether a Responses answer is still being worked on.
func isPending(body []byte) bool {
	switch gjson.GetBytes(body, "status").String() {
	case "queued", "in_progress":
		return true
	}
	return false
}

// followBackground answers the client with the queued response and keeps
// the hold open; the call is followed once its handler has finished with it
// (startFollowing), so the follower never shares the call with the handler.
func (rc *respCall) followBackground(ch *routing.Channel, id string, body []byte) bool {
	if id == "" {
		return false
	}
	rc.follow = &bgFollow{rc: rc, channel: ch, id: id, queued: body, settled: make(chan struct{})}
	rc.wrote = true
	rc.w.Header().Set("Content-Type", "application/json")
	rc.w.WriteHeader(http.StatusOK)
	_, _ = rc.w.Write(body)
	return true
}

// startFollowing polls a background response until it is terminal. When the
// gateway is already shutting down, the call is settled at once on the
// queued answer, as a call that is not followed would be.
func (rl *Relay) startFollowing(f *bgFollow) {
	g := &rl.background
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		f.rc.settle(f.rc.billNative(f.rc.epCall, f.queued))
		return
	}
	if g.pending == nil {
		g.pending = map[string]*bgFollow{}
	}
	g.pending[f.id] = f
	g.wg.Add(1)
	g.mu.Unlock()
	go f.poll(g)
}

// poll asks the channel for the response with a growing interval until it
// is terminal, the limit passes, or the gateway stops.
func (f *bgFollow) poll(g *bgFollowers) {
	defer g.wg.Done()
	interval := f.rc.rl.Options.BackgroundPoll
	if interval <= 0 {
		interval = defaultBackgroundPoll
	}
	deadline := time.Now().Add(backgroundLimit)
	for {
		select {
		case <-f.settled:
			return
		case <-g.stopCh():
			return // the hold stays open; the billing sweep releases it
		case <-time.After(interval):
		}
		if time.Now().After(deadline) {
			f.end(g, nil)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), f.rc.rl.Options.UpstreamTimeout)
		body, status := f.fetchFrom(ctx)
		cancel()
		switch {
		case status == http.StatusOK && !isPending(body):
			f.end(g, body)
			return
		case status == http.StatusNotFound:
			// Gone from the channel (deleted there): it ran, so it is
			// charged, never refunded.
			f.chargeReservation(g, "gone")
			return
		}
		if interval < maxBackgroundPoll {
			interval *= 2
		}
	}
}

// end settles the hold on a terminal response's usage or, when there is
// none to bill (body nil: it never finished), fails the call: refunded once
// with its error row, like every failed call.
func (f *bgFollow) end(g *bgFollowers, body []byte) {
	f.finish(g, func(rc *respCall) {
		if body == nil {
			rc.rl.Logger.WarnContext(rc.r.Context(), "background response never finished; refunding its hold", "response_id", f.id)
			rc.fail(errBackgroundUnfinished)
			return
		}
		rc.settle(rc.billNative(rc.epCall, body))
	})
}

// chargeReservation settles a response that ran but whose usage can no
// longer be read (deleted, or gone from the channel) on its whole
// reservation.
func (f *bgFollow) chargeReservation(g *bgFollowers, why string) {
	f.finish(g, func(rc *respCall) {
		ch := rc.sizer(rc.price, true)
		ch.detail = map[string]any{"response_id": f.id, "charged_reservation": why}
		rc.settleAt(ch, rc.hold.Reserved)
	})
}

// finish ends the follow exactly once, whoever gets there first: the
// follower, a client's retrieval, or a client's delete.
func (f *bgFollow) finish(g *bgFollowers, settle func(rc *respCall)) {
	f.once.Do(func() {
		g.mu.Lock()
		delete(g.pending, f.id)
		g.mu.Unlock()
		settle(f.rc)
		close(f.settled)
	})
}

// observeResponse lets a client's retrieval of a background response settle
// it at once when the answer is terminal.
func (rl *Relay) observeResponse(id string, body []byte) {
	if isPending(body) {
		return
	}
	g := &rl.background
	g.mu.Lock()
	f := g.pending[id]
	g.mu.Unlock()
	if f != nil {
		f.end(g, body)
	}
}

// closeBackground stops following background responses; their holds stay
// open in the ledger and the billing sweep releases them.
func (rl *Relay) closeBackground(ctx context.Context) error {
	g := &rl.background
	g.mu.Lock()
	first := !g.closing
	g.closing = true
	g.mu.Unlock()
	if first {
		close(g.stopCh())
	}
	return waitCtx(ctx, &g.wg)
}
