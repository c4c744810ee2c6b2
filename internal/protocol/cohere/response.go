package cohere

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// DecodeResponse reads a v2 chat answer: message.content (text and
// thinking items), the tool plan (as text ahead of the calls),
// message.tool_calls, finish_reason and usage. Citations have no IR form
// and are dropped.
func (Codec) DecodeResponse(body []byte) (*ir.Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, badUpstream(errors.New("the answer is not JSON"))
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, badUpstream(errors.New("the answer is not a JSON object"))
	}
	msg := root.Get("message")
	if !msg.IsObject() {
		return nil, badUpstream(errors.New("the answer has no message"))
	}
	out := &ir.Response{ID: root.Get("id").String()}
	if plan := msg.Get("tool_plan").String(); plan != "" {
		out.Content = append(out.Content, ir.Part{Kind: ir.PartText, Text: plan})
	}
	content := msg.Get("content")
	if content.Type == gjson.String && content.Str != "" {
		out.Content = append(out.Content, ir.Part{Kind: ir.PartText, Text: content.Str})
	}
	for _, it := range content.Array() {
		if !it.IsObject() {
			continue
		}
		switch it.Get("type").String() {
		case "text":
			if t := it.Get("text").String(); t != "" {
				out.Content = append(out.Content, ir.Part{Kind: ir.PartText, Text: t})
			}
		case "thinking":
			if t := it.Get("thinking").String(); t != "" {
				out.Content = append(out.Content, ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: t}})
			}
		}
	}
	called := false
	for i, c := range msg.Get("tool_calls").Array() {
		call := ir.ToolCall{ID: c.Get("id").String(), Name: c.Get("function.name").String(), Arguments: c.Get("function.arguments").String()}
		if call.Name == "" {
			continue
		}
		if call.ID == "" {
			call.ID = syntheticID(out.ID, i)
		}
		if strings.TrimSpace(call.Arguments) == "" {
			call.Arguments = "{}"
		}
		called = true
		out.Content = append(out.Content, ir.Part{Kind: ir.PartToolCall, ToolCall: &call})
	}
	out.StopReason = stopFromWire(root.Get("finish_reason").String(), called)
	out.Usage = usageFrom(root.Get("usage"))
	return out, nil
}

// syntheticID names a tool call the upstream left without an id, so the
// client can still answer it.
func syntheticID(respID string, i int) string {
	if respID == "" {
		respID = "call"
	}
	return respID + "_" + strconv.Itoa(i)
}

// stopFromWire maps finish_reason to the IR. An answer that called tools
// stopped for them whatever the reason says, as clients expect.
func stopFromWire(s string, called bool) ir.StopReason {
	switch s {
	case "MAX_TOKENS", "ERROR_LIMIT":
		return ir.StopMaxTokens
	case "STOP_SEQUENCE":
		return ir.StopSequence
	case "TOOL_CALL":
		return ir.StopToolUse
	case "ERROR", "TIMEOUT":
		return ir.StopError
	case "ERROR_TOXIC":
		return ir.StopContentFilter
	}
	if called {
		return ir.StopToolUse
	}
	return ir.StopEnd
}

// usageFrom reads usage: the billed units when given, else the model's own
// token counts (usage.tokens). Counts arrive as JSON numbers that may
// carry a fraction ("37.0"); broken or negative counts read as zero.
func usageFrom(u gjson.Result) ir.Usage {
	if !u.IsObject() {
		return ir.Usage{}
	}
	// billed_units is what Cohere charges for; tokens also counts the
	// preamble Cohere adds to every prompt, which it does not bill.
	for _, path := range []string{"billed_units", "tokens"} {
		in, out := count(u.Get(path+".input_tokens")), count(u.Get(path+".output_tokens"))
		if in > 0 || out > 0 {
			return ir.Usage{InputTokens: in, OutputTokens: out}
		}
	}
	return ir.Usage{}
}

func count(v gjson.Result) int {
	if v.Type != gjson.Number || !(v.Num > 0) || v.Num > 1<<40 {
		return 0
	}
	return int(v.Num)
}

func badUpstream(cause error) *ir.Error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response",
		Message: "the upstream returned a malformed answer", Retry: ir.RetryNext, Cause: cause}
}
