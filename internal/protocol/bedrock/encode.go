package bedrock

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Thinking budgets for IR effort levels, for Anthropic models (which take a
// token budget of at least minThinkingBudget).
const (
	minThinkingBudget    = 1024
	mediumThinkingBudget = 4096
	highThinkingBudget   = 16384
	maxThinkingBudget    = 32768
	// answerRoom is the room for the visible answer added to a thinking
	// budget when the client set no max_tokens.
	answerRoom = 4096
)

// EncodeRequest builds a Converse body.
//
// Fields Converse cannot express are handled so:
//   - frequency/presence penalty, seed, user, metadata, image detail,
//     message names and parallel_tool_calls are dropped (sampling and
//     bookkeeping hints);
//   - temperature is clamped to [0, 1], the range Bedrock's models take;
//   - top_k and reasoning reach Anthropic models through
//     additionalModelRequestFields and are dropped for other models, whose
//     parameter names differ;
//   - response_format json_object is dropped (the prompt must ask for JSON
//     anyway); json_schema is refused with a 400 naming response_format;
//   - tool_choice none is expressed by sending no tools, and refused when
//     the conversation already holds tool calls (Converse then requires the
//     tools and cannot forbid them);
//   - media by web address is refused (Converse takes inline bytes or s3://);
//   - provider-specific tools and n > 1 are refused.
func (Codec) EncodeRequest(req *ir.Request) ([]byte, error) {
	if e := ir.SingleAnswer(req); e != nil {
		return nil, e
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type == "json_schema" {
		return nil, unsupported("response_format", "response_format json_schema cannot be expressed in Amazon Bedrock's Converse API")
	}
	enc := &reqEncoder{}
	if err := enc.addSystem(req.System, "system"); err != nil {
		return nil, err
	}
	if err := enc.messages(req.Messages); err != nil {
		return nil, err
	}
	out := wireRequest{Messages: enc.turns(), System: enc.system}
	if len(out.Messages) == 0 {
		return nil, badParam("messages", "messages: at least one non-empty user or assistant message is required")
	}
	tc, err := encodeTools(req, enc.toolBlocks)
	if err != nil {
		return nil, err
	}
	out.ToolConfig = tc
	inf, err := encodeInference(req)
	if err != nil {
		return nil, err
	}
	if IsAnthropicModel(req.Model) {
		out.AdditionalModelRequestFields = anthropicFields(req, inf, tc)
	}
	if !inf.empty() {
		out.InferenceConfig = inf
	}
	return marshal(out)
}

func encodeInference(req *ir.Request) (*wireInference, *ir.Error) {
	inf := &wireInference{StopSequences: req.Stop}
	if m := req.MaxTokens; m != nil {
		if *m < 1 {
			return nil, badParam("max_tokens", "max_tokens: must be greater than or equal to 1")
		}
		v := *m
		inf.MaxTokens = &v
	}
	if t := req.Temperature; t != nil {
		v := min(max(*t, 0), 1)
		inf.Temperature = &v
	}
	if p := req.TopP; p != nil {
		v := *p
		inf.TopP = &v
	}
	return inf, nil
}

// anthropicFields adds what an Anthropic model takes beyond Converse's own
// fields: top_k, and a thinking budget. Thinking needs maxTokens above the
// budget, temperature left at 1, top_p no lower than 0.95, no top_k, and
// no forced tool use; forced tool use wins, as reasoning is only a hint.
// Newer Claude models refuse temperature together with top_p, so top_p
// gives way to temperature.
func anthropicFields(req *ir.Request, inf *wireInference, tc *wireToolConfig) map[string]any {
	out := map[string]any{}
	if inf.Temperature != nil && inf.TopP != nil {
		inf.TopP = nil
	}
	budget := thinkingBudget(req.Reasoning)
	forced := tc != nil && tc.ToolChoice != nil && (tc.ToolChoice.Any != nil || tc.ToolChoice.Tool != nil)
	if budget == 0 || forced {
		if req.TopK != nil {
			out["top_k"] = *req.TopK
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	switch {
	case inf.MaxTokens == nil:
		v := budget + answerRoom
		inf.MaxTokens = &v
	case *inf.MaxTokens <= budget:
		v := *inf.MaxTokens + budget
		inf.MaxTokens = &v
	}
	if inf.Temperature != nil && *inf.Temperature != 1 {
		inf.Temperature = nil
	}
	if inf.TopP != nil && *inf.TopP < 0.95 {
		inf.TopP = nil
	}
	out["thinking"] = map[string]any{"type": "enabled", "budget_tokens": budget}
	return out
}

// thinkingBudget returns 0 when no thinking should be requested.
func thinkingBudget(r *ir.Reasoning) int {
	if r == nil || r.Disabled {
		return 0
	}
	if r.BudgetTokens > 0 {
		return max(r.BudgetTokens, minThinkingBudget)
	}
	switch r.Effort {
	case "":
		if r.BudgetTokens < 0 { // "model decides" in formats that have it
			return mediumThinkingBudget
		}
		return 0
	case "none":
		return 0
	case "minimal", "low":
		return minThinkingBudget
	case "high":
		return highThinkingBudget
	case "xhigh", "max":
		return maxThinkingBudget
	}
	return mediumThinkingBudget
}

// encodeTools builds toolConfig. Converse requires toolConfig whenever the
// conversation holds toolUse or toolResult blocks (history).
func encodeTools(req *ir.Request, history bool) (*wireToolConfig, *ir.Error) {
	if c := req.ToolChoice; c != nil && c.Mode == ir.ToolChoiceNone && len(req.Tools) > 0 {
		if history {
			return nil, unsupported("tool_choice", "tool_choice none cannot be expressed in Amazon Bedrock's Converse API once the conversation holds tool calls")
		}
		return nil, nil
	}
	if len(req.Tools) == 0 {
		return nil, nil
	}
	tc := &wireToolConfig{}
	for i, t := range req.Tools {
		p := idx("tools", i)
		if len(t.Native) > 0 {
			return nil, ir.NativeToolError(i, t.Name)
		}
		if t.Name == "" {
			return nil, badParam(p+".name", "%s.name: field required", p)
		}
		schema := bytes.TrimSpace(t.Parameters)
		if len(schema) == 0 || string(schema) == "null" {
			schema = []byte(`{"type":"object","properties":{}}`)
		}
		if !json.Valid(schema) || !gjson.ParseBytes(schema).IsObject() {
			return nil, badParam(p+".parameters", "%s.parameters: must be a JSON Schema object", p)
		}
		tc.Tools = append(tc.Tools, wireTool{ToolSpec: wireToolSpec{
			Name: t.Name, Description: t.Description, InputSchema: wireInputSchema{JSON: json.RawMessage(compact(string(schema)))},
		}})
	}
	if c := req.ToolChoice; c != nil {
		switch c.Mode {
		case ir.ToolChoiceRequired:
			tc.ToolChoice = &wireToolChoice{Any: &struct{}{}}
		case ir.ToolChoiceTool:
			if c.Name == "" {
				return nil, badParam("tool_choice", "tool_choice: the tool to use must be named")
			}
			tc.ToolChoice = &wireToolChoice{Tool: &wireToolChoiceOf{Name: c.Name}}
		case ir.ToolChoiceAuto:
			tc.ToolChoice = &wireToolChoice{Auto: &struct{}{}}
		}
	}
	return tc, nil
}

// reqEncoder folds IR messages into the alternating user/assistant turns
// Converse requires: system messages join the system blocks, tool messages
// become toolResult blocks of a user turn, and consecutive turns of one
// role merge, tool results ahead of other user content.
type reqEncoder struct {
	system     []wireBlock
	list       []*turn
	toolBlocks bool
	documents  int
}

type turn struct {
	role    string
	results []wireBlock
	others  []wireBlock
}

func (e *reqEncoder) addSystem(parts []ir.Part, param string) *ir.Error {
	for j, p := range parts {
		if p.Kind != ir.PartText {
			return badParam(idx(param, j), "%s: the system prompt can only hold text", idx(param, j))
		}
		if p.Text != "" {
			e.system = append(e.system, textBlock(p.Text))
		}
		if len(p.CacheControl) > 0 && len(e.system) > 0 {
			e.system = append(e.system, cachePoint)
		}
	}
	return nil
}

func (e *reqEncoder) messages(msgs []ir.Message) *ir.Error {
	for i, m := range msgs {
		param := idx("messages", i)
		switch m.Role {
		case ir.RoleSystem:
			if err := e.addSystem(m.Parts, param+".content"); err != nil {
				return err
			}
		case ir.RoleTool, ir.RoleUser, ir.RoleAssistant:
			results, others, err := e.blocks(m.Parts, param, m.Role)
			if err != nil {
				return err
			}
			role := string(m.Role)
			if m.Role == ir.RoleTool {
				role = "user"
			}
			e.add(role, results, others)
		default:
			return badParam(param+".role", "%s.role: unsupported role %q", param, m.Role)
		}
	}
	return nil
}

func (e *reqEncoder) add(role string, results, others []wireBlock) {
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
		out = append(out, wireMessage{Role: t.role, Content: append(t.results, t.others...)})
	}
	return out
}

// blocks converts one message's parts: tool results apart, so they lead
// their turn.
func (e *reqEncoder) blocks(parts []ir.Part, param string, role ir.Role) (results, others []wireBlock, err *ir.Error) {
	for j, p := range parts {
		pp := idx(param+".content", j)
		if p.Kind == ir.PartToolResult {
			if role == ir.RoleAssistant {
				return nil, nil, badParam(pp, "%s: tool results belong in user or tool messages", pp)
			}
			b, err := e.toolResult(p, pp)
			if err != nil {
				return nil, nil, err
			}
			results = append(results, b)
			continue
		}
		if role == ir.RoleTool {
			return nil, nil, badParam(pp, "%s: a tool message must carry a tool result", pp)
		}
		bs, err := e.contentBlock(p, pp, role)
		if err != nil {
			return nil, nil, err
		}
		others = append(others, bs...)
	}
	return results, others, nil
}

// contentBlock converts one part; it returns no block for parts that are
// dropped: empty text (Bedrock refuses blank text blocks) and reasoning
// without a signature (only the model's own signed reasoning may go back,
// and earlier reasoning is not needed to continue). A part with a cache
// hint is followed by a cache point.
func (e *reqEncoder) contentBlock(p ir.Part, param string, role ir.Role) ([]wireBlock, *ir.Error) {
	var b wireBlock
	switch p.Kind {
	case ir.PartText:
		if p.Text == "" {
			return nil, nil
		}
		b = textBlock(p.Text)
	case ir.PartImage, ir.PartFile:
		mb, err := e.media(p, param)
		if err != nil {
			return nil, err
		}
		b = mb
	case ir.PartToolCall:
		if role != ir.RoleAssistant || p.ToolCall == nil {
			return nil, badParam(param, "%s: tool calls belong in assistant messages", param)
		}
		tu, err := toolUse(p.ToolCall, param)
		if err != nil {
			return nil, err
		}
		e.toolBlocks = true
		b = wireBlock{ToolUse: tu}
	case ir.PartThinking:
		if p.Thinking == nil || p.Thinking.Signature == "" || role != ir.RoleAssistant {
			return nil, nil
		}
		b = wireBlock{ReasoningContent: &wireReasoning{ReasoningText: &wireReasoningText{Text: p.Thinking.Text, Signature: p.Thinking.Signature}}}
	case ir.PartRedactedThinking:
		if p.Thinking == nil || p.Thinking.Redacted == "" || role != ir.RoleAssistant {
			return nil, nil
		}
		b = wireBlock{ReasoningContent: &wireReasoning{RedactedContent: p.Thinking.Redacted}}
	default:
		return nil, badParam(param, "%s: content of kind %q cannot be sent to Amazon Bedrock", param, p.Kind)
	}
	if len(p.CacheControl) > 0 {
		return []wireBlock{b, cachePoint}, nil
	}
	return []wireBlock{b}, nil
}

func toolUse(c *ir.ToolCall, param string) (*wireToolUse, *ir.Error) {
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}"
	}
	if !gjson.Valid(args) || !gjson.Parse(args).IsObject() {
		return nil, badParam(param+".arguments", "%s.arguments: must be a JSON object", param)
	}
	if c.ID == "" {
		return nil, badParam(param+".id", "%s.id: tool call id required", param)
	}
	if c.Name == "" {
		return nil, badParam(param+".name", "%s.name: tool name required", param)
	}
	return &wireToolUse{ToolUseID: toolID(c.ID), Name: c.Name, Input: json.RawMessage(compact(args))}, nil
}

func (e *reqEncoder) toolResult(p ir.Part, param string) (wireBlock, *ir.Error) {
	r := p.ToolResult
	if r == nil {
		return wireBlock{}, badParam(param, "%s: tool result missing", param)
	}
	if r.CallID == "" {
		return wireBlock{}, badParam(param+".tool_call_id", "%s.tool_call_id: field required", param)
	}
	out := &wireToolResult{ToolUseID: toolID(r.CallID), Content: []wireBlock{}}
	if r.IsError {
		out.Status = "error"
	}
	for j, c := range r.Content {
		cp := idx(param+".content", j)
		switch c.Kind {
		case ir.PartText:
			out.Content = append(out.Content, textBlock(c.Text))
		case ir.PartImage, ir.PartFile:
			b, err := e.media(c, cp)
			if err != nil {
				return wireBlock{}, err
			}
			out.Content = append(out.Content, b)
		default:
			return wireBlock{}, badParam(cp, "%s: a tool result can only hold text, images and documents", cp)
		}
	}
	if len(out.Content) == 0 {
		out.Content = append(out.Content, textBlock(""))
	}
	e.toolBlocks = true
	return wireBlock{ToolResult: out}, nil
}

// toolID makes an id from another format acceptable to Converse, whose
// tool ids match [a-zA-Z0-9_-]+ and are at most 64 long. The mapping is
// deterministic, so a call and its result still match.
func toolID(id string) string {
	out := []byte(id)
	for i, c := range out {
		if !(c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			out[i] = '_'
		}
	}
	if len(out) > 64 {
		out = append(out[:47], '_')
		out = append(out, fnvHex(id)...)
	}
	return string(out)
}

// fnvHex is a 64-bit FNV-1a hash of s in hex, to keep shortened ids apart.
func fnvHex(s string) string {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[h&15]
		h >>= 4
	}
	return string(b[:])
}
