package cohere

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Limits of the v2 chat request.
const (
	maxStopSequences = 5
	maxK             = 500
	minP, maxP       = 0.01, 0.99
	maxPenalty       = 1.0
)

// EncodeRequest builds the POST /v2/chat body.
//
// What the wire cannot carry is handled so:
//   - n > 1, files (documents other than images), images in tool results or
//     assistant turns, more than five stop sequences, a provider's own tools
//     and a tool_choice naming a tool that is not offered are refused with a
//     400 naming the field;
//   - a tool_choice naming one function offers only that function, with
//     tool_choice REQUIRED: the model must call it, as asked;
//   - p (top_p) is kept within 0.01–0.99, k within 0–500 and the
//     frequency and presence penalties within 0–1, the ranges the wire
//     accepts; a negative temperature becomes 0;
//   - parallel_tool_calls, user, metadata, the error flag of a tool result
//     and reasoning of earlier turns are dropped: hints and bookkeeping
//     with no v2 field, none of which changes what is asked;
//   - assistant text next to tool calls travels as the turn's tool_plan.
func (Codec) EncodeRequest(req *ir.Request) ([]byte, error) {
	if e := ir.SingleAnswer(req); e != nil {
		return nil, e
	}
	out := wireRequest{Model: req.Model, Stream: req.Stream, Seed: req.Seed}
	var err *ir.Error
	if out.Messages, err = encodeMessages(req); err != nil {
		return nil, err
	}
	if len(out.Messages) == 0 {
		return nil, badParam("messages", "invalid_value", "messages: at least one non-empty message is required")
	}
	if out.Tools, out.ToolChoice, err = encodeTools(req); err != nil {
		return nil, err
	}
	if err = encodeSampling(req, &out); err != nil {
		return nil, err
	}
	if out.ResponseFormat, err = encodeFormat(req.ResponseFormat); err != nil {
		return nil, err
	}
	out.Thinking = encodeThinking(req.Reasoning)
	return marshal(out)
}

func encodeSampling(req *ir.Request, out *wireRequest) *ir.Error {
	if m := req.MaxTokens; m != nil {
		if *m < 1 {
			return badParam("max_tokens", "invalid_value", "max_tokens: must be greater than or equal to 1")
		}
		out.MaxTokens = m
	}
	if len(req.Stop) > maxStopSequences {
		return badParam("stop", "invalid_value", "stop: the selected channel accepts at most %d stop sequences", maxStopSequences)
	}
	out.StopSequences = req.Stop
	if t := req.Temperature; t != nil {
		v := max(*t, 0)
		out.Temperature = &v
	}
	if p := req.TopP; p != nil {
		v := min(max(*p, minP), maxP)
		out.P = &v
	}
	if k := req.TopK; k != nil {
		v := min(max(*k, 0), maxK)
		out.K = &v
	}
	out.FrequencyPenalty = penalty(req.FrequencyPenalty)
	out.PresencePenalty = penalty(req.PresencePenalty)
	return nil
}

func penalty(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := min(max(*p, 0), maxPenalty)
	return &v
}

// encodeFormat asks for JSON; a schema rides along when one is given.
func encodeFormat(rf *ir.ResponseFormat) (*wireFormat, *ir.Error) {
	if rf == nil {
		return nil, nil
	}
	switch rf.Type {
	case "json_object":
		return &wireFormat{Type: "json_object"}, nil
	case "json_schema":
		f := &wireFormat{Type: "json_object"}
		if s := bytes.TrimSpace(rf.Schema); len(s) > 0 && string(s) != "null" {
			if !json.Valid(s) || s[0] != '{' {
				return nil, badParam("response_format", "invalid_value", "response_format: the JSON schema must be a JSON object")
			}
			f.JSONSchema = json.RawMessage(s)
		}
		return f, nil
	}
	return nil, nil
}

// encodeThinking asks reasoning models to think or not. An effort level has
// no token count on this wire; the model's own default budget applies.
func encodeThinking(r *ir.Reasoning) *wireThinking {
	switch {
	case r == nil:
		return nil
	case r.Disabled || r.Effort == "none":
		return &wireThinking{Type: "disabled"}
	case r.BudgetTokens > 0:
		return &wireThinking{Type: "enabled", TokenBudget: r.BudgetTokens}
	case r.Effort != "" || r.BudgetTokens < 0:
		return &wireThinking{Type: "enabled"}
	}
	return nil
}

func encodeTools(req *ir.Request) ([]wireTool, string, *ir.Error) {
	var tools []wireTool
	for i, t := range req.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if len(t.Native) > 0 {
			return nil, "", ir.NativeToolError(i, toolLabel(t))
		}
		if t.Name == "" {
			return nil, "", badParam(param+".name", "missing_required_parameter", "%s.name: field required", param)
		}
		params := t.Parameters
		if s := bytes.TrimSpace(params); len(s) == 0 || string(s) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(s) {
			return nil, "", badParam(param+".parameters", "invalid_value", "%s.parameters: not valid JSON", param)
		}
		tools = append(tools, wireTool{Type: "function", Function: wireToolDef{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	c := req.ToolChoice
	if c == nil || len(tools) == 0 {
		return tools, "", nil
	}
	switch c.Mode {
	case ir.ToolChoiceNone:
		return tools, "NONE", nil
	case ir.ToolChoiceRequired:
		return tools, "REQUIRED", nil
	case ir.ToolChoiceTool:
		for _, t := range tools {
			if t.Function.Name == c.Name {
				return []wireTool{t}, "REQUIRED", nil
			}
		}
		return nil, "", badParam("tool_choice", "invalid_value", "tool_choice: names %q, which is not among the tools", c.Name)
	}
	return tools, "", nil
}

func toolLabel(t ir.Tool) string {
	if t.Name != "" {
		return t.Name
	}
	return gjson.GetBytes(t.Native, "type").String()
}

// encodeMessages turns the system prompt and the turns into v2 messages in
// order. Tool results become tool turns of their own, wherever the IR
// carried them.
func encodeMessages(req *ir.Request) ([]wireMessage, *ir.Error) {
	var out []wireMessage
	if len(req.System) > 0 {
		text, err := onlyText(req.System, "system")
		if err != nil {
			return nil, err
		}
		if text != "" {
			out = append(out, wireMessage{Role: "system", Content: text})
		}
	}
	for i, m := range req.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		var msgs []wireMessage
		var err *ir.Error
		switch m.Role {
		case ir.RoleSystem:
			var text string
			if text, err = onlyText(m.Parts, param+".content"); err == nil && text != "" {
				msgs = []wireMessage{{Role: "system", Content: text}}
			}
		case ir.RoleUser, ir.RoleTool:
			msgs, err = userTurn(m.Parts, param)
		case ir.RoleAssistant:
			msgs, err = assistantTurn(m.Parts, param)
		default:
			err = badParam(param+".role", "invalid_value", "%s.role: unsupported role %q", param, m.Role)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
	}
	return out, nil
}

// onlyText joins text parts; anything else is refused.
func onlyText(parts []ir.Part, param string) (string, *ir.Error) {
	var b strings.Builder
	for j, p := range parts {
		switch p.Kind {
		case ir.PartText:
			if b.Len() > 0 && p.Text != "" {
				b.WriteString("\n\n")
			}
			b.WriteString(p.Text)
		default:
			pp := fmt.Sprintf("%s[%d]", param, j)
			return "", badParam(pp, "invalid_value", "%s: this part can only hold text", pp)
		}
	}
	return b.String(), nil
}

// userTurn is a user (or tool) message: its tool results first, each a tool
// turn, then a user turn with the rest.
func userTurn(parts []ir.Part, param string) ([]wireMessage, *ir.Error) {
	var out []wireMessage
	var items []wireContent
	for j, p := range parts {
		pp := fmt.Sprintf("%s.content[%d]", param, j)
		switch p.Kind {
		case ir.PartToolResult:
			m, err := toolTurn(p.ToolResult, pp)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		case ir.PartText:
			if p.Text != "" {
				items = append(items, textItem(p.Text))
			}
		case ir.PartImage:
			it, err := imageItem(p.Media, pp)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		case ir.PartThinking, ir.PartRedactedThinking:
			// Reasoning has no place in a user turn; nothing is lost.
		default:
			return nil, badParam(pp, "unsupported_content", "%s: content of kind %q cannot be sent to the selected channel", pp, p.Kind)
		}
	}
	if len(items) > 0 {
		out = append(out, wireMessage{Role: "user", Content: contentValue(items)})
	}
	return out, nil
}

func toolTurn(r *ir.ToolResult, param string) (wireMessage, *ir.Error) {
	if r == nil {
		return wireMessage{}, badParam(param, "invalid_value", "%s: a tool result is required", param)
	}
	if r.CallID == "" {
		return wireMessage{}, badParam(param+".tool_call_id", "missing_required_parameter", "%s.tool_call_id: field required", param)
	}
	items := []wireContent{}
	for k, p := range r.Content {
		switch p.Kind {
		case ir.PartText:
			items = append(items, textItem(p.Text))
		default:
			pp := fmt.Sprintf("%s.content[%d]", param, k)
			return wireMessage{}, badParam(pp, "unsupported_content", "%s: a tool result sent to the selected channel can only hold text", pp)
		}
	}
	var content any = items
	switch len(items) {
	case 0:
		content = ""
	case 1:
		content = *items[0].Text
	}
	return wireMessage{Role: "tool", ToolCallID: r.CallID, Content: content}, nil
}

func assistantTurn(parts []ir.Part, param string) ([]wireMessage, *ir.Error) {
	var texts []string
	var calls []wireToolCall
	for j, p := range parts {
		pp := fmt.Sprintf("%s.content[%d]", param, j)
		switch p.Kind {
		case ir.PartText:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		case ir.PartToolCall:
			c, err := toolCall(p.ToolCall, pp)
			if err != nil {
				return nil, err
			}
			calls = append(calls, c)
		case ir.PartThinking, ir.PartRedactedThinking:
			// Earlier reasoning is not needed to go on and other providers'
			// reasoning means nothing here.
		default:
			return nil, badParam(pp, "unsupported_content", "%s: content of kind %q cannot be sent to the selected channel in an assistant turn", pp, p.Kind)
		}
	}
	switch {
	case len(calls) > 0:
		return []wireMessage{{Role: "assistant", ToolCalls: calls, ToolPlan: strings.Join(texts, "\n\n")}}, nil
	case len(texts) == 1:
		return []wireMessage{{Role: "assistant", Content: texts[0]}}, nil
	case len(texts) > 1:
		items := make([]wireContent, len(texts))
		for i, t := range texts {
			items[i] = textItem(t)
		}
		return []wireMessage{{Role: "assistant", Content: items}}, nil
	}
	return nil, nil
}

func toolCall(c *ir.ToolCall, param string) (wireToolCall, *ir.Error) {
	if c == nil {
		return wireToolCall{}, badParam(param, "invalid_value", "%s: a tool call is required", param)
	}
	if c.ID == "" {
		return wireToolCall{}, badParam(param+".id", "missing_required_parameter", "%s.id: tool call id required", param)
	}
	if c.Name == "" {
		return wireToolCall{}, badParam(param+".name", "missing_required_parameter", "%s.name: tool name required", param)
	}
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}"
	}
	if !gjson.Valid(args) || !gjson.Parse(args).IsObject() {
		return wireToolCall{}, badParam(param+".arguments", "invalid_value", "%s.arguments: must be a JSON object", param)
	}
	return wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: args}}, nil
}

func textItem(s string) wireContent { return wireContent{Type: "text", Text: &s} }

// imageItem sends an image by its URL, or inline data as a data URI.
func imageItem(m *ir.Media, param string) (wireContent, *ir.Error) {
	if m == nil {
		return wireContent{}, badParam(param, "invalid_value", "%s: the image is missing", param)
	}
	url := m.URL
	if url == "" && m.Data != "" {
		mime := m.MIMEType
		if mime == "" {
			mime = "image/png"
		}
		url = "data:" + mime + ";base64," + m.Data
	}
	if url == "" {
		return wireContent{}, badParam(param, "invalid_value", "%s: the image has neither a URL nor data", param)
	}
	detail := ""
	switch m.Detail {
	case "auto", "low", "high":
		detail = m.Detail
	}
	return wireContent{Type: "image_url", ImageURL: &wireImageURL{URL: url, Detail: detail}}, nil
}

// contentValue is a plain string for a single text item, else the list.
func contentValue(items []wireContent) any {
	if len(items) == 1 && items[0].Type == "text" {
		return *items[0].Text
	}
	return items
}

func badParam(param, code, format string, args ...any) *ir.Error {
	return &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// marshal encodes without HTML escaping, which only bloats model text.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
