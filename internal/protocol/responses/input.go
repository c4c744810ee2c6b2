package responses

import (
	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// inputDecoder turns input items into IR messages. It remembers function
// names by call id, because some chat formats match results to calls by
// name.
type inputDecoder struct {
	req       *ir.Request
	callNames map[string]string
	tools     *ToolMap
}

func decodeInput(root gjson.Result, req *ir.Request, tm *ToolMap) error {
	in := root.Get("input")
	switch {
	case !present(in):
		return missing("input")
	case in.Type == gjson.String:
		req.Messages = append(req.Messages, ir.Message{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: in.Str}}})
		return nil
	case !in.IsArray():
		return wrongType("input", "a string or an array of input items")
	}
	d := &inputDecoder{req: req, callNames: map[string]string{}, tools: tm}
	for i, it := range in.Array() {
		if err := d.item(it, item("input", i)); err != nil {
			return err
		}
	}
	if len(req.Messages) == 0 {
		return invalid("invalid_value", "input", "'input' must hold at least one message")
	}
	return nil
}

func (d *inputDecoder) item(it gjson.Result, param string) error {
	if !it.IsObject() {
		return wrongType(param, "an object")
	}
	typ, err := optString(it, param, "type")
	if err != nil {
		return err
	}
	switch typ {
	case "message", "":
		return d.message(it, param)
	case "function_call", "custom_tool_call":
		return d.functionCall(it, param, typ == "custom_tool_call")
	case "function_call_output", "custom_tool_call_output":
		return d.functionOutput(it, param)
	case "reasoning":
		return d.reasoning(it, param)
	case "web_search_call", "file_search_call", "tool_search_call", "tool_search_output", "image_generation_call":
		// Work a hosted tool did on an earlier turn: the tools are left
		// out for chat channels (decodeTools), so is their traffic.
		return nil
	}
	return unsupported(field(param, "type"), "'"+typ+"' has no chat equivalent")
}

func (d *inputDecoder) message(it gjson.Result, param string) error {
	role, err := optString(it, param, "role")
	if err != nil {
		return err
	}
	switch role {
	case "system", "developer":
		// Chat formats other than OpenAI only have one system prompt, so
		// system turns are hoisted, as the chat decoder does.
		parts, err := decodeContent(it.Get("content"), field(param, "content"), false)
		d.req.System = append(d.req.System, parts...)
		return err
	case "user":
		parts, err := decodeContent(it.Get("content"), field(param, "content"), true)
		if err == nil {
			d.req.Messages = append(d.req.Messages, ir.Message{Role: ir.RoleUser, Parts: parts})
		}
		return err
	case "assistant":
		parts, err := decodeContent(it.Get("content"), field(param, "content"), false)
		if err == nil {
			d.assistant(parts...)
		}
		return err
	case "":
		return missing(field(param, "role"))
	}
	return invalid("invalid_value", field(param, "role"), "'%s' must be user, assistant, system or developer", field(param, "role"))
}

// assistant appends to the current assistant turn: a reasoning item, the
// message and the function calls of one turn arrive as separate items.
func (d *inputDecoder) assistant(parts ...ir.Part) {
	msgs := d.req.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == ir.RoleAssistant {
		msgs[n-1].Parts = append(msgs[n-1].Parts, parts...)
		return
	}
	d.req.Messages = append(msgs, ir.Message{Role: ir.RoleAssistant, Parts: parts})
}

// functionCall reads a function_call, or a custom_tool_call whose raw input
// becomes its function's one argument. A namespaced call is named as its
// flattened function.
func (d *inputDecoder) functionCall(it gjson.Result, param string, custom bool) error {
	id, err := optString(it, param, "call_id")
	if err != nil {
		return err
	}
	name, err := optString(it, param, "name")
	if err != nil {
		return err
	}
	ns, err := optString(it, param, "namespace")
	if err != nil {
		return err
	}
	key := "arguments"
	if custom {
		key = "input"
	}
	args, err := optString(it, param, key)
	if err != nil {
		return err
	}
	switch {
	case id == "":
		return missing(field(param, "call_id"))
	case name == "":
		return missing(field(param, "name"))
	case custom:
		args = customArguments(args)
	case args == "":
		args = "{}"
	}
	if ns != "" {
		name = d.tools.flatten(ns, name)
	}
	d.callNames[id] = name
	d.assistant(ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: id, Name: name, Arguments: args}})
	return nil
}

// functionOutput gathers consecutive results into one tool turn, since
// formats that carry results in a user turn need them together.
func (d *inputDecoder) functionOutput(it gjson.Result, param string) error {
	id, err := optString(it, param, "call_id")
	if err != nil {
		return err
	}
	if id == "" {
		return missing(field(param, "call_id"))
	}
	out := it.Get("output")
	if !present(out) {
		return missing(field(param, "output"))
	}
	content, err := decodeContent(out, field(param, "output"), true)
	if err != nil {
		return err
	}
	part := ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: id, Name: d.callNames[id], Content: content}}
	msgs := d.req.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == ir.RoleTool {
		msgs[n-1].Parts = append(msgs[n-1].Parts, part)
		return nil
	}
	d.req.Messages = append(msgs, ir.Message{Role: ir.RoleTool, Parts: []ir.Part{part}})
	return nil
}

// reasoning takes back a reasoning item this gateway produced: its summary
// is the thinking text and encrypted_content carries the provider's
// signature, which the provider needs to accept the turn again.
func (d *inputDecoder) reasoning(it gjson.Result, param string) error {
	text, err := reasoningText(it, param, "summary")
	if err != nil {
		return err
	}
	if text == "" {
		// Reasoning in full (reasoning_text parts), when a client keeps it.
		if text, err = reasoningText(it, param, "content"); err != nil {
			return err
		}
	}
	sig, err := optString(it, param, "encrypted_content")
	if err != nil {
		return err
	}
	if text == "" && sig == "" {
		return nil
	}
	d.assistant(ir.Part{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: text, Signature: sig}})
	return nil
}

// reasoningText joins the text of a reasoning item's summary or content.
func reasoningText(it gjson.Result, param, key string) (string, error) {
	list := it.Get(key)
	if !present(list) {
		return "", nil
	}
	if !list.IsArray() {
		return "", wrongType(field(param, key), "an array")
	}
	text := ""
	for i, s := range list.Array() {
		t, err := optString(s, item(field(param, key), i), "text")
		if err != nil {
			return "", err
		}
		text += t
	}
	return text, nil
}

// decodeContent reads message content or a function output: a string or an
// array of content parts. media allows images and files (user turns and
// function outputs).
func decodeContent(c gjson.Result, param string, media bool) ([]ir.Part, error) {
	switch {
	case !present(c):
		return nil, missing(param)
	case c.Type == gjson.String:
		return []ir.Part{{Kind: ir.PartText, Text: c.Str}}, nil
	case !c.IsArray():
		return nil, wrongType(param, "a string or an array of content parts")
	}
	var parts []ir.Part
	for i, p := range c.Array() {
		part, err := decodePart(p, item(param, i), media)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return parts, nil
}

func decodePart(p gjson.Result, param string, media bool) (ir.Part, error) {
	if !p.IsObject() {
		return ir.Part{}, wrongType(param, "an object")
	}
	typ, err := optString(p, param, "type")
	if err != nil {
		return ir.Part{}, err
	}
	switch typ {
	case "input_text", "output_text", "text", "summary_text":
		s, err := optString(p, param, "text")
		return ir.Part{Kind: ir.PartText, Text: s}, err
	case "refusal":
		s, err := optString(p, param, "refusal")
		return ir.Part{Kind: ir.PartText, Text: s}, err
	case "input_image", "input_file":
		if !media {
			return ir.Part{}, invalid("invalid_value", field(param, "type"), "'%s' is only allowed in user content", field(param, "type"))
		}
		if typ == "input_image" {
			return decodeImage(p, param)
		}
		return decodeFile(p, param)
	case "":
		return ir.Part{}, missing(field(param, "type"))
	}
	return ir.Part{}, unsupported(field(param, "type"), "'"+typ+"' has no chat equivalent")
}

func decodeImage(p gjson.Result, param string) (ir.Part, error) {
	if present(p.Get("file_id")) {
		return ir.Part{}, unsupported(field(param, "file_id"), "refers to an uploaded file")
	}
	u, err := optString(p, param, "image_url")
	if err != nil {
		return ir.Part{}, err
	}
	if u == "" {
		return ir.Part{}, missing(field(param, "image_url"))
	}
	m, err := mediaFromURL(u, field(param, "image_url"))
	if err != nil {
		return ir.Part{}, err
	}
	if m.Detail, err = optString(p, param, "detail"); err != nil {
		return ir.Part{}, err
	}
	if m.Detail == "auto" {
		m.Detail = ""
	}
	return ir.Part{Kind: ir.PartImage, Media: m}, nil
}

func decodeFile(p gjson.Result, param string) (ir.Part, error) {
	if present(p.Get("file_id")) {
		return ir.Part{}, unsupported(field(param, "file_id"), "refers to an uploaded file")
	}
	name, err := optString(p, param, "filename")
	if err != nil {
		return ir.Part{}, err
	}
	data, err := optString(p, param, "file_data")
	if err != nil {
		return ir.Part{}, err
	}
	addr, err := optString(p, param, "file_url")
	if err != nil {
		return ir.Part{}, err
	}
	var m *ir.Media
	switch {
	case data != "":
		m, err = fileData(data, field(param, "file_data"))
	case addr != "":
		m, err = mediaFromURL(addr, field(param, "file_url"))
	default:
		return ir.Part{}, missing(field(param, "file_data"))
	}
	if err != nil {
		return ir.Part{}, err
	}
	m.Name = name
	return ir.Part{Kind: ir.PartFile, Media: m}, nil
}

// fileData accepts a data URL or bare base64 (then PDF, the common case).
func fileData(data, param string) (*ir.Media, error) {
	if len(data) > 5 && data[:5] == "data:" {
		return mediaFromURL(data, param)
	}
	return &ir.Media{MIMEType: "application/pdf", Data: data}, nil
}
