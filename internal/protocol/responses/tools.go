package responses

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// decodeTools reads the tools into IR functions: function tools as they
// are, custom (freeform) tools as a function of one string argument,
// namespace groups flattened into their functions. Hosted tools (web
// search, tool search, file search...) run on OpenAI's side; a chat channel
// cannot run them, so they are left out and named in tm.Dropped rather
// than refusing the whole request, as agents send them on every turn.
func decodeTools(root gjson.Result, req *ir.Request, tm *ToolMap) error {
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
		var got []ir.Tool
		switch typ {
		case "function":
			var tool ir.Tool
			tool, err = decodeFunction(t, param)
			got = []ir.Tool{tool}
		case "custom":
			var tool ir.Tool
			tool, err = decodeCustom(t, param, tm)
			got = []ir.Tool{tool}
		case "namespace":
			got, err = decodeNamespace(t, param, tm)
		case "":
			return missing(field(param, "type"))
		default:
			tm.Dropped = append(tm.Dropped, typ)
		}
		if err != nil {
			return err
		}
		req.Tools = append(req.Tools, got...)
	}
	return nil
}

// decodeCustom reads a custom tool. Its grammar, when it has one, joins the
// description: the model then writes input the client can parse.
func decodeCustom(t gjson.Result, param string, tm *ToolMap) (ir.Tool, error) {
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
	if f := t.Get("format"); f.IsObject() && f.Get("type").String() == "grammar" {
		if def := f.Get("definition").String(); def != "" {
			desc += "\n\nThe input must follow this " + f.Get("syntax").String() + " grammar:\n" + def
		}
	}
	tm.addCustom(name)
	return ir.Tool{Name: name, Description: strings.TrimSpace(desc), Parameters: customSchema}, nil
}

// decodeNamespace flattens a namespace group into its functions, each named
// so that its calls can be told apart and restored (ToolMap.flatten).
func decodeNamespace(t gjson.Result, param string, tm *ToolMap) ([]ir.Tool, error) {
	ns, err := optString(t, param, "name")
	if err != nil {
		return nil, err
	}
	if ns == "" {
		return nil, missing(field(param, "name"))
	}
	desc, err := optString(t, param, "description")
	if err != nil {
		return nil, err
	}
	inner := t.Get("tools")
	if !inner.IsArray() {
		return nil, wrongType(field(param, "tools"), "an array")
	}
	var out []ir.Tool
	for j, f := range inner.Array() {
		fp := item(field(param, "tools"), j)
		if typ := f.Get("type").String(); typ != "function" && typ != "" {
			tm.Dropped = append(tm.Dropped, typ)
			continue
		}
		tool, err := decodeFunction(f, fp)
		if err != nil {
			return nil, err
		}
		if desc != "" {
			tool.Description = strings.TrimSpace(desc + "\n\n" + tool.Description)
		}
		tool.Name = tm.flatten(ns, tool.Name)
		out = append(out, tool)
	}
	return out, nil
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

func decodeToolChoice(root gjson.Result, req *ir.Request, tm *ToolMap) error {
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
	if typ != "function" && typ != "custom" {
		return unsupported("tool_choice", "of type '"+typ+"' has no chat equivalent")
	}
	name, err := optString(c, "tool_choice", "name")
	if err != nil {
		return err
	}
	if name == "" {
		return missing("tool_choice.name")
	}
	if ns, _ := optString(c, "tool_choice", "namespace"); ns != "" {
		name = tm.flatten(ns, name)
	}
	req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceTool, Name: name}
	return nil
}
