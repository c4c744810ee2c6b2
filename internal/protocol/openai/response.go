package openai

import (
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// decodeResponse reads the first choice of an upstream chat.completion.
func decodeResponse(body []byte) (*ir.Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, upstreamError("the upstream answered with a body that is not JSON")
	}
	root := gjson.ParseBytes(body)
	// Some compatible servers answer 200 with an error object.
	if e := root.Get("error"); present(e) && !root.Get("choices").Exists() {
		err := decodeError(502, body)
		err.Retry = ir.RetryNext
		return nil, err
	}
	choice := root.Get("choices.0")
	if !choice.IsObject() {
		return nil, upstreamError("the upstream answer has no choices")
	}
	msg := choice.Get("message")
	resp := &ir.Response{
		ID:         root.Get("id").String(),
		Model:      root.Get("model").String(),
		Created:    root.Get("created").Int(),
		Content:    responseParts(msg),
		StopReason: stopReason(choice.Get("finish_reason").String()),
	}
	if u := root.Get("usage"); u.IsObject() {
		resp.Usage = usageFrom(u)
	}
	// A few servers report "stop" even when the turn ends in tool calls;
	// clients of other formats need tool_use to run the tools.
	if resp.StopReason == ir.StopEnd && hasToolCall(resp.Content) {
		resp.StopReason = ir.StopToolUse
	}
	return resp, nil
}

func responseParts(msg gjson.Result) []ir.Part {
	var parts []ir.Part
	if text := reasoningText(msg); text != "" {
		parts = append(parts, ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: text}})
	}
	if text := responseText(msg.Get("content")); text != "" {
		parts = append(parts, ir.Part{Kind: ir.PartText, Text: text})
	}
	if r := msg.Get("refusal"); r.Type == gjson.String && r.Str != "" {
		parts = append(parts, ir.Part{Kind: ir.PartText, Text: r.Str})
	}
	for _, c := range msg.Get("tool_calls").Array() {
		fn := c.Get("function")
		if !fn.IsObject() {
			continue
		}
		id := c.Get("id").String()
		if id == "" {
			id = newID("call_")
		}
		// String() yields the raw text of an object, which some servers
		// send instead of the documented string.
		args := argumentsOrEmpty(fn.Get("arguments").String())
		call := &ir.ToolCall{ID: id, Name: fn.Get("name").String(), Arguments: args}
		parts = append(parts, ir.Part{Kind: ir.PartToolCall, ToolCall: call})
	}
	return parts
}

// responseText accepts the documented string and the part array a few
// compatible servers return.
func responseText(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	var b strings.Builder
	for _, p := range r.Array() {
		if t := p.Get("text"); t.Type == gjson.String {
			b.WriteString(t.Str)
		}
	}
	return b.String()
}

func hasToolCall(parts []ir.Part) bool {
	for _, p := range parts {
		if p.Kind == ir.PartToolCall {
			return true
		}
	}
	return false
}

// encodeResponse renders a chat.completion. Content kinds the format cannot
// show in an answer (images, redacted reasoning) are left out.
func encodeResponse(resp *ir.Response) ([]byte, error) {
	if resp == nil {
		return nil, ir.Errorf(500, ir.KindInternal, "internal_error", "no response to encode")
	}
	w := wireResponse{
		ID:      resp.ID,
		Object:  "chat.completion",
		Created: resp.Created,
		Model:   resp.Model,
		Choices: []wireChoice{{Message: responseMessage(resp.Content), FinishReason: finishReason(resp.StopReason)}},
		Usage:   toWireUsage(resp.Usage),
	}
	if w.ID == "" {
		w.ID = newID("chatcmpl-")
	}
	if w.Created == 0 {
		w.Created = time.Now().Unix()
	}
	return marshal(w)
}

func responseMessage(parts []ir.Part) wireMessage {
	msg := wireMessage{Role: "assistant"}
	var text, thinking strings.Builder
	for _, p := range parts {
		switch {
		case p.Kind == ir.PartText:
			text.WriteString(p.Text)
		case p.Kind == ir.PartThinking && p.Thinking != nil:
			thinking.WriteString(p.Thinking.Text)
		case p.Kind == ir.PartToolCall && p.ToolCall != nil:
			msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: p.ToolCall.ID, Type: "function",
				Function: wireCallFunction{Name: p.ToolCall.Name, Arguments: argumentsOrEmpty(p.ToolCall.Arguments)}})
		}
	}
	if text.Len() > 0 || len(msg.ToolCalls) == 0 {
		msg.Content = text.String()
	}
	msg.ReasoningContent = thinking.String()
	return msg
}
