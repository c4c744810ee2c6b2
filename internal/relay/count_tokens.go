package relay

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// messagesCountTokens serves POST /v1/messages/count_tokens, which coding
// agents call before each turn. A channel on the messages wire whose
// provider counts tokens answers it; otherwise, or when that channel cannot
// answer, the gateway counts with its tokenizer. It is never billed.
func (rl *Relay) messagesCountTokens(w http.ResponseWriter, r *http.Request) {
	c := newCore(rl, w, r, "count_tokens", protocol.Anthropic)
	if err := c.countTokens(); err != nil {
		c.fail(err)
	}
}

// countTokens authenticates, reads and checks the model exactly as an
// admitted call does (on the routing snapshot it pins), then answers from
// the provider or the tokenizer. Nothing is reserved: counting is free.
func (c *callCore) countTokens() error {
	codec := c.rl.Codecs[protocol.Anthropic]
	raw, err := c.admitCount(messagesKey, func(raw []byte) (string, error) {
		model := gjson.GetBytes(raw, "model")
		if model.Type != gjson.String || model.Str == "" {
			return "", missingParam("model")
		}
		return model.Str, nil
	})
	if err != nil {
		return err
	}
	req, err := decodeCountBody(codec, raw)
	if err != nil {
		return err
	}
	if err := c.checkModel(); err != nil {
		return err
	}
	if body, status, ok := c.countAtProvider(raw); ok {
		writeRaw(c.w, status, body)
		return nil
	}
	n := max(countPrompt(c.model, req)-3, 0) // the reply primer is not part of the prompt
	writeRaw(c.w, http.StatusOK, []byte(`{"input_tokens":`+strconv.Itoa(n)+`}`))
	return nil
}

// admitCount authenticates a token-counting call and reads its body and
// model (model reads it from the body) as every surface does.
func (c *callCore) admitCount(key func(*http.Request) string, model func(raw []byte) (string, error)) ([]byte, error) {
	p, err := c.rl.Keys.Authenticate(c.r.Context(), key(c.r))
	if err != nil {
		return nil, err
	}
	c.principal = p
	raw, e := readLimited(c.w, c.r, c.rl.Options.BodyLimit)
	if e != nil {
		return nil, e
	}
	if _, dup := protocol.CheckMembers(raw); dup != nil {
		return nil, dup // the model read below must be the one forwarded
	}
	if c.model, err = model(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// checkModel pins the routing snapshot and checks the model on it, after
// the body was decoded (a malformed body is a 400 first, as on chat).
func (c *callCore) checkModel() error {
	c.table = c.rl.Router.Table()
	return c.rl.modelOn(c.table, c.principal, c.model)
}

// decodeCountBody reads a count_tokens body with the messages decoder,
// which wants the max_tokens a count request does not carry.
func decodeCountBody(codec protocol.Codec, raw []byte) (*ir.Request, error) {
	if !gjson.GetBytes(raw, "max_tokens").Exists() {
		var err error
		if raw, err = sjson.SetBytes(raw, "max_tokens", 1); err != nil {
			return nil, ir.BadRequest("invalid_body", "the request body must be a JSON object")
		}
	}
	return codec.DecodeRequest(raw)
}

// countAtProvider asks the first routable channel of the model when it
// speaks the messages wire and counts tokens. ok is false when the gateway
// should count: no such channel, or one that failed for its own reasons
// (unreachable, or a status the channel's policy retries or disables on),
// which channel health hears like any attempt's failure. The provider's
// answer to a malformed request is the client's.
func (c *callCore) countAtProvider(raw []byte) ([]byte, int, bool) {
	rl := c.rl
	c.filter = rl.hasChatWire
	plan := c.table.Plan(rl.Router.Health, c.principal.Group, c.model, 1, c.filter)
	if len(plan) == 0 {
		return nil, 0, false
	}
	ch, ok := rl.pickKey(plan[0])
	if !ok {
		return nil, 0, false
	}
	a, t, err := rl.target(ch, c.model)
	tc, counts := a.(upstream.TokenCounter)
	if err != nil || !counts || a.Codec(t).Format() != protocol.Anthropic {
		return nil, 0, false
	}
	body, err := jsonWith(raw, "model", t.Model)
	if err != nil {
		return nil, 0, false
	}
	ctx, cancel := context.WithCancel(c.r.Context())
	defer cancel()
	req, err := tc.CountTokens(ctx, t, body, c.r.Header)
	if err != nil {
		return nil, 0, false
	}
	resp, err := rl.exchange(c.r.Context(), req, ch, cancel)
	if err != nil {
		if c.r.Context().Err() == nil {
			rl.Router.Health.Report(ch, ch.KeyIndex, ir.As(err))
		}
		rl.Logger.WarnContext(c.r.Context(), "count_tokens upstream unreachable; counted locally", "channel_id", ch.ID, "key_index", ch.KeyIndex, "err", err)
		return nil, 0, false
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, 0, false
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		rl.Router.Health.SucceededKey(ch, ch.KeyIndex)
		return out, resp.StatusCode, true
	}
	return out, resp.StatusCode, !rl.countFailed(c, a, t, ch, resp, out)
}

// countFailed judges a provider's refusal to count as any attempt's failure
// is judged (channel health, by the channel's policy) and reports whether it
// was the channel's: then the gateway counts. Any other refusal (a
// malformed request) is the provider's answer to the client.
func (rl *Relay) countFailed(c *callCore, a upstream.Adapter, t upstream.Target, ch *routing.Channel, resp *http.Response, body []byte) bool {
	e := upstream.DecodeAnswer(a, t, resp.StatusCode, resp.Header, body)
	e.Message = ch.Redact(e.Message)
	if !rl.Router.Health.Report(ch, ch.KeyIndex, e) {
		return false
	}
	rl.Logger.WarnContext(c.r.Context(), "count_tokens upstream failed; counted locally", "channel_id", ch.ID, "key_index", ch.KeyIndex, "status", resp.StatusCode)
	return true
}
