package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// modelParts renders an assistant turn. A signature minted by this format's
// upstream goes back on the part that follows its thinking, where the
// provider put it; foreign signatures are dropped.
func (e *reqEncoder) modelParts(i int, parts []ir.Part) ([]partWire, error) {
	var out []partWire
	pending := ""
	emit := func(pw partWire) {
		pw.ThoughtSignature, pending = pending, ""
		out = append(out, pw)
	}
	for j, p := range parts {
		switch p.Kind {
		case ir.PartThinking:
			if p.Thinking == nil {
				continue
			}
			sig, ours := upstreamSignature(p.Thinking.Signature)
			if !ours && p.Thinking.Signature != "" {
				// Another provider's reasoning: this one can neither verify
				// nor use it.
				continue
			}
			if p.Thinking.Text != "" {
				pw := textWire(p.Thinking.Text)
				pw.Thought = true
				out = append(out, pw)
			}
			if ours {
				pending = sig
			}
		case ir.PartText:
			if p.Text != "" {
				emit(textWire(p.Text))
			}
		case ir.PartImage, ir.PartFile:
			if p.Media != nil {
				emit(mediaWire(p.Media))
			}
		case ir.PartToolCall:
			fc, err := e.functionCall(i, j, p.ToolCall)
			if err != nil {
				return nil, err
			}
			emit(partWire{FunctionCall: fc})
		}
	}
	if pending != "" {
		if n := len(out); n > 0 {
			out[n-1].ThoughtSignature = pending
		} else {
			empty := ""
			out = append(out, partWire{Text: &empty, Thought: true, ThoughtSignature: pending})
		}
	}
	if e.sentinel {
		addSentinel(out)
	}
	return out, nil
}

func (e *reqEncoder) functionCall(i, j int, tc *ir.ToolCall) (*functionCallWire, error) {
	p := fmt.Sprintf("messages[%d].parts[%d]", i, j)
	if tc == nil || tc.Name == "" {
		return nil, badIR(p, "tool call has no function name")
	}
	args := strings.TrimSpace(tc.Arguments)
	if args == "" {
		args = "{}"
	}
	if !strings.HasPrefix(args, "{") || !json.Valid([]byte(args)) {
		return nil, badIR(p+".arguments", "tool call arguments must be a JSON object")
	}
	if tc.ID != "" {
		e.callNames[tc.ID] = tc.Name
	}
	return &functionCallWire{ID: tc.ID, Name: tc.Name, Args: json.RawMessage(compactJSON(args))}, nil
}

// addSentinel marks the first function call of a turn that has no real
// signature, which is where the provider expects one.
func addSentinel(parts []partWire) {
	for k := range parts {
		if parts[k].FunctionCall != nil {
			if parts[k].ThoughtSignature == "" {
				parts[k].ThoughtSignature = skipSignature
			}
			return
		}
	}
}

func toolsFor(req *ir.Request) ([]toolWire, *toolConfigWire) {
	if len(req.Tools) == 0 {
		return nil, nil
	}
	decls := make([]functionDeclWire, 0, len(req.Tools))
	for _, t := range req.Tools {
		d := functionDeclWire{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			d.ParametersJSONSchema = t.Parameters
		}
		decls = append(decls, d)
	}
	tools := []toolWire{{FunctionDeclarations: decls}}
	tc := req.ToolChoice
	if tc == nil {
		return tools, nil
	}
	fcc := functionCallingConfig{}
	switch tc.Mode {
	case ir.ToolChoiceNone:
		fcc.Mode = "NONE"
	case ir.ToolChoiceRequired:
		fcc.Mode = "ANY"
	case ir.ToolChoiceTool:
		fcc.Mode, fcc.AllowedFunctionNames = "ANY", []string{tc.Name}
	default:
		fcc.Mode = "AUTO"
	}
	return tools, &toolConfigWire{FunctionCallingConfig: fcc}
}

// effortBudgets translates an effort into a thinking budget, which every
// model generation of this format accepts (levels only exist on newer ones).
var effortBudgets = map[string]int{
	"minimal": 512, "low": 1024, "medium": 8192, "high": 24576,
}

func generationFor(req *ir.Request) *generationConfig {
	g := &generationConfig{
		Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
		MaxOutputTokens: req.MaxTokens, StopSequences: req.Stop, CandidateCount: req.N,
		PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty,
	}
	if req.Seed != nil {
		// The field is 32-bit; folding keeps a fixed seed deterministic.
		s := int32(*req.Seed)
		g.Seed = &s
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "" && rf.Type != "text" {
		g.ResponseMIMEType = "application/json"
		if rf.Type == "json_schema" && len(rf.Schema) > 0 {
			g.ResponseJSONSchema = rf.Schema
		}
	}
	g.ThinkingConfig = thinkingFor(req.Reasoning)
	if g.empty() {
		return nil
	}
	return g
}

func (g *generationConfig) empty() bool {
	return g.Temperature == nil && g.TopP == nil && g.TopK == nil && g.MaxOutputTokens == nil &&
		len(g.StopSequences) == 0 && g.CandidateCount == nil && g.Seed == nil &&
		g.PresencePenalty == nil && g.FrequencyPenalty == nil && g.ResponseMIMEType == "" &&
		g.ThinkingConfig == nil
}

func thinkingFor(r *ir.Reasoning) *thinkingConfig {
	switch {
	case r == nil:
		return nil
	case r.Disabled:
		zero := 0
		return &thinkingConfig{ThinkingBudget: &zero}
	case r.BudgetTokens > 0:
		b := r.BudgetTokens
		return &thinkingConfig{ThinkingBudget: &b, IncludeThoughts: true}
	}
	if b, ok := effortBudgets[strings.ToLower(r.Effort)]; ok {
		return &thinkingConfig{ThinkingBudget: &b, IncludeThoughts: true}
	}
	return &thinkingConfig{IncludeThoughts: true}
}
