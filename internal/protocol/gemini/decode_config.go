package gemini

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

const maxInt32 = math.MaxInt32

func (d *reqDecoder) generationConfig(v gjson.Result, p string) error {
	if err := wantObject(v, p); err != nil {
		return err
	}
	var mimeType string
	var schema json.RawMessage
	err := eachField(v, func(key string, f gjson.Result) error {
		if !present(f) {
			return nil
		}
		var err error
		fp := join(p, key)
		switch key {
		case "responseMimeType", "response_mime_type":
			mimeType, err = getString(f, fp)
		case "responseSchema", "response_schema":
			schema, err = normalizeSchema(f, fp)
		case "responseJsonSchema", "response_json_schema":
			schema = json.RawMessage(compactJSON(f.Raw))
		case "thinkingConfig", "thinking_config":
			d.req.Reasoning, err = decodeThinking(f, fp)
		default:
			err = d.samplingField(key, f, fp)
		}
		return err
	})
	if err != nil {
		return err
	}
	if strings.EqualFold(mimeType, "application/json") {
		d.req.ResponseFormat = &ir.ResponseFormat{Type: "json_object"}
		if schema != nil {
			d.req.ResponseFormat = &ir.ResponseFormat{Type: "json_schema", Name: "response", Schema: schema}
		}
	}
	return nil
}

// samplingField reads the scalar generation settings; unknown keys are left
// to passthrough.
func (d *reqDecoder) samplingField(key string, f gjson.Result, fp string) error {
	r := d.req
	var err error
	switch key {
	case "temperature":
		r.Temperature, err = getFloat(f, fp, 0, 2)
	case "topP", "top_p":
		r.TopP, err = getFloat(f, fp, 0, 1)
	case "presencePenalty", "presence_penalty":
		r.PresencePenalty, err = getFloat(f, fp, -2, 2)
	case "frequencyPenalty", "frequency_penalty":
		r.FrequencyPenalty, err = getFloat(f, fp, -2, 2)
	case "topK", "top_k":
		r.TopK, err = intPtr(f, fp, 0)
	case "maxOutputTokens", "max_output_tokens":
		r.MaxTokens, err = intPtr(f, fp, 1)
	case "candidateCount", "candidate_count":
		r.N, err = intPtr(f, fp, 1)
	case "seed":
		var n int64
		if n, err = getInt(f, fp, math.MinInt32, maxInt32); err == nil {
			r.Seed = &n
		}
	case "stopSequences", "stop_sequences":
		r.Stop, err = getStrings(f, fp)
	}
	return err
}

func intPtr(f gjson.Result, fp string, lo int64) (*int, error) {
	n, err := getInt(f, fp, lo, maxInt32)
	if err != nil {
		return nil, err
	}
	i := int(n)
	return &i, nil
}

var thinkingLevels = map[string]string{
	"minimal": "minimal", "low": "low", "medium": "medium", "high": "high",
	"thinking_level_unspecified": "",
}

// decodeThinking maps thinkingConfig: a level becomes an effort, a budget of
// 0 turns reasoning off, a positive budget is kept, and includeThoughts alone
// (or with the dynamic budget -1) asks for visible reasoning at medium effort
// so formats that must enable thinking explicitly still produce it.
func decodeThinking(v gjson.Result, p string) (*ir.Reasoning, error) {
	if err := wantObject(v, p); err != nil {
		return nil, err
	}
	var budget *int64
	var include bool
	var level string
	err := eachField(v, func(key string, f gjson.Result) error {
		if !present(f) {
			return nil
		}
		fp := join(p, key)
		var err error
		switch key {
		case "thinkingBudget", "thinking_budget":
			var n int64
			n, err = getInt(f, fp, -1, maxInt32)
			budget = &n
		case "includeThoughts", "include_thoughts":
			include, err = getBool(f, fp)
		case "thinkingLevel", "thinking_level":
			var s string
			if s, err = getString(f, fp); err == nil {
				var ok bool
				if level, ok = thinkingLevels[strings.ToLower(s)]; !ok {
					err = badField(fp, "must be one of MINIMAL, LOW, MEDIUM, HIGH")
				}
			}
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case level != "":
		return &ir.Reasoning{Effort: level}, nil
	case budget != nil && *budget == 0:
		return &ir.Reasoning{Disabled: true}, nil
	case budget != nil && *budget > 0:
		return &ir.Reasoning{BudgetTokens: int(*budget)}, nil
	case include:
		return &ir.Reasoning{Effort: "medium"}, nil
	}
	return nil, nil
}

func (d *reqDecoder) tools(v gjson.Result, p string) error {
	if err := wantArray(v, p); err != nil {
		return err
	}
	return eachElem(v, func(i int, t gjson.Result) error {
		tp := index(p, i)
		if err := wantObject(t, tp); err != nil {
			return err
		}
		return eachField(t, func(key string, f gjson.Result) error {
			if (key != "functionDeclarations" && key != "function_declarations") || !present(f) {
				return nil
			}
			fp := join(tp, key)
			if err := wantArray(f, fp); err != nil {
				return err
			}
			return eachElem(f, func(j int, decl gjson.Result) error {
				tool, err := decodeDeclaration(decl, index(fp, j))
				d.req.Tools = append(d.req.Tools, tool)
				return err
			})
		})
	})
}

func decodeDeclaration(v gjson.Result, p string) (ir.Tool, error) {
	var t ir.Tool
	if err := wantObject(v, p); err != nil {
		return t, err
	}
	var jsonSchema json.RawMessage
	err := eachField(v, func(key string, f gjson.Result) error {
		if !present(f) {
			return nil
		}
		fp := join(p, key)
		var err error
		switch key {
		case "name":
			t.Name, err = getString(f, fp)
		case "description":
			t.Description, err = getString(f, fp)
		case "parameters":
			t.Parameters, err = normalizeSchema(f, fp)
		case "parametersJsonSchema", "parameters_json_schema":
			jsonSchema = json.RawMessage(compactJSON(f.Raw))
		}
		return err
	})
	if err != nil {
		return t, err
	}
	if jsonSchema != nil {
		t.Parameters = jsonSchema
	}
	if t.Name == "" {
		return t, badField(join(p, "name"), "is required")
	}
	return t, nil
}

func (d *reqDecoder) toolConfig(v gjson.Result, p string) error {
	if err := wantObject(v, p); err != nil {
		return err
	}
	fcc, fp := v.Get("functionCallingConfig"), join(p, "functionCallingConfig")
	if !present(fcc) {
		fcc, fp = v.Get("function_calling_config"), join(p, "function_calling_config")
	}
	if !present(fcc) {
		return nil
	}
	if err := wantObject(fcc, fp); err != nil {
		return err
	}
	var mode string
	var names []string
	err := eachField(fcc, func(key string, f gjson.Result) error {
		if !present(f) {
			return nil
		}
		var err error
		switch key {
		case "mode":
			mode, err = getString(f, join(fp, key))
		case "allowedFunctionNames", "allowed_function_names":
			names, err = getStrings(f, join(fp, key))
		}
		return err
	})
	if err != nil {
		return err
	}
	return d.applyMode(strings.ToUpper(mode), names, join(fp, "mode"))
}

// applyMode maps the calling mode. ANY with several allowed names narrows the
// tool list, since the other formats can only require "some tool".
func (d *reqDecoder) applyMode(mode string, names []string, p string) error {
	switch mode {
	case "", "MODE_UNSPECIFIED":
	case "AUTO", "VALIDATED":
		d.req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceAuto}
	case "NONE":
		d.req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceNone}
	case "ANY":
		if len(names) == 1 {
			d.req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceTool, Name: names[0]}
			return nil
		}
		d.req.ToolChoice = &ir.ToolChoice{Mode: ir.ToolChoiceRequired}
		if len(names) > 1 {
			d.req.Tools = keepTools(d.req.Tools, names)
		}
	default:
		return badField(p, "must be one of AUTO, ANY, NONE, VALIDATED")
	}
	return nil
}

func keepTools(tools []ir.Tool, names []string) []ir.Tool {
	allowed := make(map[string]bool, len(names))
	for _, n := range names {
		allowed[n] = true
	}
	out := tools[:0:0]
	for _, t := range tools {
		if allowed[t.Name] {
			out = append(out, t)
		}
	}
	return out
}
