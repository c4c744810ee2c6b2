package openai

import (
	"encoding/json"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

func decodeTools(root getter, req *ir.Request) error {
	r := root.Get("tools")
	if !present(r) {
		return nil
	}
	items, err := readArray(r, "tools")
	if err != nil {
		return err
	}
	for i, t := range items {
		tool, err := decodeTool(t, item("tools", i))
		if err != nil {
			return err
		}
		req.Tools = append(req.Tools, tool)
	}
	return nil
}

func decodeTool(t gjson.Result, param string) (ir.Tool, error) {
	if _, err := readObject(t, param); err != nil {
		return ir.Tool{}, err
	}
	typ, err := optString(t, param, "type")
	if err != nil {
		return ir.Tool{}, err
	}
	if typ != "" && typ != "function" {
		return ir.Tool{}, invalid(field(param, "type"), "tool type '%s' is not supported; only 'function' tools are", typ)
	}
	fnParam := field(param, "function")
	fn := t.Get("function")
	if !present(fn) {
		return ir.Tool{}, missing(fnParam)
	}
	if _, err := readObject(fn, fnParam); err != nil {
		return ir.Tool{}, err
	}
	name, err := optString(fn, fnParam, "name")
	if err != nil {
		return ir.Tool{}, err
	}
	if name == "" {
		return ir.Tool{}, missing(field(fnParam, "name"))
	}
	desc, err := optString(fn, fnParam, "description")
	if err != nil {
		return ir.Tool{}, err
	}
	tool := ir.Tool{Name: name, Description: desc}
	if p := fn.Get("parameters"); present(p) {
		if _, err := readObject(p, field(fnParam, "parameters")); err != nil {
			return ir.Tool{}, err
		}
		tool.Parameters = json.RawMessage(p.Raw)
	}
	// strict has no IR field; it only tightens schema adherence, so losing it
	// on conversion is harmless, but a wrong type is still the client's error.
	if s := fn.Get("strict"); present(s) {
		if _, err := readBool(s, field(fnParam, "strict")); err != nil {
			return ir.Tool{}, err
		}
	}
	return tool, nil
}

func decodeToolChoice(root getter, req *ir.Request) error {
	const param = "tool_choice"
	r := root.Get(param)
	if !present(r) {
		return nil
	}
	if r.Type == gjson.String {
		switch mode := ir.ToolChoiceMode(r.Str); mode {
		case ir.ToolChoiceAuto, ir.ToolChoiceNone, ir.ToolChoiceRequired:
			req.ToolChoice = &ir.ToolChoice{Mode: mode}
			return nil
		}
		return invalid(param, "'tool_choice' must be one of auto, none, required or a function object")
	}
	if !r.IsObject() {
		return wrongType(param, "a string or an object")
	}
	typ, err := optString(r, param, "type")
	if err != nil {
		return err
	}
	if typ != "function" {
		return invalid(field(param, "type"), "tool_choice type '%s' is not supported; use 'function'", typ)
	}
	name, err := optString(r.Get("function"), field(param, "function"), "name")
	if err != nil {
		return err
	}
	if name == "" {
		return missing("tool_choice.function.name")
	}
	req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceTool, Name: name}
	return nil
}
