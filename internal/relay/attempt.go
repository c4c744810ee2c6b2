package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// tryChannels is the retry rule every surface shares (routing.Attempts),
// with the relay's metrics and log on each judged failure and the client's
// view of the last failure once every channel failed.
func (rl *Relay) tryChannels(clientCtx context.Context, plan []*routing.Channel, pin *routing.Channel, wrote func() bool, attempt func(*routing.Channel) error) (err error, exhausted bool) {
	last, exhausted := routing.Attempts{Health: rl.Router.Health, RetryCount: rl.Options.RetryCount, Pin: pin}.Try(clientCtx, plan, wrote, attempt,
		func(ch *routing.Channel, e *ir.Error, moveOn bool) {
			if !moveOn {
				rl.Metrics.attempt("rejected")
				if e.Code == upstream.CodeOutOfResources {
					upstream.NoteShortage(clientCtx, rl.Logger, e)
				}
				return
			}
			rl.Metrics.attempt("retried")
			rl.Logger.WarnContext(clientCtx, "upstream attempt failed", "channel_id", ch.ID, "key_index", ch.KeyIndex, "status", e.Status, "err", e.Message)
		})
	if exhausted {
		return afterRetries(last), true
	}
	if last == nil {
		return nil, false
	}
	return last, false
}

// pickKey is the channel as one attempt uses it (routing.Health.Pick).
func (rl *Relay) pickKey(ch *routing.Channel) (*routing.Channel, bool) {
	return rl.Router.Health.Pick(ch)
}

// afterRetries turns the last failure into what the client sees once every
// channel failed: upstream trouble is a 502/503/504, never the channel's own
// credential problem (a 401 from a provider is not the client's key).
func afterRetries(e *ir.Error) *ir.Error {
	if e == nil {
		return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "no_available_channel", Message: "no channel could serve the request"}
	}
	out := *e
	switch {
	case e.Status == 401 || e.Status == 403:
		out.Status, out.Kind, out.Code = 502, ir.KindUpstream, "upstream_auth_failed"
		out.Message = "the upstream provider rejected the gateway's credentials"
	case e.Status == 402:
		// The provider account is out of credit: not the client's quota.
		out.Status, out.Kind, out.Code = 502, ir.KindUpstream, "upstream_quota_exhausted"
		out.Message = "the upstream provider account has no credit left"
	case e.Status == 429:
		out.Kind = ir.KindRateLimit
	case e.Status == 504 || e.Kind == ir.KindTimeout:
		out.Status = 504
	case e.Status >= 500 && e.Status != 503:
		out.Status = 502
	}
	return &out
}

// send builds a chat call's upstream request: the client's own bytes when
// the channel speaks its format, a converted body otherwise.
func (c *call) send(ctx context.Context, a upstream.Adapter, t upstream.Target, _ *routing.Channel) (*http.Request, func(), error) {
	body, err := c.upstreamBody(a.Codec(t), t.Model)
	if err != nil {
		// The request cannot be expressed in this channel's format; a
		// channel that speaks the client's format may still serve it, and
		// when none does the client gets this 400 after the retries.
		e := ir.As(err)
		e.Retry = ir.RetryNext
		return nil, nil, e
	}
	req, err := a.Chat(ctx, t, body, c.req.Stream, c.r.Header)
	if err != nil {
		return nil, nil, adapterFailed(err)
	}
	return req, nil, nil
}

// relay answers a chat call: streamed through the one stream tail, or
// regular.
func (c *call) relay(a upstream.Adapter, t upstream.Target, _ *routing.Channel, resp *http.Response) error {
	if c.req.Stream {
		return c.relayStream(a.Codec(t), frames(a), resp)
	}
	return c.relayRegular(a.Codec(t), resp)
}

// adapterFailed is a request the adapter could not build: an unusable
// address, or credentials it could not turn into a token. Another channel
// may serve.
func adapterFailed(err error) error {
	if e, ok := err.(*ir.Error); ok {
		return e
	}
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_channel", Message: "the channel's address or credentials are not usable", Retry: ir.RetryNext, Cause: err}
}

// exchange sends the request and waits for response headers no longer than
// the channel's first-byte timeout; cancel aborts the request when it passes.
func (rl *Relay) exchange(clientCtx context.Context, req *http.Request, ch *routing.Channel, cancel context.CancelFunc) (*http.Response, error) {
	timeout := rl.Options.FirstByteTimeout
	if s := settingSeconds(ch.Settings, "first_byte_timeout_seconds"); s > 0 {
		timeout = s
	}
	rl.Tracer.Inject(req.Context(), req.Header)
	sent := time.Now()
	// cancel is the timer's function itself: a timer that can no longer
	// be stopped has fired, which is all a failed exchange needs to know,
	// so no flag and no closure are allocated for it.
	timer := time.AfterFunc(timeout, cancel)
	resp, err := upstream.Do(rl.clientFor(ch.Settings), req)
	fired := !timer.Stop()
	if err == nil {
		took := time.Since(sent)
		rl.Metrics.firstByteAt(ch.Name, took.Seconds())
		if resp.StatusCode < 300 {
			// A quick refusal says nothing of how fast the channel
			// answers; the latency strategy learns from answers only.
			ch.ObserveFirstByte(took)
		}
		return resp, nil
	}
	return nil, exchangeFailed(clientCtx, err, fired, timeout, sent)
}

// exchangeFailed is the error of an exchange that got no answer. It is a
// function of its own so that exchange's frame, which lies under every
// call's wait for its upstream, holds none of it.
//
// The gateway's own shortage (no file descriptor, no local port) is a 503
// that stops the call and leaves channel health alone: the channel did not
// fail, and no other channel could be reached without the same resource. A
// connection lost under a call that was sent carries the time it was sent
// (ir.Error.SentAt), so health counts the loss once however many calls the
// connection carried.
func exchangeFailed(clientCtx context.Context, err error, timedOut bool, timeout time.Duration, sent time.Time) error {
	if clientCtx.Err() != nil {
		return &ir.Error{Status: 499, Kind: ir.KindInvalidRequest, Code: "client_closed", Message: "the client closed the request", Cause: err}
	}
	if timedOut {
		return &ir.Error{Status: 504, Kind: ir.KindTimeout, Code: "upstream_timeout",
			Message: fmt.Sprintf("the upstream sent nothing within %s", timeout), Retry: ir.RetryNext, Cause: err}
	}
	if short := upstream.Shortage(err); short != nil {
		short.Cause = classifyNetErr(err)
		return short
	}
	e := &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "upstream_unreachable",
		Message: "the upstream could not be reached: " + unreachableCause(err), Retry: ir.RetryNext, Cause: classifyNetErr(err)}
	if lostUnderway(err) {
		e.SentAt = sent
	}
	return e
}

func classifyNetErr(err error) error {
	var ne net.Error
	if errors.As(err, &ne) {
		return ne
	}
	return err
}

func settingSeconds(s map[string]any, name string) time.Duration {
	switch v := s[name].(type) {
	case float64:
		return time.Duration(v * float64(time.Second))
	case int:
		return time.Duration(v) * time.Second
	case int64:
		return time.Duration(v) * time.Second
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(f * float64(time.Second))
		}
	}
	return 0
}

// upstreamError reads an error answer of a chat wire.
func upstreamError(codec protocol.UpstreamCodec, resp *http.Response) error {
	return upstreamErrorWith(resp, codec.DecodeError)
}

// upstreamErrorWith reads an error answer with decode; the status and
// Retry-After health judges are set as on every sender's failure
// (upstream.StatusError).
func upstreamErrorWith(resp *http.Response, decode func(status int, body []byte) *ir.Error) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return upstream.StatusError(resp.StatusCode, resp.Header, decode(resp.StatusCode, body))
}

// upstreamBody is the body for the channel: the client's own bytes when the
// formats match (edited only as the codec's PassthroughBody says), a
// converted body otherwise.
func (c *call) upstreamBody(codec protocol.UpstreamCodec, model string) ([]byte, error) {
	if codec.Format() != c.sf.codec.Format() || c.redacted {
		if codec.Format() != c.sf.codec.Format() {
			if err := c.sf.codec.CheckConvertible(c.raw); err != nil {
				return nil, err
			}
		}
		req := *c.req
		req.Model = model
		if req.Stream {
			req.IncludeUsage = true
		}
		return codec.EncodeRequest(&req)
	}
	return c.normalizedPassthrough(c.sf.codec, model)
}

// normalizedPassthrough is the client's body for a channel of its own
// format, without the playground's gateway-only fields.
func (c *call) normalizedPassthrough(codec protocol.Codec, model string) ([]byte, error) {
	body := c.raw
	if c.sf.playground {
		var err error
		if body, err = sjson.DeleteBytes(body, "group"); err != nil {
			return nil, ir.BadRequest("invalid_body", "the request body is not a JSON object")
		}
	}
	return codec.PassthroughBody(body, model, c.req.Stream)
}
