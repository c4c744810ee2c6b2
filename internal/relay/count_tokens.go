package relay

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// messagesCountTokens serves POST /v1/messages/count_tokens, which coding
// agents call before each turn. A channel on the messages wire whose
// provider counts tokens answers it; otherwise, or when that channel cannot
// answer, the gateway counts with its tokenizer. It is never billed.
func (rl *Relay) messagesCountTokens(w http.ResponseWriter, r *http.Request) {
	codec := rl.Codecs[protocol.Anthropic]
	p, raw, ok := rl.keyAndBody(w, r, codec, messagesKey)
	if !ok {
		return
	}
	model := gjson.GetBytes(raw, "model")
	if model.Type != gjson.String || model.Str == "" {
		writeError(w, codec, missingParam("model"))
		return
	}
	if !p.Allows(model.Str) {
		writeError(w, codec, &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "model_not_allowed", Message: "this API key may not use model " + model.Str})
		return
	}
	req, err := decodeCountBody(codec, raw)
	if err != nil {
		writeError(w, codec, ir.As(err))
		return
	}
	if body, status, ok := rl.countAtProvider(r, p, model.Str, raw); ok {
		writeRaw(w, status, body)
		return
	}
	n := max(countPrompt(model.Str, req)-3, 0) // the reply primer is not part of the prompt
	writeRaw(w, http.StatusOK, []byte(`{"input_tokens":`+strconv.Itoa(n)+`}`))
}

// keyAndBody authenticates a local call (token counting) and reads its
// body; false when it answered the client with the error in codec's
// dialect.
func (rl *Relay) keyAndBody(w http.ResponseWriter, r *http.Request, codec protocol.Codec, key func(*http.Request) string) (*auth.Principal, []byte, bool) {
	p, err := rl.Keys.Authenticate(r.Context(), key(r))
	if err != nil {
		writeError(w, codec, ir.As(err))
		return nil, nil, false
	}
	raw, e := readLimited(w, r, rl.Options.BodyLimit)
	if e != nil {
		writeError(w, codec, e)
		return nil, nil, false
	}
	return p, raw, true
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
// (unreachable, 5xx, credentials, rate limit). The provider's answer to a
// malformed request is the client's.
func (rl *Relay) countAtProvider(r *http.Request, p *auth.Principal, model string, raw []byte) ([]byte, int, bool) {
	plan := rl.Router.Plan(p.Group, model, 1, rl.hasChatWire)
	if len(plan) == 0 {
		return nil, 0, false
	}
	ch, ok := rl.pickKey(plan[0])
	if !ok {
		return nil, 0, false
	}
	a, t, err := rl.target(ch, model)
	tc, counts := a.(upstream.TokenCounter)
	if err != nil || !counts || a.Codec(t).Format() != protocol.Anthropic {
		return nil, 0, false
	}
	body, err := jsonWith(raw, "model", t.Model)
	if err != nil {
		return nil, 0, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), rl.Options.FirstByteTimeout)
	defer cancel()
	req, err := tc.CountTokens(ctx, t, body, r.Header)
	if err != nil {
		return nil, 0, false
	}
	resp, err := rl.Client.Do(req)
	if err != nil {
		return nil, 0, false
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || !countAnswerIsClients(resp.StatusCode) {
		rl.Logger.WarnContext(r.Context(), "count_tokens upstream failed; counted locally", "channel_id", ch.ID, "key_index", ch.KeyIndex, "status", resp.StatusCode)
		return nil, 0, false
	}
	return out, resp.StatusCode, true
}

// countAnswerIsClients: a success, or the provider refusing the request
// itself (400, 404, 413) rather than the gateway's account.
func countAnswerIsClients(status int) bool {
	switch {
	case status >= 200 && status < 300:
		return true
	case status == 401, status == 402, status == 403, status == 429:
		return false
	}
	return status >= 400 && status < 500
}
