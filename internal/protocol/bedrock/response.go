package bedrock

import (
	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// DecodeResponse reads a Converse answer: output.message.content, the
// stop reason and usage. Converse answers carry no id and no model name;
// the relay fills the model, the client's encoder makes an id. Block kinds
// the IR cannot hold (images, citations, guard content) are skipped.
func (Codec) DecodeResponse(body []byte) (*ir.Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, malformed("upstream response is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, malformed("upstream response is not a JSON object")
	}
	msg := root.Get("output.message")
	if !msg.IsObject() {
		if m := root.Get("message"); m.Type == gjson.String {
			return nil, errorFor(502, "", m.Str)
		}
		return nil, malformed("upstream response has no output.message")
	}
	resp := &ir.Response{
		StopReason: stopFromWire(root.Get("stopReason").String()),
		Usage:      usageFrom(root.Get("usage")),
		Content:    []ir.Part{},
	}
	for _, b := range msg.Get("content").Array() {
		if p, ok := responsePart(b); ok {
			resp.Content = append(resp.Content, p)
		}
	}
	if resp.StopReason == ir.StopSequence {
		resp.StopSequence = root.Get("additionalModelResponseFields.stop_sequence").String()
	}
	return resp, nil
}

func responsePart(b gjson.Result) (ir.Part, bool) {
	if t := b.Get("text"); t.Type == gjson.String {
		return ir.Part{Kind: ir.PartText, Text: t.Str}, true
	}
	if tu := b.Get("toolUse"); tu.IsObject() {
		args := "{}"
		if in := tu.Get("input"); in.IsObject() {
			args = compact(in.Raw)
		}
		return ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{
			ID: tu.Get("toolUseId").String(), Name: tu.Get("name").String(), Arguments: args,
		}}, true
	}
	if rc := b.Get("reasoningContent"); rc.IsObject() {
		if rt := rc.Get("reasoningText"); rt.IsObject() {
			return ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{
				Text: rt.Get("text").String(), Signature: rt.Get("signature").String(),
			}}, true
		}
		if rd := rc.Get("redactedContent"); rd.Type == gjson.String && rd.Str != "" {
			return ir.Part{Kind: ir.PartRedactedThinking, Thinking: &ir.Thinking{Redacted: rd.Str}}, true
		}
	}
	return ir.Part{}, false
}

// usageFrom reads a TokenUsage object; cache tokens join the input count.
func usageFrom(u gjson.Result) ir.Usage {
	read, write := count(u, "cacheReadInputTokens"), count(u, "cacheWriteInputTokens")
	return ir.Usage{
		InputTokens:      count(u, "inputTokens") + read + write,
		OutputTokens:     count(u, "outputTokens"),
		CacheReadTokens:  read,
		CacheWriteTokens: write,
	}
}

// maxCount bounds one reported count, so a hostile report can neither go
// negative nor overflow when counts are added.
const maxCount = 1 << 40

func count(u gjson.Result, name string) int {
	return int(min(max(u.Get(name).Int(), 0), maxCount))
}

// stopFromWire maps Converse's stopReason. A guardrail or content filter
// is a content filter; a full context window is a length limit; output the
// model could not form is an error stop.
func stopFromWire(s string) ir.StopReason {
	switch s {
	case "tool_use":
		return ir.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return ir.StopMaxTokens
	case "stop_sequence":
		return ir.StopSequence
	case "guardrail_intervened", "content_filtered":
		return ir.StopContentFilter
	case "malformed_model_output", "malformed_tool_use":
		return ir.StopError
	}
	return ir.StopEnd
}
