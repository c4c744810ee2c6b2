package relay

import (
	"context"
	"io"
	"net/http"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// adapters finds a channel type's adapter.
func (rl *Relay) adapters(t int) (upstream.Adapter, bool) { return rl.Adapters(t) }

// target is a channel as its adapter sees it for one attempt at model.
func (rl *Relay) target(ch *routing.Channel, model string) (upstream.Adapter, upstream.Target, error) {
	t := upstream.Target{Type: ch.Type, BaseURL: ch.BaseURL, Key: ch.Key, Settings: ch.Settings,
		Model: ch.MapModel(model), Client: rl.clientFor(ch.Settings)}
	a, ok := rl.adapters(ch.Type)
	if !ok {
		return nil, t, noChatWire(ch)
	}
	if n, ok := a.(upstream.ModelNamer); ok {
		t.Model = n.UpstreamModel(t)
	}
	return a, t, nil
}

// clientFor is the HTTP client of a channel's calls: the h2c one when the
// channel says its http:// address speaks HTTP/2 without TLS.
func (rl *Relay) clientFor(settings map[string]any) *http.Client {
	if upstream.SpeaksH2C(settings) {
		return rl.H2CClient
	}
	return rl.Client
}

// noChatWire is a channel of a type the gateway has no adapter for (a task
// vendor's channel routed a model by mistake): another channel may serve.
func noChatWire(ch *routing.Channel) error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_channel",
		Message: "the channel's type has no chat wire", Retry: ir.RetryNext}
}

// hasChatWire reports a channel whose type has an adapter.
func (rl *Relay) hasChatWire(ch *routing.Channel) bool {
	_, ok := rl.adapters(ch.Type)
	return ok
}

// servesPath reports a channel whose provider has the OpenAI-style path.
func (rl *Relay) servesPath(ch *routing.Channel, path string) bool {
	a, ok := rl.adapters(ch.Type)
	if !ok {
		return false
	}
	e, ok := a.(upstream.Endpoints)
	return ok && e.Serves(path)
}

// endpoint builds a request for an OpenAI-style path on a channel whose
// provider has it.
func (rl *Relay) endpoint(ctx context.Context, t upstream.Target, method, path string, body io.Reader, contentType string) (*http.Request, error) {
	a, ok := rl.adapters(t.Type)
	e, isEndpoints := a.(upstream.Endpoints)
	if !ok || !isEndpoints || !e.Serves(path) {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_channel",
			Message: "the channel's provider has no " + path, Retry: ir.RetryNext}
	}
	req, err := e.Endpoint(ctx, t, method, path, body, contentType)
	if err != nil {
		return nil, adapterFailed(err)
	}
	return req, nil
}

// frames is the adapter's stream framing; nil is server-sent events, which
// the pump decodes itself (pumpSSE).
func frames(a upstream.Adapter) func(io.Reader) protocol.EventReader {
	if f, ok := a.(upstream.Framer); ok {
		return f.StreamEvents
	}
	return nil
}

// adapterError reads an upstream error answer, by the adapter when it
// knows its provider's errors, else by the chat wire.
func adapterError(a upstream.Adapter, up protocol.UpstreamCodec, resp *http.Response) error {
	if d, ok := a.(upstream.ErrorDecoder); ok {
		return upstreamErrorWith(resp, func(status int, body []byte) *ir.Error { return d.DecodeError(status, resp.Header, body) })
	}
	return upstreamErrorWith(resp, up.DecodeError)
}
