package relay

import (
	"context"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// moderationsEndpoint is POST /v1/moderations: the model is optional and
// defaults to the configured moderation model, which the upstream then sees
// as the body's model; billed per call, plus input
// tokens when the model has a token price.
func moderationsEndpoint() *endpoint {
	return &endpoint{
		name: "moderations", path: "/v1/moderations", dialect: protocol.OpenAI,
		guard:        []string{"input"},
		defaultModel: func(rl *Relay) string { return rl.moderationDefault() },
		validate: func(c *epCall) error {
			if !c.in.has("input") {
				return missingParam("input")
			}
			return nil
		},
		estimate: inputTokensCharge,
		bill:     func(c *epCall, body []byte) charge { return inputTokensCharge(c) },
	}
}

func inputTokensCharge(c *epCall) charge {
	u := ir.Usage{}
	if c.price.HasTokenPrice() {
		u.InputTokens = countTexts(c.model, gjson.GetBytes(c.in.raw, "input"))
	}
	return tokensPlusCall(c.price, u)
}

// rerankEndpoint is POST /v1/rerank: a non-empty query and a non-empty list
// of documents are required. Channels serve it at /v1/rerank or at their
// settings.rerank_path; the answer (with its document indices) is passed
// through. Billed per call plus usage.total_tokens (or counted tokens) when
// the model has a token price.
func rerankEndpoint() *endpoint {
	return &endpoint{
		name: "rerank", path: "/v1/rerank", dialect: protocol.OpenAI,
		guard:    []string{"query", "documents"},
		validate: validateRerank,
		estimate: func(c *epCall) charge { return tokensPlusCall(c.price, ir.Usage{InputTokens: c.rerankTokens()}) },
		bill: func(c *epCall, body []byte) charge {
			u, ok := answerUsage(body)
			if !ok {
				u = ir.Usage{InputTokens: c.rerankTokens()}
			}
			return tokensPlusCall(c.price, u)
		},
		send: func(c *epCall, ctx context.Context, ch *routing.Channel, t upstream.Target) (*http.Request, func(), error) {
			path := "/v1/rerank"
			if p := t.Setting("rerank_path"); p != "" {
				path = "/" + strings.TrimLeft(p, "/")
			}
			return c.sendTo(ctx, t, path, nil)
		},
	}
}

func validateRerank(c *epCall) error {
	in := &c.in
	q := gjson.GetBytes(in.raw, "query")
	switch {
	case !q.Exists() || q.Type == gjson.Null:
		return missingParam("query")
	case q.Type != gjson.String:
		return invalidParam("query", "must be a string")
	case strings.TrimSpace(q.Str) == "":
		return invalidParam("query", "must not be empty")
	}
	d := gjson.GetBytes(in.raw, "documents")
	switch {
	case !d.Exists() || d.Type == gjson.Null:
		return missingParam("documents")
	case !d.IsArray():
		return invalidParam("documents", "must be an array")
	case len(d.Array()) == 0:
		return invalidParam("documents", "must not be empty")
	}
	return nil
}

func (c *epCall) rerankTokens() int {
	if !c.price.HasTokenPrice() {
		return 0
	}
	return countTexts(c.model, gjson.GetBytes(c.in.raw, "query")) + countTexts(c.model, gjson.GetBytes(c.in.raw, "documents"))
}

// searchEndpoint is POST /v1/alpha/search: only channels whose settings say
// supports_search may serve it; billed per call plus any reported tokens.
func searchEndpoint() *endpoint {
	return &endpoint{
		name: "search", path: "/v1/alpha/search", dialect: protocol.OpenAI,
		guard: []string{"query", "messages", "input"},
		filter: func(rl *Relay, ch *routing.Channel) bool {
			return rl.servesPath(ch, "/v1/chat/completions") && supportsSearch(ch)
		},
		estimate: func(c *epCall) charge { return tokensPlusCall(c.price, ir.Usage{}) },
		bill: func(c *epCall, body []byte) charge {
			u, _ := answerUsage(body)
			return tokensPlusCall(c.price, u)
		},
		noChannel: noSearchChannel,
	}
}

func supportsSearch(ch *routing.Channel) bool {
	v, _ := ch.Settings["supports_search"].(bool)
	return v
}

// noSearchChannel tells a model without any search-capable channel (a
// client error: asking again will not help) from search channels that are
// all cooling down (try later).
func noSearchChannel(c *epCall) error {
	chat := func(ch *routing.Channel) bool { return c.rl.servesPath(ch, "/v1/chat/completions") }
	if c.plannable(chat) {
		return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "search_not_supported", Param: "model",
			Message: "no channel serving model " + c.model + " supports search"}
	}
	return &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "no_available_channel",
		Message: "no search channel is available for model " + c.model + " right now"}
}
