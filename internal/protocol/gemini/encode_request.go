package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// EncodeRequest builds a generateContent body. The model goes in the URL,
// never in the body; the stream flag picks the action, not a field.
func (Codec) EncodeRequest(req *ir.Request) ([]byte, error) {
	for i, t := range req.Tools {
		if len(t.Native) > 0 {
			return nil, ir.NativeToolError(i, t.Name)
		}
	}
	if err := ir.SingleAnswer(req); err != nil {
		return nil, err
	}
	e := &reqEncoder{callNames: map[string]string{}, sentinel: wantsSentinel(req.Model)}
	e.system = appendText(e.system, req.System)
	for i, m := range req.Messages {
		if err := e.message(i, m); err != nil {
			return nil, err
		}
	}
	if len(e.contents) == 0 {
		return nil, badIR("messages", "at least one user or assistant message is required")
	}
	w := requestWire{Contents: e.contents, GenerationConfig: generationFor(req)}
	if len(e.system) > 0 {
		w.SystemInstruction = &contentWire{Parts: e.system}
	}
	w.Tools, w.ToolConfig = toolsFor(req)
	return json.Marshal(w)
}

func badIR(param, format string, args ...any) *ir.Error {
	e := ir.BadRequest("unsupported_value", "%s: %s", param, fmt.Sprintf(format, args...))
	e.Param = param
	return e
}

// reqEncoder remembers call names by id: this format matches results to calls
// by function name, which other formats leave out of their results.
type reqEncoder struct {
	contents  []contentWire
	system    []partWire
	callNames map[string]string
	sentinel  bool
}

func (e *reqEncoder) message(i int, m ir.Message) error {
	switch m.Role {
	case ir.RoleSystem:
		// This format has no system turns; mid-conversation instructions
		// join the system instruction.
		e.system = appendText(e.system, m.Parts)
		return nil
	case ir.RoleUser, ir.RoleTool:
		parts, err := e.userParts(i, m.Parts)
		e.add("user", parts)
		return err
	case ir.RoleAssistant:
		parts, err := e.modelParts(i, m.Parts)
		e.add("model", parts)
		return err
	}
	return badIR(fmt.Sprintf("messages[%d].role", i), "unsupported role %q", m.Role)
}

// add appends a content, merging it into the previous one of the same role:
// function responses must sit together in the turn after the calls.
func (e *reqEncoder) add(role string, parts []partWire) {
	if len(parts) == 0 {
		return
	}
	if n := len(e.contents); n > 0 && e.contents[n-1].Role == role {
		e.contents[n-1].Parts = append(e.contents[n-1].Parts, parts...)
		return
	}
	e.contents = append(e.contents, contentWire{Role: role, Parts: parts})
}

func appendText(dst []partWire, parts []ir.Part) []partWire {
	for _, p := range parts {
		if p.Kind == ir.PartText && p.Text != "" {
			dst = append(dst, textWire(p.Text))
		}
	}
	return dst
}

func textWire(s string) partWire { return partWire{Text: &s} }

func (e *reqEncoder) userParts(i int, parts []ir.Part) ([]partWire, error) {
	var out []partWire
	for j, p := range parts {
		switch p.Kind {
		case ir.PartText:
			if p.Text != "" {
				out = append(out, textWire(p.Text))
			}
		case ir.PartImage, ir.PartFile:
			if p.Media != nil {
				out = append(out, mediaWire(p.Media))
			}
		case ir.PartToolResult:
			fr, extra, err := e.functionResponse(i, j, p.ToolResult)
			if err != nil {
				return nil, err
			}
			out = append(append(out, fr), extra...)
		case ir.PartToolCall:
			return nil, badIR(fmt.Sprintf("messages[%d].parts[%d]", i, j), "tool calls belong in assistant messages")
		}
	}
	return out, nil
}

// functionResponse renders a tool result. Text that is a JSON object is the
// response itself; other text is wrapped, as the response must be an object.
// Media in a result follows as separate parts of the same turn.
func (e *reqEncoder) functionResponse(i, j int, tr *ir.ToolResult) (partWire, []partWire, error) {
	if tr == nil {
		return partWire{}, nil, badIR(fmt.Sprintf("messages[%d].parts[%d]", i, j), "tool result is empty")
	}
	name := tr.Name
	if name == "" {
		name = e.callNames[tr.CallID]
	}
	if name == "" {
		return partWire{}, nil, badIR(fmt.Sprintf("messages[%d].parts[%d].tool_call_id", i, j),
			"no earlier tool call has id %q, and this format needs the function name", tr.CallID)
	}
	var texts []string
	var extra []partWire
	for _, c := range tr.Content {
		switch {
		case c.Kind == ir.PartText:
			texts = append(texts, c.Text)
		case (c.Kind == ir.PartImage || c.Kind == ir.PartFile) && c.Media != nil:
			extra = append(extra, mediaWire(c.Media))
		}
	}
	text := strings.Join(texts, "\n")
	var resp json.RawMessage
	trimmed := strings.TrimSpace(text)
	if !tr.IsError && strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		resp = json.RawMessage(compactJSON(trimmed))
	} else {
		key := "result"
		if tr.IsError {
			key = "error"
		}
		resp, _ = json.Marshal(map[string]string{key: text})
	}
	fr := &functionResponseWire{ID: tr.CallID, Name: name, Response: resp}
	return partWire{FunctionResponse: fr}, extra, nil
}
