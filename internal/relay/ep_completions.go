package relay

import (
	"context"
	"math"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// completionsEndpoint is POST /v1/completions, regular and streaming, billed
// by tokens.
func completionsEndpoint() *endpoint {
	return &endpoint{
		name: "completions", path: "/v1/completions", dialect: protocol.OpenAI,
		guard: []string{"prompt", "suffix"}, answer: []string{"choices"},
		validate: func(c *epCall) error {
			if !c.in.has("prompt") {
				return missingParam("prompt")
			}
			if _, err := tokenLimit(c.in.raw, "max_tokens"); err != nil {
				return err
			}
			if n := gjson.GetBytes(c.in.raw, "n"); n.Exists() && n.Type != gjson.Null && (n.Type != gjson.Number || n.Float() != math.Trunc(n.Float()) || n.Int() < 1 || n.Int() > 128) {
				return invalidParam("n", "must be an integer from 1 to 128")
			}
			return nil
		},
		estimate: estimateCompletion,
		bill: func(c *epCall, body []byte) charge {
			u, ok := answerUsage(body)
			if !ok {
				u = c.countedUsage(completionText(body))
			}
			return tokensPlusCall(c.price, u)
		},
		send:  sendCompletion,
		relay: relayCompletion,
	}
}

func estimateCompletion(c *epCall) charge {
	maxOut := c.rl.Options.DefaultCompletionTokens
	if v, _ := tokenLimit(c.in.raw, "max_tokens"); v > 0 {
		maxOut = v
	}
	if n := gjson.GetBytes(c.in.raw, "n").Int(); n > 1 {
		maxOut *= int(n) // both bounded by validate: at most 2^31 × 128
	}
	return tokensPlusCall(c.price, ir.Usage{InputTokens: c.promptTokens(), OutputTokens: maxOut})
}

func (c *epCall) promptTokens() int {
	return countTexts(c.model, gjson.GetBytes(c.in.raw, "prompt"))
}

// countedUsage is the usage of an answer whose upstream reported none.
func (c *epCall) countedUsage(output string) ir.Usage {
	return ir.Usage{InputTokens: c.promptTokens(), OutputTokens: countTexts(c.model, gjson.Result{Type: gjson.String, Str: output})}
}

// completionText joins the choices' text for counting.
func completionText(body []byte) string {
	var b strings.Builder
	for _, ch := range gjson.GetBytes(body, "choices.#.text").Array() {
		b.WriteString(ch.String())
	}
	return b.String()
}

// sendCompletion asks a streaming upstream for usage so the stream can be
// billed from it; the usage-only chunk is dropped again for clients that
// did not ask for it.
func sendCompletion(c *epCall, ctx context.Context, _ *routing.Channel, t upstream.Target) (*http.Request, func(), error) {
	var set map[string]any
	if c.stream && !c.clientWantsUsage() {
		set = map[string]any{"stream_options.include_usage": true}
	}
	req, done, err := c.sendTo(ctx, t, "/v1/completions", set)
	if err == nil && c.stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, done, err
}

func (c *epCall) clientWantsUsage() bool {
	return gjson.GetBytes(c.in.raw, "stream_options.include_usage").Bool()
}

func relayCompletion(c *epCall, ch *routing.Channel, resp *http.Response) error {
	if !c.stream || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return relayPassthrough(c, ch, resp)
	}
	return c.relayCompletionStream(resp)
}

// relayCompletionStream passes the events through the one stream pump,
// reading usage as they pass; the first event is read before the client sees
// anything, so a stream that breaks at once can still go to the next channel.
func (c *epCall) relayCompletionStream(resp *http.Response) error {
	sp := c.rl.Completions
	s := newSink(c.w, c, false)
	tally := &streamTally{answer: keptAnswer{sp: sp}}
	// Completion chunks end as chat chunks do ([DONE] or a finish_reason)
	// and fail in the same OpenAI dialect (CONTRACT §22).
	chat := c.rl.Codecs[protocol.OpenAI]
	ends, _ := chat.(protocol.StreamEndSniffer)
	step, bill := c.windowed(&passStep{sp: sp, sink: s, tally: tally, dropUsageOnly: !c.clientWantsUsage(), ends: ends},
		completionDelta, nil, dialectFail(s, chat), c.tokensCharge)
	return c.relayEvents(streamTail{body: resp.Body, sink: s, step: step, tally: tally, broken: failEvent(s, chat)}, c.promptTokens, bill)
}
