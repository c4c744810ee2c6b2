package relay

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// realtimeFrameLimit bounds one frame in either direction; audio appends
// carry whole base64 chunks, far beyond the library's 32 KiB default.
const realtimeFrameLimit = 16 << 20

// keyProtocolPrefix marks the subprotocol browsers use to send the key,
// since they cannot set headers on a WebSocket.
const keyProtocolPrefix = "openai-insecure-api-key."

// rtSession is one proxied realtime connection on the admitted-call core:
// each response is one charge, settled from its response.done or, when the
// session ends before that, from the output delivered so far.
type rtSession struct {
	callCore
	up     *websocket.Conn
	client *websocket.Conn
	// estimate is what each response reserves; a new reservation is taken
	// after each response, and failing to take it means the quota ran out.
	estimate int64
	// out follows the response in progress (only fromUpstream touches it).
	out rtOutput
	// responding is set from a response.created to its response.done: a
	// client that leaves meanwhile does not end the upstream at once, so
	// the response can still be billed on its own usage.
	responding atomic.Bool
	// clientGone is set once the client can no longer be written to.
	clientGone atomic.Bool
	// cancelSent: response.cancel went upstream for a client that left.
	cancelSent atomic.Bool
	// rtg is what the guardrails did on client frames (guard_realtime.go).
	rtg rtGuards
}

// realtimeDrain bounds how long a response under way is followed after its
// client left and response.cancel went upstream, waiting for the
// response.done that bills it (CONTRACT §13).
const realtimeDrain = 5 * time.Second

// realtimeInputEstimate is the input each response reserves; it is what an
// interrupted response whose usage never came is billed for its input.
const realtimeInputEstimate = 1000

// serveRealtime serves GET /v1/realtime?model=…: it authenticates, checks the
// model, connects to a channel's realtime socket first (so a refusal is
// still an HTTP error in the OpenAI dialect), then upgrades the client and
// relays frames both ways.
func (rl *Relay) serveRealtime(w http.ResponseWriter, r *http.Request) {
	s := &rtSession{}
	s.begin(rl, w, r, "realtime", protocol.OpenAI)
	s.stream = true
	if err := s.open(); err != nil {
		s.fail(err)
		s.finish()
		return
	}
	client, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{"realtime"},
		// The key, not a cookie, authenticates the socket, so a foreign
		// origin gains nothing; browsers on other origins are the main users
		// of the subprotocol key.
		InsecureSkipVerify: true,
	})
	if err != nil {
		// Accept has answered the client itself; the call still ends
		// through fail, refunded with its error row.
		_ = s.up.CloseNow()
		s.wrote = true
		s.fail(&ir.Error{Status: http.StatusBadRequest, Kind: ir.KindInvalidRequest, Code: "websocket_upgrade_failed",
			Message: "the WebSocket upgrade failed", Cause: err})
		s.finish()
		return
	}
	client.SetReadLimit(realtimeFrameLimit)
	s.client = client
	if !rl.sockets.add(s) {
		_ = client.Close(websocket.StatusServiceRestart, "the gateway is shutting down")
		_ = s.up.CloseNow()
		s.wrote = true
		s.fail(&ir.Error{Status: http.StatusServiceUnavailable, Kind: ir.KindOverloaded, Code: "shutting_down",
			Message: "the gateway is shutting down"})
		s.finish()
		return
	}
	s.run(r.Context())
	rl.sockets.remove(s)
	s.status = http.StatusSwitchingProtocols
	s.finish()
}

// realtimeKey takes the key from a Bearer header or the key subprotocol.
func realtimeKey(r *http.Request) string {
	if k := auth.BearerToken(r); k != "" {
		return k
	}
	for _, p := range offeredProtocols(r) {
		if k, ok := strings.CutPrefix(p, keyProtocolPrefix); ok {
			return k
		}
	}
	return ""
}

func offeredProtocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// open runs the one driver up to a connected upstream socket: it
// authenticates, admits with a small estimate (1,000 tokens each way),
// which proves the account has quota, and dials a channel under the shared
// retry rule. A failure after admission is refunded with its error row by
// fail.
func (s *rtSession) open() error {
	return s.drive(&funcHooks{
		authenticate: s.keyAuth(realtimeKey),
		read:         s.read,
		estimate: exactly(func(price *billing.Price) charge {
			return charge{usage: ir.Usage{InputTokens: realtimeInputEstimate, OutputTokens: 1000}, usd: price.CallCost(1)}
		}),
		filter:  s.rl.realtimeCapable,
		connect: s.connect,
	})
}

// read takes the model from the query of a WebSocket upgrade.
func (s *rtSession) read() error {
	if !strings.EqualFold(s.r.Header.Get("Upgrade"), "websocket") {
		return ir.BadRequest("websocket_required", "GET /v1/realtime takes a WebSocket upgrade")
	}
	s.model = s.r.URL.Query().Get("model")
	if s.model == "" {
		return missingParam("model")
	}
	return nil
}

// realtimeCapable: providers with the OpenAI realtime path (Azure
// deployments name realtime differently).
func (rl *Relay) realtimeCapable(ch *routing.Channel) bool {
	return rl.servesPath(ch, "/v1/realtime") && ch.Type != upstream.TypeAzure
}

// connect is one attempt: dial the channel's realtime socket. Nothing has
// reached the client yet, so every failure may move on.
func (s *rtSession) connect(ch *routing.Channel) error {
	up, err := s.dialChannel(s.r, ch)
	if err != nil {
		return err
	}
	s.up = up
	s.estimate = s.hold.Reserved // a fallback model may have re-reserved at its price
	s.rl.Router.Health.SucceededKey(ch, ch.KeyIndex)
	return nil
}

func (s *rtSession) dialChannel(r *http.Request, ch *routing.Channel) (*websocket.Conn, error) {
	u := upstream.NormalizeBaseURL(ch.BaseURL) + "/v1/realtime?model=" + url.QueryEscape(ch.MapModel(s.model))
	h := http.Header{}
	if ch.Key != "" {
		h.Set("Authorization", "Bearer "+ch.Key)
	}
	if beta := realtimeBeta(r); beta != "" {
		h.Set("OpenAI-Beta", beta)
	}
	timeout := s.rl.Options.FirstByteTimeout
	if t := settingSeconds(ch.Settings, "first_byte_timeout_seconds"); t > 0 {
		timeout = t
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: s.rl.Client, HTTPHeader: h})
	if err == nil {
		conn.SetReadLimit(realtimeFrameLimit)
		return conn, nil
	}
	if short := upstream.Shortage(err); short != nil {
		return nil, short
	}
	if resp == nil || resp.StatusCode < 300 {
		return nil, &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_unreachable",
			Message: "the upstream realtime socket could not be reached", Retry: ir.RetryNext, Cause: err}
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	return nil, upstreamError(s.rl.Codecs[s.dialect], resp)
}

// realtimeBeta passes on the beta flag the client asked for, as a header
// or as the browser subprotocol.
func realtimeBeta(r *http.Request) string {
	if v := r.Header.Get("OpenAI-Beta"); v != "" {
		return v
	}
	for _, p := range offeredProtocols(r) {
		if p == "openai-beta.realtime-v1" {
			return "realtime=v1"
		}
	}
	return ""
}

// run relays until either side leaves, one goroutine per direction so each
// direction keeps its order, then releases the unused reservation.
func (s *rtSession) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		s.fromClient(ctx)
	}()
	s.fromUpstream(ctx)
	<-clientDone
	_ = s.up.CloseNow()
	_ = s.client.CloseNow()
	s.endSession()
}

func (s *rtSession) fromClient(ctx context.Context) {
	for {
		typ, data, err := s.client.Read(ctx)
		if err != nil {
			code, reason := closeFrom(err, websocket.StatusGoingAway, "the client went away")
			s.leave(code, reason)
			return
		}
		if typ == websocket.MessageText {
			var refusal []byte
			if data, refusal = s.guardFrame(ctx, data); refusal != nil {
				_ = s.client.Write(ctx, websocket.MessageText, refusal)
				continue
			}
		}
		if err := s.up.Write(ctx, typ, data); err != nil {
			return // the upstream side is closing; fromUpstream ends the client
		}
	}
}

// leave ends the upstream side after the client left: at once when no
// response is under way, else once its response.done was billed or the
// drain time passed, whichever comes first.
func (s *rtSession) leave(code websocket.StatusCode, reason string) {
	s.clientGone.Store(true)
	if !s.responding.Load() {
		_ = s.up.Close(code, reason)
		return
	}
	s.cancelResponse()
	time.AfterFunc(realtimeDrain, func() { _ = s.up.Close(code, reason) })
}

// cancelResponse asks the upstream, once, to stop the response under way
// for a client that left: it then ends it early with a response.done
// carrying the usage so far, which bills it.
func (s *rtSession) cancelResponse() {
	if !s.cancelSent.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.up.Write(ctx, websocket.MessageText, []byte(`{"type":"response.cancel"}`))
}

func (s *rtSession) fromUpstream(ctx context.Context) {
	for {
		typ, data, err := s.up.Read(ctx)
		if err != nil {
			code, reason := closeFrom(err, websocket.StatusInternalError, "the upstream connection was lost")
			_ = s.client.Close(code, reason)
			return
		}
		// Billing comes before relaying: the upstream produced the output
		// whether or not the client is still there to receive it.
		funded := typ != websocket.MessageText || s.bill(data)
		if s.clientGone.Load() || s.client.Write(ctx, typ, data) != nil {
			if s.drained() {
				return
			}
			continue
		}
		if !funded {
			_ = s.client.Close(websocket.StatusPolicyViolation, "insufficient quota: the session was closed; top up to continue")
			_ = s.up.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}

// drained is called for each upstream frame once the client is gone: it
// reports true (and ends the upstream) when no response is under way any
// more; otherwise the response is followed until its response.done.
func (s *rtSession) drained() bool {
	if s.clientGone.CompareAndSwap(false, true) && s.responding.Load() {
		s.cancelResponse()
		time.AfterFunc(realtimeDrain, func() { _ = s.up.CloseNow() })
	}
	if s.responding.Load() {
		return false
	}
	_ = s.up.Close(websocket.StatusGoingAway, "the client went away")
	return true
}

// closeFrom is the close code and reason to pass on to the other side:
// the peer's own when it sent one that may be sent again, else fallback.
func closeFrom(err error, fallback websocket.StatusCode, reason string) (websocket.StatusCode, string) {
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		return fallback, reason
	}
	switch c := ce.Code; {
	case c == websocket.StatusNoStatusRcvd:
		return websocket.StatusNormalClosure, ""
	case c == 1000 || c == 1001 || c == 1002 || c == 1003 || (c >= 1007 && c <= 1014) || (c >= 3000 && c <= 4999):
		return c, truncateReason(ce.Reason)
	}
	return fallback, reason
}

// truncateReason keeps a close reason within the 123 bytes a close frame
// allows, on a UTF-8 boundary.
func truncateReason(s string) string {
	if len(s) <= 123 {
		return s
	}
	s = s[:123]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}
