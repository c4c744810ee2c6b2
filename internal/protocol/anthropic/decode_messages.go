package anthropic

import (
	"encoding/base64"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// decodeMessages turns the alternating user/assistant turns into IR messages.
// tool_result blocks of a user turn become RoleTool messages, one per result
// and in order, placed before the rest of that turn's content, which is how
// formats with a dedicated tool role expect them.
func decodeMessages(root gjson.Result, req *ir.Request) *ir.Error {
	ms := root.Get("messages")
	if !ms.Exists() || ms.Type == gjson.Null {
		return badParam("messages", codeMissing, "messages: field required")
	}
	if !ms.IsArray() {
		return badParam("messages", codeInvalidType, "messages: expected an array")
	}
	arr := ms.Array()
	if len(arr) == 0 {
		return badParam("messages", codeInvalidVal, "messages: must contain at least one message")
	}
	d := &msgDecoder{toolNames: map[string]string{}}
	for i, m := range arr {
		if err := d.message(m, idx("messages", i)); err != nil {
			return err
		}
	}
	req.Messages = d.out
	return nil
}

type msgDecoder struct {
	out []ir.Message
	// toolNames remembers each tool_use id's name so results can carry it
	// for formats that match results to calls by function name.
	toolNames map[string]string
}

func (d *msgDecoder) message(m gjson.Result, param string) *ir.Error {
	if err := wantObject(m, param); err != nil {
		return err
	}
	role, err := wantString(m.Get("role"), param+".role")
	if err != nil {
		return err
	}
	c := m.Get("content")
	switch role {
	case "user", "assistant":
	case "system":
		return d.system(c, param)
	default:
		// The API's own words: clients match them to fall back.
		return badParam(param+".role", codeInvalidVal, "messages: Unexpected role %q. The Messages API accepts a top-level `system` parameter, not %q as an input message role.", role, role)
	}
	switch {
	case c.Type == gjson.String:
		d.out = append(d.out, ir.Message{Role: ir.Role(role), Parts: []ir.Part{{Kind: ir.PartText, Text: c.Str}}})
		return nil
	case !c.IsArray():
		return badParam(param+".content", codeInvalidType, "%s.content: expected a string or an array of content blocks", param)
	}
	blocks := c.Array()
	msg := ir.Message{Role: ir.Role(role), Parts: []ir.Part{}}
	for j, b := range blocks {
		bp := idx(param+".content", j)
		if err := d.block(b, bp, &msg); err != nil {
			return err
		}
	}
	// A user turn that only carried tool results has nothing left to say.
	if len(msg.Parts) > 0 || len(blocks) == 0 || role == "assistant" {
		d.out = append(d.out, msg)
	}
	return nil
}

// system reads a system turn inside the conversation (mid-conversation
// instructions): text only, kept at its place as an IR system message, which
// each encoder places as its wire allows.
func (d *msgDecoder) system(c gjson.Result, param string) *ir.Error {
	msg := ir.Message{Role: ir.RoleSystem}
	switch {
	case c.Type == gjson.String:
		msg.Parts = []ir.Part{{Kind: ir.PartText, Text: c.Str}}
	case c.IsArray():
		for j, b := range c.Array() {
			bp := idx(param+".content", j)
			if err := wantObject(b, bp); err != nil {
				return err
			}
			if typ := b.Get("type").String(); typ != "text" {
				return badParam(bp+".type", codeInvalidVal, "%s.type: Input should be 'text'", bp)
			}
			text, err := wantString(b.Get("text"), bp+".text")
			if err != nil {
				return err
			}
			msg.Parts = append(msg.Parts, ir.Part{Kind: ir.PartText, Text: text, CacheControl: rawOrNil(b.Get("cache_control"))})
		}
	default:
		return badParam(param+".content", codeInvalidType, "%s.content: expected a string or an array of content blocks", param)
	}
	d.out = append(d.out, msg)
	return nil
}

func (d *msgDecoder) block(b gjson.Result, param string, msg *ir.Message) *ir.Error {
	if err := wantObject(b, param); err != nil {
		return err
	}
	typ, err := wantString(b.Get("type"), param+".type")
	if err != nil {
		return err
	}
	if isServerToolBlock(typ) {
		// Server-side tool traffic (web search and the like) runs inside the
		// provider; the IR has no form for it. Dropping it keeps passthrough
		// working and only loses that context when converting.
		return nil
	}
	if typ == "tool_result" {
		if msg.Role != ir.RoleUser {
			return badParam(param+".type", codeInvalidVal, "%s.type: tool_result blocks belong in user turns", param)
		}
		return d.toolResult(b, param)
	}
	part, err := d.contentBlock(b, typ, param, msg.Role)
	if err != nil {
		return err
	}
	msg.Parts = append(msg.Parts, part)
	return nil
}

func isServerToolBlock(typ string) bool {
	return typ == "server_tool_use" || typ == "mcp_tool_use" ||
		(typ != "tool_result" && strings.HasSuffix(typ, "_tool_result"))
}

// contentBlock decodes the blocks allowed in message content. Thinking and
// tool_use only come from the assistant; images and documents from the user.
func (d *msgDecoder) contentBlock(b gjson.Result, typ, param string, role ir.Role) (ir.Part, *ir.Error) {
	var p ir.Part
	var err *ir.Error
	assistantOnly := typ == "tool_use" || typ == "thinking" || typ == "redacted_thinking"
	if assistantOnly && role != ir.RoleAssistant {
		return p, badParam(param+".type", codeInvalidVal, "%s.type: %s blocks belong in assistant turns", param, typ)
	}
	switch typ {
	case "text":
		p.Kind = ir.PartText
		p.Text, err = wantString(b.Get("text"), param+".text")
	case "image":
		p.Kind = ir.PartImage
		p.Media, err = decodeSource(b.Get("source"), param+".source", true)
	case "document":
		p.Kind = ir.PartFile
		p.Media, err = decodeSource(b.Get("source"), param+".source", false)
		if err == nil {
			p.Media.Name = b.Get("title").String()
		}
	case "tool_use":
		p, err = d.toolUse(b, param)
	case "thinking":
		p, err = decodeThinkingBlock(b, param)
	case "redacted_thinking":
		p.Kind = ir.PartRedactedThinking
		var data string
		data, err = wantString(b.Get("data"), param+".data")
		p.Thinking = &ir.Thinking{Redacted: data}
	default:
		return p, badParam(param+".type", codeInvalidVal, "%s.type: unsupported content block type %q", param, typ)
	}
	if err != nil {
		return p, err
	}
	p.CacheControl = rawOrNil(b.Get("cache_control"))
	return p, nil
}

func (d *msgDecoder) toolUse(b gjson.Result, param string) (ir.Part, *ir.Error) {
	id, err := wantString(b.Get("id"), param+".id")
	if err != nil {
		return ir.Part{}, err
	}
	name, err := wantString(b.Get("name"), param+".name")
	if err != nil {
		return ir.Part{}, err
	}
	args := "{}"
	if in := b.Get("input"); in.Exists() && in.Type != gjson.Null {
		if err := wantObject(in, param+".input"); err != nil {
			return ir.Part{}, err
		}
		args = compactRaw(in.Raw)
	}
	d.toolNames[id] = name
	return ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: id, Name: name, Arguments: args}}, nil
}

func decodeThinkingBlock(b gjson.Result, param string) (ir.Part, *ir.Error) {
	text, err := wantString(b.Get("thinking"), param+".thinking")
	if err != nil {
		return ir.Part{}, err
	}
	sig, err := optString(b.Get("signature"), param+".signature")
	if err != nil {
		return ir.Part{}, err
	}
	return ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: text, Signature: sig}}, nil
}

// toolResult appends one RoleTool message. Its content may be a string or
// text/image/document blocks.
func (d *msgDecoder) toolResult(b gjson.Result, param string) *ir.Error {
	id, err := wantString(b.Get("tool_use_id"), param+".tool_use_id")
	if err != nil {
		return err
	}
	isErr, err := optBool(b.Get("is_error"), param+".is_error")
	if err != nil {
		return err
	}
	res := &ir.ToolResult{CallID: id, Name: d.toolNames[id], IsError: isErr}
	c := b.Get("content")
	switch {
	case !c.Exists() || c.Type == gjson.Null:
	case c.Type == gjson.String:
		res.Content = []ir.Part{{Kind: ir.PartText, Text: c.Str}}
	case c.IsArray():
		for j, cb := range c.Array() {
			cp := idx(param+".content", j)
			if err := wantObject(cb, cp); err != nil {
				return err
			}
			typ := cb.Get("type").Str
			if typ != "text" && typ != "image" && typ != "document" {
				return badParam(cp+".type", codeInvalidVal, "%s.type: unsupported tool result content type %q", cp, typ)
			}
			part, err := d.contentBlock(cb, typ, cp, ir.RoleUser)
			if err != nil {
				return err
			}
			res.Content = append(res.Content, part)
		}
	default:
		return badParam(param+".content", codeInvalidType, "%s.content: expected a string or an array of content blocks", param)
	}
	d.out = append(d.out, ir.Message{Role: ir.RoleTool, Parts: []ir.Part{{
		Kind: ir.PartToolResult, ToolResult: res, CacheControl: rawOrNil(b.Get("cache_control")),
	}}})
	return nil
}

// decodeSource reads an image or document source. A plain-text document
// source is re-encoded to base64 because IR media data is always base64.
func decodeSource(s gjson.Result, param string, image bool) (*ir.Media, *ir.Error) {
	if err := wantObject(s, param); err != nil {
		return nil, err
	}
	typ, err := wantString(s.Get("type"), param+".type")
	if err != nil {
		return nil, err
	}
	switch {
	case typ == "base64":
		mt, err := wantString(s.Get("media_type"), param+".media_type")
		if err != nil {
			return nil, err
		}
		data, err := wantString(s.Get("data"), param+".data")
		if err != nil {
			return nil, err
		}
		return &ir.Media{MIMEType: mt, Data: data}, nil
	case typ == "url":
		u, err := wantString(s.Get("url"), param+".url")
		if err != nil {
			return nil, err
		}
		return &ir.Media{URL: u}, nil
	case typ == "text" && !image:
		data, err := wantString(s.Get("data"), param+".data")
		if err != nil {
			return nil, err
		}
		return &ir.Media{MIMEType: "text/plain", Data: base64.StdEncoding.EncodeToString([]byte(data))}, nil
	}
	return nil, badParam(param+".type", codeInvalidVal, "%s.type: unsupported source type %q", param, typ)
}
