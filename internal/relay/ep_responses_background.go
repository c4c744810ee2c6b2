package relay

import (
	"context"
	"net/http"
	"net/url"
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
		if body, ok := f.fetch(); ok && !isPending(body) {
			f.end(g, body)
			return
		}
		if interval < maxBackgroundPoll {
			interval *= 2
		}
	}
}

// fetch retrieves the response from its channel; false when the channel
// could not answer (the next poll tries again).
func (f *bgFollow) fetch() ([]byte, bool) {
	rl, ch := f.rc.rl, f.channel
	ctx, cancel := context.WithTimeout(context.Background(), rl.Options.UpstreamTimeout)
	defer cancel()
	_, t, err := rl.target(ch, "")
	if err != nil {
		return nil, false
	}
	req, err := rl.endpoint(ctx, t, http.MethodGet, "/v1/responses/"+url.PathEscape(f.id), http.NoBody, "")
	if err != nil {
		return nil, false
	}
	resp, err := rl.Client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, false
	}
	body, err := readAnswer(resp)
	return body, err == nil
}

// end settles the hold on a terminal response's usage, or refunds it with an
// error row when there is none to bill (body nil: it never finished).
func (f *bgFollow) end(g *bgFollowers, body []byte) {
	f.once.Do(func() {
		g.mu.Lock()
		delete(g.pending, f.id)
		g.mu.Unlock()
		rc := f.rc
		switch {
		case body == nil:
			rc.rl.Logger.Warn("background response never finished; refunding its hold", "response_id", f.id)
			rc.status = http.StatusGatewayTimeout
			row := rc.logRow(charge{})
			rc.refund(&row)
		default:
			rc.settle(rc.billNative(rc.epCall, body))
		}
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
