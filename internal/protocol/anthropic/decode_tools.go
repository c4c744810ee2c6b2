package anthropic

import (
	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Effort levels assumed for thinking modes that carry no explicit budget.
const adaptiveEffort = "medium"

// decodeTools reads tool definitions. Custom tools (no type, or "custom")
// map to IR functions. Provider server tools (web_search_…, bash_…, and the
// like) have no IR function form; they are kept as an ir.Tool whose Native holds
// the whole original definition, recognisable because its top-level "type"
// is the tool type rather than a JSON Schema "object". Rejecting them here
// would break passthrough to a messages-native upstream, which is where they
// work; this codec's EncodeRequest restores them verbatim, and a foreign
// upstream refuses the odd schema instead of silently losing the tool.
func decodeTools(root gjson.Result, req *ir.Request) *ir.Error {
	ts := root.Get("tools")
	if !ts.Exists() || ts.Type == gjson.Null {
		return nil
	}
	if !ts.IsArray() {
		return badParam("tools", codeInvalidType, "tools: expected an array")
	}
	for i, t := range ts.Array() {
		tool, err := decodeTool(t, idx("tools", i))
		if err != nil {
			return err
		}
		req.Tools = append(req.Tools, tool)
	}
	return nil
}

func decodeTool(t gjson.Result, param string) (ir.Tool, *ir.Error) {
	if err := wantObject(t, param); err != nil {
		return ir.Tool{}, err
	}
	name, err := wantString(t.Get("name"), param+".name")
	if err != nil {
		return ir.Tool{}, err
	}
	if name == "" {
		return ir.Tool{}, badParam(param+".name", codeInvalidVal, "%s.name: must not be empty", param)
	}
	typ, err := optString(t.Get("type"), param+".type")
	if err != nil {
		return ir.Tool{}, err
	}
	if typ != "" && typ != "custom" {
		return ir.Tool{Name: name, Native: rawOrNil(t)}, nil
	}
	desc, err := optString(t.Get("description"), param+".description")
	if err != nil {
		return ir.Tool{}, err
	}
	schema := t.Get("input_schema")
	if !schema.Exists() {
		return ir.Tool{}, badParam(param+".input_schema", codeMissing, "%s.input_schema: field required", param)
	}
	if err := wantObject(schema, param+".input_schema"); err != nil {
		return ir.Tool{}, err
	}
	return ir.Tool{Name: name, Description: desc, Parameters: rawOrNil(schema)}, nil
}

// isServerTool reports whether an IR tool carries a provider server-tool
// definition (see decodeTools).
func isServerTool(t ir.Tool) bool { return len(t.Native) > 0 }

func decodeToolChoice(root gjson.Result, req *ir.Request) *ir.Error {
	tc := root.Get("tool_choice")
	if !tc.Exists() || tc.Type == gjson.Null {
		return nil
	}
	if err := wantObject(tc, "tool_choice"); err != nil {
		return err
	}
	typ, err := wantString(tc.Get("type"), "tool_choice.type")
	if err != nil {
		return err
	}
	switch typ {
	case "auto":
		req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceAuto}
	case "any":
		req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceRequired}
	case "none":
		req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceNone}
	case "tool":
		name, err := wantString(tc.Get("name"), "tool_choice.name")
		if err != nil {
			return err
		}
		req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceTool, Name: name}
	default:
		return badParam("tool_choice.type", codeInvalidVal, "tool_choice.type: must be one of auto, any, tool, none")
	}
	off, err := optBool(tc.Get("disable_parallel_tool_use"), "tool_choice.disable_parallel_tool_use")
	if err != nil {
		return err
	}
	if off {
		no := false
		req.ParallelToolCalls = &no
	}
	return nil
}

// decodeThinking maps enabled+budget to BudgetTokens, disabled to Disabled,
// and adaptive (the model picks its own budget) to an effort level, taken
// from output_config.effort when the client set one.
func decodeThinking(root gjson.Result, req *ir.Request) *ir.Error {
	th := root.Get("thinking")
	if !th.Exists() || th.Type == gjson.Null {
		return nil
	}
	if err := wantObject(th, "thinking"); err != nil {
		return err
	}
	typ, err := wantString(th.Get("type"), "thinking.type")
	if err != nil {
		return err
	}
	switch typ {
	case "enabled":
		b := th.Get("budget_tokens")
		if !b.Exists() {
			return badParam("thinking.budget_tokens", codeMissing, "thinking.budget_tokens: field required")
		}
		n, err := wantInt(b, "thinking.budget_tokens")
		if err != nil {
			return err
		}
		if n < 1 {
			return badParam("thinking.budget_tokens", codeInvalidVal, "thinking.budget_tokens: must be greater than or equal to 1")
		}
		req.Reasoning = &ir.Reasoning{BudgetTokens: n}
	case "disabled":
		req.Reasoning = &ir.Reasoning{Disabled: true}
	case "adaptive":
		effort := root.Get("output_config.effort").String()
		if effort == "" {
			effort = adaptiveEffort
		}
		req.Reasoning = &ir.Reasoning{Effort: effort}
	default:
		return badParam("thinking.type", codeInvalidVal, "thinking.type: must be one of enabled, disabled, adaptive")
	}
	return nil
}
