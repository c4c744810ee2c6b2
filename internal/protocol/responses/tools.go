package responses

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// decodeTools reads function tools. Built-in tools (web search, file
// search, computer use, code interpreter, MCP...) run on OpenAI's side and
// have no chat equivalent, so each is refused by name.
func decodeTools(root gjson.Result, req *ir.Request) error {
	tools := root.Get("tools")
	if !present(tools) {
		return nil
	}
	if !tools.IsArray() {
		return wrongType("tools", "an array")
	}
	for i, t := range tools.Array() {
		param := item("tools", i)
		if !t.IsObject() {
			return wrongType(param, "an object")
		}
		typ, err := optString(t, param, "type")
		if err != nil {
			return err
		}
		if typ != "function" {
			return unsupported(param, "is a built-in tool ("+typ+") with no chat equivalent")
		}
		tool, err := decodeFunction(t, param)
		if err != nil {
			return err
		}
		req.Tools = append(req.Tools, tool)
	}
	return nil
}

// decodeFunction reads a function tool. strict has no IR field; chat
// formats treat every schema as a plain JSON Schema.
func decodeFunction(t gjson.Result, param string) (ir.Tool, error) {
	name, err := optString(t, param, "name")
	if err != nil {
		return ir.Tool{}, err
	}
	if name == "" {
		return ir.Tool{}, missing(field(param, "name"))
	}
	desc, err := optString(t, param, "description")
	if err != nil {
		return ir.Tool{}, err
	}
	tool := ir.Tool{Name: name, Description: desc}
	if p := t.Get("parameters"); present(p) {
		if !p.IsObject() {
			return ir.Tool{}, wrongType(field(param, "parameters"), "an object")
		}
		tool.Parameters = json.RawMessage(p.Raw)
	}
	if s := t.Get("strict"); present(s) && s.Type != gjson.True && s.Type != gjson.False {
		return ir.Tool{}, wrongType(field(param, "strict"), "a boolean")
	}
	return tool, nil
}

func decodeToolChoice(root gjson.Result, req *ir.Request) error {
	c := root.Get("tool_choice")
	if !present(c) {
		return nil
	}
	if c.Type == gjson.String {
		switch ir.ToolChoiceMode(c.Str) {
		case ir.ToolChoiceAuto, ir.ToolChoiceNone, ir.ToolChoiceRequired:
			req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceMode(c.Str)}
			return nil
		}
		return invalid("invalid_value", "tool_choice", "'tool_choice' must be auto, none, required or a function")
	}
	if !c.IsObject() {
		return wrongType("tool_choice", "a string or an object")
	}
	typ, err := optString(c, "tool_choice", "type")
	if err != nil {
		return err
	}
	if typ != "function" {
		return unsupported("tool_choice", "of type '"+typ+"' has no chat equivalent")
	}
	name, err := optString(c, "tool_choice", "name")
	if err != nil {
		return err
	}
	if name == "" {
		return missing("tool_choice.name")
	}
	req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceTool, Name: name}
	return nil
}
