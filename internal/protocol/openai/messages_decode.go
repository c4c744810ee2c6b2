package openai

import (
	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// messageDecoder walks the messages array. It remembers each assistant tool
// call's function name by id so tool results can carry the name too, which
// formats that match results by name need.
type messageDecoder struct {
	req       *ir.Request
	callNames map[string]string
}

func decodeMessages(root getter, req *ir.Request) error {
	r := root.Get("messages")
	if !present(r) {
		return missing("messages")
	}
	items, err := readArray(r, "messages")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return invalid("messages", "'messages' must not be empty")
	}
	d := messageDecoder{req: req, callNames: map[string]string{}}
	// Sized once: appending grows a long conversation's slice by copying
	// it some log2(n) times. System messages are hoisted and consecutive
	// tool messages gathered, so there are at most as many IR messages.
	req.Messages = make([]ir.Message, 0, len(items))
	for i, m := range items {
		if err := d.message(m, messageItem(i)); err != nil {
			return err
		}
	}
	if len(req.Messages) == 0 {
		req.Messages = nil // only system messages: none, as before
	}
	return nil
}

func (d *messageDecoder) message(m gjson.Result, param string) error {
	if _, err := readObject(m, param); err != nil {
		return err
	}
	role, err := memberString(m.Get("role"), param, "role")
	if err != nil {
		return err
	}
	name, err := memberString(m.Get("name"), param, "name")
	if err != nil {
		return err
	}
	switch role {
	case "system", "developer":
		return d.system(m, param)
	case "user":
		parts, err := decodeMessageContent(m, param, true)
		if err != nil {
			return err
		}
		d.req.Messages = append(d.req.Messages, ir.Message{Role: ir.RoleUser, Name: name, Parts: parts})
		return nil
	case "assistant":
		return d.assistant(m, param, name)
	case "tool":
		return d.tool(m, param, name)
	case "":
		return missing(field(param, "role"))
	}
	return invalid(field(param, "role"), "role '%s' is not supported; use system, developer, user, assistant or tool", role)
}

// system hoists every system and developer message into Request.System: the
// other formats only have a top-level system prompt, and hoisting here keeps
// all three encoders from each solving that.
func (d *messageDecoder) system(m gjson.Result, param string) error {
	parts, err := decodeMessageContent(m, param, false)
	if err != nil {
		return err
	}
	d.req.System = append(d.req.System, parts...)
	return nil
}

func (d *messageDecoder) assistant(m gjson.Result, param, name string) error {
	var parts []ir.Part
	if text := reasoningText(m); text != "" {
		parts = append(parts, ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: text}})
	}
	content, err := decodeMessageContent(m, param, false)
	if err != nil {
		return err
	}
	parts = append(parts, content...)
	calls, err := d.toolCalls(m.Get("tool_calls"), field(param, "tool_calls"))
	if err != nil {
		return err
	}
	parts = append(parts, calls...)
	d.req.Messages = append(d.req.Messages, ir.Message{Role: ir.RoleAssistant, Name: name, Parts: parts})
	return nil
}

// reasoningText reads the reasoning a client echoes back on an assistant
// turn: reasoning_content (DeepSeek and most compatible servers) or
// reasoning (OpenRouter and vLLM). Other types are ignored because neither
// field is part of the official schema.
func reasoningText(m gjson.Result) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		if r := m.Get(key); r.Type == gjson.String && r.Str != "" {
			return r.Str
		}
	}
	return ""
}

func (d *messageDecoder) toolCalls(r gjson.Result, param string) ([]ir.Part, error) {
	if !present(r) {
		return nil, nil
	}
	items, err := readArray(r, param)
	if err != nil {
		return nil, err
	}
	parts := make([]ir.Part, 0, len(items))
	for i, c := range items {
		call, err := decodeToolCall(c, item(param, i))
		if err != nil {
			return nil, err
		}
		d.callNames[call.ID] = call.Name
		parts = append(parts, ir.Part{Kind: ir.PartToolCall, ToolCall: call})
	}
	return parts, nil
}

func decodeToolCall(c gjson.Result, param string) (*ir.ToolCall, error) {
	if _, err := readObject(c, param); err != nil {
		return nil, err
	}
	id, err := optString(c, param, "id")
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, missing(field(param, "id"))
	}
	if typ, err := optString(c, param, "type"); err != nil {
		return nil, err
	} else if typ != "" && typ != "function" {
		return nil, invalid(field(param, "type"), "tool call type '%s' is not supported", typ)
	}
	fnParam := field(param, "function")
	fn := c.Get("function")
	if _, err := readObject(fn, fnParam); err != nil {
		return nil, err
	}
	name, err := optString(fn, fnParam, "name")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, missing(field(fnParam, "name"))
	}
	args, err := toolArguments(fn.Get("arguments"), field(fnParam, "arguments"))
	if err != nil {
		return nil, err
	}
	return &ir.ToolCall{ID: id, Name: name, Arguments: args}, nil
}

// toolArguments returns the arguments JSON text. Some clients send an object
// instead of the documented string; its text is the same thing. An empty
// value becomes "{}" so formats that need an object get one.
func toolArguments(r gjson.Result, param string) (string, error) {
	switch {
	case !present(r):
		return "{}", nil
	case r.IsObject():
		return r.Raw, nil
	case r.Type != gjson.String:
		return "", wrongType(param, "a string")
	case r.Str == "":
		return "{}", nil
	}
	return r.Str, nil
}

// tool turns a tool message into a ToolResult. Consecutive tool messages are
// gathered into one IR message, since formats that carry results in a user
// turn need all results of one assistant turn together.
func (d *messageDecoder) tool(m gjson.Result, param, name string) error {
	id, err := memberString(m.Get("tool_call_id"), param, "tool_call_id")
	if err != nil {
		return err
	}
	if id == "" {
		return missing(field(param, "tool_call_id"))
	}
	content, err := decodeMessageContent(m, param, true)
	if err != nil {
		return err
	}
	if name == "" {
		name = d.callNames[id]
	}
	part := ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: id, Name: name, Content: content}}
	msgs := d.req.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == ir.RoleTool {
		msgs[n-1].Parts = append(msgs[n-1].Parts, part)
		return nil
	}
	d.req.Messages = append(msgs, ir.Message{Role: ir.RoleTool, Parts: []ir.Part{part}})
	return nil
}

// messageItems are the parameter paths of the first messages, made once:
// every message's path is built whether or not an error names it.
var messageItems = func() (names [16]string) {
	for i := range names {
		names[i] = item("messages", i)
	}
	return names
}()

// messageItem is item("messages", i).
func messageItem(i int) string {
	if i < len(messageItems) {
		return messageItems[i]
	}
	return item("messages", i)
}

// decodeMessageContent decodes message m's content. Its parameter path
// (param.content) only names errors, and a string or absent content has
// none, so the path is built for the other forms alone.
func decodeMessageContent(m gjson.Result, param string, allowMedia bool) ([]ir.Part, error) {
	r := m.Get("content")
	if r.Type == gjson.String || !present(r) {
		return decodeContent(r, "", allowMedia)
	}
	return decodeContent(r, field(param, "content"), allowMedia)
}
