package openai

import (
	"encoding/json"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// decodeRequest validates a client body field by field; fields the IR has no
// room for are ignored because passthrough forwards the raw body anyway.
func decodeRequest(body []byte) (*ir.Request, error) {
	if valid, dup := protocol.CheckMembers(body); !valid {
		return nil, invalidCode("", "", "the request body is not valid JSON")
	} else if dup != nil {
		return nil, dup
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, invalidCode("", "", "the request body must be a JSON object")
	}
	m := indexMembers(root)
	defer m.release()
	return decodeMembers(m)
}

// decodeMembers runs every step over the request's members.
func decodeMembers(fields getter) (*ir.Request, error) {
	req := &ir.Request{}
	steps := []func(getter, *ir.Request) error{
		decodeModel, decodeMessages, decodeTools, decodeToolChoice,
		decodeSampling, decodeLimits, decodeStop, decodeStreaming,
		decodeResponseFormat, decodeReasoningEffort, decodeMisc,
	}
	for _, step := range steps {
		if err := step(fields, req); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func decodeModel(root getter, req *ir.Request) error {
	r := root.Get("model")
	if !present(r) {
		return missing("model")
	}
	model, err := readString(r, "model")
	if err != nil {
		return err
	}
	if model == "" {
		return invalid("model", "'model' must not be empty")
	}
	req.Model = model
	return nil
}

func decodeSampling(root getter, req *ir.Request) error {
	var err error
	if req.Temperature, err = optNumberIn(root, "temperature", 0, 2); err != nil {
		return err
	}
	if req.TopP, err = optNumberIn(root, "top_p", 0, 1); err != nil {
		return err
	}
	if req.FrequencyPenalty, err = optNumberIn(root, "frequency_penalty", -2, 2); err != nil {
		return err
	}
	if req.PresencePenalty, err = optNumberIn(root, "presence_penalty", -2, 2); err != nil {
		return err
	}
	if r := root.Get("top_k"); present(r) {
		k, err := readInt(r, "top_k")
		if err != nil {
			return err
		}
		// OpenAI-compatible servers use 0 or -1 for "no top-k"; that is the
		// same as leaving it out, so only a positive value is carried.
		if k > 0 {
			v := clampInt(k)
			req.TopK = &v
		}
	}
	if r := root.Get("seed"); present(r) {
		seed, err := readInt(r, "seed")
		if err != nil {
			return err
		}
		req.Seed = &seed
	}
	return nil
}

// decodeLimits reads max_tokens, max_completion_tokens (which wins, being the
// current name) and n.
func decodeLimits(root getter, req *ir.Request) error {
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		v, err := optIntMin(root, key, 1)
		if err != nil {
			return err
		}
		if v != nil {
			n := clampInt(*v)
			req.MaxTokens = &n
		}
	}
	n, err := optIntMin(root, "n", 1)
	if err != nil || n == nil {
		return err
	}
	if *n > 128 {
		return invalid("n", "'n' must be at most 128, got %d", *n)
	}
	v := int(*n)
	req.N = &v
	return nil
}

func decodeStop(root getter, req *ir.Request) error {
	r := root.Get("stop")
	switch {
	case !present(r):
		return nil
	case r.Type == gjson.String:
		if r.Str != "" {
			req.Stop = []string{r.Str}
		}
		return nil
	case !r.IsArray():
		return wrongType("stop", "a string or an array of strings")
	}
	for i, s := range r.Array() {
		v, err := readString(s, item("stop", i))
		if err != nil {
			return err
		}
		if v != "" {
			req.Stop = append(req.Stop, v)
		}
	}
	return nil
}

func decodeStreaming(root getter, req *ir.Request) error {
	if r := root.Get("stream"); present(r) {
		v, err := readBool(r, "stream")
		if err != nil {
			return err
		}
		req.Stream = v
	}
	opts := root.Get("stream_options")
	if !present(opts) {
		return nil
	}
	if _, err := readObject(opts, "stream_options"); err != nil {
		return err
	}
	if r := opts.Get("include_usage"); present(r) {
		v, err := readBool(r, "stream_options.include_usage")
		if err != nil {
			return err
		}
		req.IncludeUsage = v
	}
	return nil
}

func decodeResponseFormat(root getter, req *ir.Request) error {
	const param = "response_format"
	r := root.Get(param)
	if !present(r) {
		return nil
	}
	if _, err := readObject(r, param); err != nil {
		return err
	}
	typ, err := optString(r, param, "type")
	if err != nil {
		return err
	}
	rf := &ir.ResponseFormat{Type: typ}
	switch typ {
	case "text", "json_object":
	case "json_schema":
		if err := decodeJSONSchema(r.Get("json_schema"), rf); err != nil {
			return err
		}
	default:
		return invalid(field(param, "type"), "'response_format.type' must be one of text, json_object, json_schema")
	}
	req.ResponseFormat = rf
	return nil
}

func decodeJSONSchema(r gjson.Result, rf *ir.ResponseFormat) error {
	const param = "response_format.json_schema"
	if !present(r) {
		return invalid(param, "'%s' is required when type is json_schema", param)
	}
	if _, err := readObject(r, param); err != nil {
		return err
	}
	name, err := optString(r, param, "name")
	if err != nil {
		return err
	}
	rf.Name = name
	if s := r.Get("schema"); present(s) {
		if _, err := readObject(s, field(param, "schema")); err != nil {
			return err
		}
		rf.Schema = json.RawMessage(s.Raw)
	}
	if s := r.Get("strict"); present(s) {
		if rf.Strict, err = readBool(s, field(param, "strict")); err != nil {
			return err
		}
	}
	return nil
}

// reasoningEfforts are the documented reasoning_effort values; "none" turns
// reasoning off on models that allow it.
var reasoningEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true}

func decodeReasoningEffort(root getter, req *ir.Request) error {
	effort, err := optString(root, "", "reasoning_effort")
	if err != nil || effort == "" {
		return err
	}
	if !reasoningEfforts[effort] {
		return invalid("reasoning_effort", "'reasoning_effort' must be one of none, minimal, low, medium, high, xhigh")
	}
	if effort == "none" {
		req.Reasoning = &ir.Reasoning{Disabled: true}
		return nil
	}
	req.Reasoning = &ir.Reasoning{Effort: effort}
	return nil
}

// decodeMisc reads user, metadata and parallel_tool_calls.
func decodeMisc(root getter, req *ir.Request) error {
	var err error
	if req.User, err = optString(root, "", "user"); err != nil {
		return err
	}
	if r := root.Get("metadata"); present(r) {
		if _, err := readObject(r, "metadata"); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(r.Raw), &req.Metadata); err != nil {
			return wrongType("metadata", "an object")
		}
	}
	if r := root.Get("parallel_tool_calls"); present(r) {
		v, err := readBool(r, "parallel_tool_calls")
		if err != nil {
			return err
		}
		req.ParallelToolCalls = &v
	}
	return nil
}
