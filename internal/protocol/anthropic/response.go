package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

type wireResponse struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Role         string    `json:"role"`
	Content      []any     `json:"content"`
	Model        string    `json:"model"`
	StopReason   string    `json:"stop_reason"`
	StopSequence *string   `json:"stop_sequence"`
	Usage        wireUsage `json:"usage"`
}

// DecodeResponse reads an upstream message object. Block types the IR cannot
// hold (server tool traffic, future additions) are skipped: the answer's
// text and tool calls are what the client needs.
func (Codec) DecodeResponse(body []byte) (*ir.Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, upstreamMalformed("upstream response is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, upstreamMalformed("upstream response is not a JSON object")
	}
	if root.Get("type").Str == "error" {
		return nil, errorFromBody(502, root)
	}
	resp := &ir.Response{
		ID:           root.Get("id").String(),
		Model:        root.Get("model").String(),
		StopReason:   stopFromWire(root.Get("stop_reason").String()),
		StopSequence: root.Get("stop_sequence").String(),
		Usage:        usageFromGJSON(root.Get("usage")).toIR(),
		Content:      []ir.Part{},
	}
	for _, b := range root.Get("content").Array() {
		if p, ok := responsePart(b); ok {
			resp.Content = append(resp.Content, p)
		}
	}
	return resp, nil
}

func responsePart(b gjson.Result) (ir.Part, bool) {
	switch b.Get("type").Str {
	case "text":
		return ir.Part{Kind: ir.PartText, Text: b.Get("text").String()}, true
	case "thinking":
		return ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{
			Text: b.Get("thinking").String(), Signature: b.Get("signature").String(),
		}}, true
	case "redacted_thinking":
		return ir.Part{Kind: ir.PartRedactedThinking, Thinking: &ir.Thinking{Redacted: b.Get("data").String()}}, true
	case "tool_use":
		args := "{}"
		if in := b.Get("input"); in.IsObject() {
			args = compactRaw(in.Raw)
		}
		return ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{
			ID: b.Get("id").String(), Name: b.Get("name").String(), Arguments: args,
		}}, true
	}
	return ir.Part{}, false
}

// EncodeResponse renders a message object. All four usage counters are
// always present, as clients read them unconditionally.
func (Codec) EncodeResponse(resp *ir.Response) ([]byte, error) {
	out := wireResponse{
		ID: resp.ID, Type: "message", Role: "assistant", Model: resp.Model,
		Content:    []any{},
		StopReason: stopToWire(resp.StopReason),
		Usage:      usageToWire(resp.Usage),
	}
	if out.ID == "" {
		out.ID = newID("msg_")
	}
	if resp.StopReason == ir.StopSequence && resp.StopSequence != "" {
		seq := resp.StopSequence
		out.StopSequence = &seq
	}
	for _, p := range resp.Content {
		if b := responseBlock(p); b != nil {
			out.Content = append(out.Content, b)
		}
	}
	return marshal(out)
}

// responseBlock renders one answer part; parts an answer cannot hold
// (media, tool results) are skipped.
func responseBlock(p ir.Part) any {
	switch p.Kind {
	case ir.PartText:
		return textBlock{Type: "text", Text: p.Text}
	case ir.PartThinking:
		if p.Thinking == nil {
			return nil
		}
		return thinkingBlock{Type: "thinking", Thinking: p.Thinking.Text, Signature: p.Thinking.Signature}
	case ir.PartRedactedThinking:
		if p.Thinking == nil {
			return nil
		}
		return redactedBlock{Type: "redacted_thinking", Data: p.Thinking.Redacted}
	case ir.PartToolCall:
		if p.ToolCall == nil {
			return nil
		}
		id := p.ToolCall.ID
		if id == "" {
			id = newID("toolu_")
		}
		return toolUseBlock{Type: "tool_use", ID: id, Name: p.ToolCall.Name, Input: inputObject(p.ToolCall.Arguments)}
	}
	return nil
}

// inputObject turns IR arguments into the object tool_use.input requires.
// Models of other providers occasionally emit arguments that are not a JSON
// object; the answer is already generated, so an empty object is the only
// way to keep the message well-formed.
func inputObject(args string) json.RawMessage {
	args = strings.TrimSpace(args)
	if args == "" || !gjson.Valid(args) || !gjson.Parse(args).IsObject() {
		return json.RawMessage("{}")
	}
	return json.RawMessage(compactRaw(args))
}
