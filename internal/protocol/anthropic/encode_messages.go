package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// reqEncoder folds IR messages into the strictly alternating user/assistant
// turns the format requires: system messages move to the system field, tool
// messages become tool_result blocks of a user turn, and consecutive turns of
// one role merge, with tool results kept ahead of other user content.
type reqEncoder struct {
	system []textBlock
	list   []*turn
}

type turn struct {
	role    string
	results []any
	others  []any
}

func (e *reqEncoder) addSystem(parts []ir.Part) *ir.Error {
	for j, p := range parts {
		if p.Kind != ir.PartText {
			return badParam(idx("system", j), codeInvalidVal, "%s: the system prompt can only hold text", idx("system", j))
		}
		if p.Text != "" {
			e.system = append(e.system, textBlock{Type: "text", Text: p.Text, CacheControl: p.CacheControl})
		}
	}
	return nil
}

// systemValue is a plain string when that loses nothing, else text blocks.
func (e *reqEncoder) systemValue() any {
	switch {
	case len(e.system) == 0:
		return nil
	case len(e.system) == 1 && e.system[0].CacheControl == nil:
		return e.system[0].Text
	}
	return e.system
}

func (e *reqEncoder) messages(msgs []ir.Message) *ir.Error {
	for i, m := range msgs {
		param := idx("messages", i)
		switch m.Role {
		case ir.RoleSystem:
			if err := e.addSystem(m.Parts); err != nil {
				return badParam(param, codeInvalidVal, "%s: system messages can only hold text", param)
			}
		case ir.RoleTool:
			results, err := toolResultBlocks(m.Parts, param)
			if err != nil {
				return err
			}
			e.add("user", results, nil)
		case ir.RoleUser, ir.RoleAssistant:
			blocks, err := contentBlocks(m.Parts, param, m.Role)
			if err != nil {
				return err
			}
			e.add(string(m.Role), nil, blocks)
		default:
			return badParam(param+".role", codeInvalidVal, "%s.role: unsupported role %q", param, m.Role)
		}
	}
	return nil
}

func (e *reqEncoder) add(role string, results, others []any) {
	if len(results) == 0 && len(others) == 0 {
		return
	}
	if n := len(e.list); n > 0 && e.list[n-1].role == role {
		last := e.list[n-1]
		last.results = append(last.results, results...)
		last.others = append(last.others, others...)
		return
	}
	e.list = append(e.list, &turn{role: role, results: results, others: others})
}

func (e *reqEncoder) turns() []wireMessage {
	out := make([]wireMessage, 0, len(e.list))
	for _, t := range e.list {
		blocks := append(t.results, t.others...)
		if t.role == "assistant" {
			blocks = thinkingFirst(blocks)
		}
		var content any = blocks
		if tb, ok := blocks[0].(textBlock); ok && len(blocks) == 1 && tb.CacheControl == nil {
			content = tb.Text
		}
		out = append(out, wireMessage{Role: t.role, Content: content})
	}
	return out
}

// thinkingFirst moves thinking blocks to the front of an assistant turn, in
// their order: the API refuses a turn whose reasoning follows its text or
// calls, which is how other formats may hold it (a signature that came on
// a function call, a reasoning item after a message).
func thinkingFirst(blocks []any) []any {
	out := make([]any, 0, len(blocks))
	for _, b := range blocks {
		switch b.(type) {
		case thinkingBlock, redactedBlock:
			out = append(out, b)
		}
	}
	if len(out) == 0 || len(out) == len(blocks) {
		return blocks
	}
	for _, b := range blocks {
		switch b.(type) {
		case thinkingBlock, redactedBlock:
		default:
			out = append(out, b)
		}
	}
	return out
}

func toolResultBlocks(parts []ir.Part, param string) ([]any, *ir.Error) {
	var out []any
	for j, p := range parts {
		pp := idx(param+".content", j)
		if p.Kind != ir.PartToolResult || p.ToolResult == nil {
			return nil, badParam(pp, codeInvalidVal, "%s: a tool message must carry a tool result", pp)
		}
		r := p.ToolResult
		if r.CallID == "" {
			return nil, badParam(pp+".tool_call_id", codeMissing, "%s.tool_call_id: field required", pp)
		}
		content, err := toolResultContent(r.Content, pp)
		if err != nil {
			return nil, err
		}
		out = append(out, toolResultBlock{
			Type: "tool_result", ToolUseID: sanitizeToolID(r.CallID), Content: content,
			IsError: r.IsError, CacheControl: p.CacheControl,
		})
	}
	return out, nil
}

// toolResultContent is a plain string for a single uncached text part, the
// common case, else content blocks.
func toolResultContent(parts []ir.Part, param string) (any, *ir.Error) {
	if len(parts) == 1 && parts[0].Kind == ir.PartText && parts[0].CacheControl == nil {
		return parts[0].Text, nil
	}
	blocks, err := contentBlocks(parts, param, ir.RoleUser)
	if err != nil || len(blocks) == 0 {
		return nil, err
	}
	return blocks, nil
}

func contentBlocks(parts []ir.Part, param string, role ir.Role) ([]any, *ir.Error) {
	var out []any
	for j, p := range parts {
		b, err := contentBlock(p, idx(param+".content", j), role)
		if err != nil {
			return nil, err
		}
		if b != nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// contentBlock returns nil for parts that are dropped: empty text (the
// upstream refuses empty text blocks, and other formats send "" next to tool
// calls) and thinking without a signature (the upstream only accepts its own
// signed reasoning back, and earlier reasoning is not needed to continue).
func contentBlock(p ir.Part, param string, role ir.Role) (any, *ir.Error) {
	switch p.Kind {
	case ir.PartText:
		if p.Text == "" {
			return nil, nil
		}
		return textBlock{Type: "text", Text: p.Text, CacheControl: p.CacheControl}, nil
	case ir.PartImage, ir.PartFile:
		return mediaBlockFor(p, param)
	case ir.PartToolCall:
		if role != ir.RoleAssistant || p.ToolCall == nil {
			return nil, badParam(param, codeInvalidVal, "%s: tool calls belong in assistant messages", param)
		}
		return toolUseFor(p, param)
	case ir.PartThinking:
		if p.Thinking == nil || p.Thinking.Signature == "" || role != ir.RoleAssistant {
			return nil, nil
		}
		return thinkingBlock{Type: "thinking", Thinking: p.Thinking.Text, Signature: p.Thinking.Signature}, nil
	case ir.PartRedactedThinking:
		if p.Thinking == nil || p.Thinking.Redacted == "" || role != ir.RoleAssistant {
			return nil, nil
		}
		return redactedBlock{Type: "redacted_thinking", Data: p.Thinking.Redacted}, nil
	}
	return nil, badParam(param, codeInvalidVal, "%s: content of kind %q cannot be sent to this upstream", param, p.Kind)
}

func toolUseFor(p ir.Part, param string) (any, *ir.Error) {
	c := p.ToolCall
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}"
	}
	if !gjson.Valid(args) || !gjson.Parse(args).IsObject() {
		return nil, badParam(param+".arguments", codeInvalidVal, "%s.arguments: must be a JSON object", param)
	}
	id := c.ID
	if id == "" {
		return nil, badParam(param+".id", codeMissing, "%s.id: tool call id required", param)
	}
	return toolUseBlock{
		Type: "tool_use", ID: sanitizeToolID(id), Name: c.Name,
		Input: json.RawMessage(compactRaw(args)), CacheControl: p.CacheControl,
	}, nil
}

// mediaBlockFor builds image and document blocks. Data URLs (how
// OpenAI-style clients inline images) become base64 sources; a plain-text
// document goes back to a text source.
func mediaBlockFor(p ir.Part, param string) (any, *ir.Error) {
	m := p.Media
	if m == nil {
		return nil, badParam(param, codeMissing, "%s: media missing", param)
	}
	b := mediaBlock{Type: "image", CacheControl: p.CacheControl}
	if p.Kind == ir.PartFile {
		b.Type, b.Title = "document", m.Name
	}
	mime, data := m.MIMEType, m.Data
	if data == "" && strings.HasPrefix(m.URL, "data:") {
		var ok bool
		if mime, data, ok = ir.ParseDataURL(m.URL); !ok {
			return nil, badParam(param+".url", codeInvalidVal, "%s.url: malformed data URL", param)
		}
	}
	switch {
	case data != "":
		if mime == "" {
			mime = ir.SniffImageType(data)
		}
		if mime == "" {
			return nil, badParam(param+".mime_type", codeMissing, "%s: media type required for inline data", param)
		}
		b.Source = mediaSource{Type: "base64", MediaType: mime, Data: data}
		if b.Type == "document" && mime == "text/plain" {
			if raw, err := base64.StdEncoding.DecodeString(data); err == nil {
				b.Source = mediaSource{Type: "text", MediaType: mime, Data: string(raw)}
			}
		}
	case m.URL != "":
		b.Source = mediaSource{Type: "url", URL: m.URL}
	default:
		return nil, badParam(param, codeMissing, "%s: media needs a URL or data", param)
	}
	return b, nil
}
