package relay

import (
	"context"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// respCall is one POST /v1/responses (or /v1/responses/compact) call. It
// runs the generic endpoint stages; per channel it either relays the body
// to a channel speaking the Responses API or converts it for a chat channel.
type respCall struct {
	// follow is set when a background response is to be followed after
	// the handler is done with the call.
	follow *bgFollow
	*epCall
	compact bool
	// input is the counted input of the request for the model counted.
	input   int
	counted string
	// dec is the request converted for chat channels; decErr says why it
	// could not be, which limits the call to native channels.
	dec    protocol.ResponsesConversion
	decErr error
	// dropped names the hosted tools the attempt's conversion left out
	// (none when a native channel serves); the usage row records them.
	dropped []string
	// redacted: a guardrail rewrote the body.
	redacted bool
	// cache is the call's standing with the response cache; usage is what
	// the call is billed for once settled.
	cache responseCache
	usage ir.Usage
	// resume is the stream failover of a converted stream (nil without).
	resume *resumer
}

func (rl *Relay) responsesCreate(w http.ResponseWriter, r *http.Request) {
	rl.serveResponses(w, r, false)
}

func (rl *Relay) responsesCompact(w http.ResponseWriter, r *http.Request) {
	rl.serveResponses(w, r, true)
}

func (rl *Relay) serveResponses(w http.ResponseWriter, r *http.Request, compact bool) {
	rc := &respCall{compact: compact}
	rc.epCall = rl.newEpCall(rc.endpoint(), w, r)
	rc.rowOther = func(o *logOther) {
		o.DroppedTools = rc.dropped
		if rc.resume != nil {
			rc.resume.row(o, rc.usage)
		}
	}
	rc.cache = responseCache{core: &rc.callCore, surface: rc}
	h := rc.epCall.hooks()
	h.authenticate = rc.keyAuth(bearerKey)
	h.offer, h.read, h.noChannel = rc.offer, rc.read, func(error) error { return rc.noChannel() }
	h.filter, h.guard = rc.servable, rc.guard
	if !compact {
		h.session, h.cached = rc.session, rc.lookupCache
	}
	rc.callCore.serve(h)
	if rc.follow != nil {
		rl.startFollowing(rc.follow)
	}
}

func (rc *respCall) endpoint() *endpoint {
	ep := &endpoint{name: "responses", path: "/v1/responses", dialect: protocol.OpenAI,
		estimate: rc.estimate, bill: rc.billNative, send: rc.send, relay: rc.relayKeeping,
		guard: []string{"instructions", "input"}, answer: []string{"output"}}
	if rc.compact {
		ep.name, ep.path = "responses_compact", "/v1/responses/compact"
	}
	return ep
}

// offer reads the body and lets a task plugin serve the model through the
// std_responses host protocol.
func (rc *respCall) offer() (bool, error) {
	raw, e := readLimited(rc.w, rc.r, rc.rl.Options.BodyLimit)
	if e != nil {
		return false, e
	}
	rc.in.raw = raw
	// Checked here, once, before a plugin reads a model other than this one.
	if err := jsonObject(raw); err != nil {
		return false, err
	}
	model := gjson.GetBytes(raw, "model").String()
	// A batch line is billed by its batch, never by a plugin's task.
	return !rc.compact && rc.line == nil && model != "" && rc.rl.Hosts != nil && rc.rl.Hosts.ServeProtocol(rc.w, rc.r, "std_responses", model, raw), nil
}

// read validates the body offer read and checked, and converts it for
// chat channels.
func (rc *respCall) read() error {
	raw := rc.in.raw
	rc.model = gjson.GetBytes(raw, "model").String()
	rc.stream = !rc.compact && gjson.GetBytes(raw, "stream").Bool()
	if rc.model == "" {
		return missingParam("model")
	}
	if _, err := tokenLimit(raw, "max_output_tokens"); err != nil {
		return err
	}
	if !rc.compact {
		rc.dec, rc.decErr = rc.rl.ResponsesAPI.DecodeRequest(raw)
	}
	return nil
}

// session is a Responses call's cache affinity session: the ids its body
// names or the header, else the prefix of the conversation as converted
// for chat channels. A request that could not be converted and names no id
// has no session.
func (rc *respCall) session() (routing.Session, bool) {
	src := routing.SessionSources{Header: rc.r.Header.Get(SessionHeader)}
	ids := gjson.GetManyBytes(rc.in.raw, "prompt_cache_key", "metadata.user_id", "user")
	src.PromptCacheKey, src.MetadataUserID, src.User = ids[0].String(), ids[1].String(), ids[2].String()
	var req *ir.Request
	if rc.decErr == nil && rc.dec != nil {
		req = rc.dec.Call()
	}
	if id, _ := src.First(); id == "" && req == nil {
		return routing.Session{}, false
	}
	return routing.SessionKey(rc.principal.UserID, rc.principal.Group, rc.model, src, req), true
}

// servable: native channels always; chat channels only when the request
// could be converted (never for compaction, which only the Responses API
// has).
func (rc *respCall) servable(ch *routing.Channel) bool {
	if rc.rl.nativeResponses(ch) {
		return true
	}
	return !rc.compact && rc.decErr == nil && rc.rl.chatResponses(ch)
}

// noChannel tells a request only native channels could serve (a client
// error naming what needs them) from channels that are all cooling down.
func (rc *respCall) noChannel() error {
	if rc.plannable(rc.rl.chatResponses) {
		if rc.compact {
			return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "unsupported", Param: "model",
				Message: "the channel serving model " + rc.model + " speaks only chat and cannot compact responses"}
		}
		if rc.decErr != nil {
			return rc.decErr
		}
	}
	return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "no_available_channel",
		Message: "no channel is available for model " + rc.model + " on " + rc.ep.name + " right now"}
}

// nativeResponses reports whether a channel speaks the Responses API:
// OpenAI-type channels unless settings.responses is false or "chat", other
// OpenAI-compatible types only when it is true or "native".
func (rl *Relay) nativeResponses(ch *routing.Channel) bool {
	if !rl.servesPath(ch, "/v1/responses") {
		return false
	}
	switch v := ch.Settings["responses"].(type) {
	case bool:
		return v
	case string:
		return v == "native" || v == "true"
	}
	return ch.Type == upstream.TypeOpenAI
}

// chatResponses reports whether a channel can serve Responses calls by
// conversion to its chat format.
func (rl *Relay) chatResponses(ch *routing.Channel) bool {
	return rl.hasChatWire(ch) && !rl.nativeResponses(ch)
}

// estimate reserves the counted input and the most output the call may
// produce.
func (rc *respCall) estimate(c *epCall) charge {
	maxOut := rc.rl.Options.DefaultCompletionTokens
	if v, _ := tokenLimit(c.in.raw, "max_output_tokens"); v > 0 {
		maxOut = v
	}
	if rc.compact {
		maxOut = rc.inputTokens()
	}
	return tokensPlusCall(c.price, ir.Usage{InputTokens: rc.inputTokens(), OutputTokens: maxOut})
}

// inputTokens counts the text of instructions and input (messages, tool
// outputs, call arguments, custom tool inputs) for the reservation and for
// upstreams that report no usage.
func (rc *respCall) inputTokens() int {
	// Counted once per model: the estimate, a converted stream and the
	// settlement all need it, and a fallback model may count differently.
	if rc.counted != rc.model || rc.model == "" {
		rc.input, rc.counted = rc.countInput(), rc.model
	}
	return rc.input
}

func (rc *respCall) countInput() int {
	var texts []string
	collectTexts(gjson.GetBytes(rc.in.raw, "instructions"), &texts)
	collectTexts(gjson.GetBytes(rc.in.raw, "input"), &texts)
	n := 0
	for _, t := range texts {
		n += countTexts(rc.model, gjson.Result{Type: gjson.String, Str: t})
	}
	return n
}

// collectTexts gathers the strings of a Responses input that the model
// reads; ids, types and roles are left out.
func collectTexts(v gjson.Result, out *[]string) {
	switch {
	case v.Type == gjson.String:
		*out = append(*out, v.Str)
	case v.IsArray():
		for _, e := range v.Array() {
			collectTexts(e, out)
		}
	case v.IsObject():
		for _, key := range []string{"text", "content", "arguments", "input", "output", "refusal", "summary"} {
			collectTexts(v.Get(key), out)
		}
	}
}

// billNative prices a Responses answer relayed untouched: its usage, or
// counted tokens when it reports none.
func (rc *respCall) billNative(c *epCall, body []byte) charge {
	u, ok := rc.rl.ResponsesAPI.SniffUsage(body)
	if !ok {
		u = ir.Usage{InputTokens: rc.inputTokens(), OutputTokens: countTexts(rc.model, gjson.Result{Type: gjson.String, Str: outputTexts(body)})}
	}
	return tokensPlusCall(c.price, u)
}

func outputTexts(body []byte) string {
	var texts []string
	collectTexts(gjson.GetBytes(body, "output"), &texts)
	s := ""
	for _, t := range texts {
		s += t
	}
	return s
}

func (rc *respCall) send(c *epCall, ctx context.Context, ch *routing.Channel, t upstream.Target) (*http.Request, func(), error) {
	if rc.rl.nativeResponses(ch) {
		rc.dropped = nil
		req, done, err := c.sendTo(ctx, t, c.ep.path, nil)
		if err == nil && c.stream {
			req.Header.Set("Accept", "text/event-stream")
		}
		return req, done, err
	}
	a, _ := rc.rl.adapters(ch.Type)
	codec := a.Codec(t)
	rc.dropped = rc.dec.DroppedTools()
	req := *rc.dec.Call()
	req.Model = t.Model
	req.IncludeUsage = req.Stream
	body, err := codec.EncodeRequest(&req)
	if err != nil {
		return nil, nil, err
	}
	hreq, err := a.Chat(ctx, t, body, req.Stream, c.r.Header)
	if err != nil {
		return nil, nil, adapterFailed(err)
	}
	return hreq, func() {}, nil
}

func (rc *respCall) relay(c *epCall, ch *routing.Channel, resp *http.Response) error {
	if !rc.rl.nativeResponses(ch) {
		a, t, err := rc.rl.target(ch, rc.model)
		if err != nil {
			return err
		}
		codec := a.Codec(t)
		if rc.stream {
			return rc.relayConvertedStream(codec, frames(a), resp)
		}
		return rc.relayConverted(codec, resp)
	}
	if rc.stream && isEventStream(resp) {
		return rc.relayNativeStream(ch, resp)
	}
	body, err := readAnswer(resp)
	if err != nil {
		return err
	}
	if !rc.compact {
		id := rc.rl.ResponsesAPI.ResponseID(body)
		rc.remember(ch, id)
		if isPending(body) && gjson.GetBytes(rc.in.raw, "background").Bool() && rc.followBackground(ch, id, body) {
			return nil
		}
	}
	if blocked := c.guardAnswerBody(&body); blocked != nil {
		c.answerRefused(blocked, rc.billNative(c, body))
		return nil
	}
	rc.noteNative(body)
	bill := rc.billNative(c, body)
	rc.usage = bill.usage
	c.answer("application/json", body, bill)
	return nil
}

// remember indexes a response the channel stored, for GET by id.
func (rc *respCall) remember(ch *routing.Channel, id string) {
	if rc.rl.Responses == nil || id == "" || gjson.GetBytes(rc.in.raw, "store").Type == gjson.False {
		return
	}
	rc.rl.Responses.Remember(context.WithoutCancel(rc.r.Context()), id, ch.ID, rc.principal.UserID)
}
