package responses

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// Request is a decoded Responses request: the call in IR and the request
// fields a Response object repeats back to the client.
type Request struct {
	IR   *ir.Request
	Echo Echo
	// Tools says how Responses tool kinds became IR functions.
	Tools *ToolMap
}

// Echo holds request fields as the client sent them (raw JSON), for the
// Response object; nil fields render as the API's defaults.
type Echo struct {
	Instructions      json.RawMessage
	MaxOutputTokens   json.RawMessage
	Metadata          json.RawMessage
	ParallelToolCalls json.RawMessage
	Reasoning         json.RawMessage
	Temperature       json.RawMessage
	Text              json.RawMessage
	ToolChoice        json.RawMessage
	Tools             json.RawMessage
	TopP              json.RawMessage
	User              json.RawMessage
}

// DecodeRequest converts a Responses request for a channel that speaks only
// chat. Anything such a channel cannot do — stored conversations, built-in
// tools, background mode, item types without a chat equivalent — is a 400
// naming the field, never silently dropped.
func DecodeRequest(body []byte) (*Request, error) {
	if valid, dup := protocol.CheckMembers(body); !valid {
		return nil, ir.BadRequest("invalid_json", "the request body is not valid JSON")
	} else if dup != nil {
		return nil, dup
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, ir.BadRequest("invalid_body", "the request body must be a JSON object")
	}
	if err := rejectStateful(root); err != nil {
		return nil, err
	}
	req, tm := &ir.Request{}, &ToolMap{}
	if err := decodeModel(root, req); err != nil {
		return nil, err
	}
	if err := decodeInstructions(root, req); err != nil {
		return nil, err
	}
	// Tools come before input: input items name namespaced functions by the
	// flattened names the tools get.
	if err := decodeTools(root, req, tm); err != nil {
		return nil, err
	}
	if err := decodeInput(root, req, tm); err != nil {
		return nil, err
	}
	if err := decodeToolChoice(root, req, tm); err != nil {
		return nil, err
	}
	steps := []func(gjson.Result, *ir.Request) error{
		decodeSampling, decodeReasoning, decodeTextFormat, decodeMisc,
	}
	for _, step := range steps {
		if err := step(root, req); err != nil {
			return nil, err
		}
	}
	return &Request{IR: req, Echo: echoFrom(root), Tools: tm}, nil
}

// rejectStateful refuses what needs state the gateway does not keep for
// converted channels: earlier responses, conversations, stored prompts,
// stored responses and background runs.
func rejectStateful(root gjson.Result) error {
	for _, key := range []string{"previous_response_id", "conversation", "prompt"} {
		if v := root.Get(key); present(v) && v.String() != "" {
			return unsupported(key, "needs state the gateway does not keep")
		}
	}
	if root.Get("store").Type == gjson.True {
		return unsupported("store", "cannot be true: the gateway does not store responses of this model; send store: false")
	}
	if root.Get("background").Type == gjson.True {
		return unsupported("background", "mode is not available")
	}
	return nil
}

func decodeModel(root gjson.Result, req *ir.Request) error {
	m := root.Get("model")
	if !present(m) {
		return missing("model")
	}
	if m.Type != gjson.String {
		return wrongType("model", "a string")
	}
	if m.Str == "" {
		return missing("model")
	}
	req.Model = m.Str
	return nil
}

func decodeInstructions(root gjson.Result, req *ir.Request) error {
	s, err := optString(root, "", "instructions")
	if err != nil || s == "" {
		return err
	}
	req.System = append(req.System, ir.Part{Kind: ir.PartText, Text: s})
	return nil
}

func decodeSampling(root gjson.Result, req *ir.Request) error {
	var err error
	if req.Temperature, err = optNumber(root, "temperature", 0, 2); err != nil {
		return err
	}
	if req.TopP, err = optNumber(root, "top_p", 0, 1); err != nil {
		return err
	}
	req.MaxTokens, err = optPositiveInt(root, "max_output_tokens")
	return err
}

var reasoningEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true}

func decodeReasoning(root gjson.Result, req *ir.Request) error {
	r := root.Get("reasoning")
	if !present(r) {
		return nil
	}
	if !r.IsObject() {
		return wrongType("reasoning", "an object")
	}
	effort, err := optString(r, "reasoning", "effort")
	switch {
	case err != nil:
		return err
	case effort == "":
		return nil
	case !reasoningEfforts[effort]:
		return invalid("invalid_value", "reasoning.effort", "'reasoning.effort' must be one of none, minimal, low, medium, high, xhigh")
	case effort == "none":
		req.Reasoning = &ir.Reasoning{Disabled: true}
	default:
		req.Reasoning = &ir.Reasoning{Effort: effort}
	}
	return nil
}

// decodeTextFormat reads text.format, the Responses spelling of
// response_format (its json_schema fields sit beside type, not nested).
func decodeTextFormat(root gjson.Result, req *ir.Request) error {
	f := root.Get("text.format")
	if !present(f) {
		return nil
	}
	if !f.IsObject() {
		return wrongType("text.format", "an object")
	}
	typ, err := optString(f, "text.format", "type")
	if err != nil {
		return err
	}
	switch typ {
	case "text", "":
		return nil
	case "json_object":
		req.ResponseFormat = &ir.ResponseFormat{Type: "json_object"}
		return nil
	case "json_schema":
		return decodeJSONSchema(f, req)
	}
	return invalid("invalid_value", "text.format.type", "'text.format.type' must be text, json_object or json_schema")
}

func decodeJSONSchema(f gjson.Result, req *ir.Request) error {
	name, err := optString(f, "text.format", "name")
	if err != nil {
		return err
	}
	schema := f.Get("schema")
	if !schema.IsObject() {
		return missing("text.format.schema")
	}
	rf := &ir.ResponseFormat{Type: "json_schema", Name: name, Schema: json.RawMessage(schema.Raw)}
	if s := f.Get("strict"); present(s) {
		if s.Type != gjson.True && s.Type != gjson.False {
			return wrongType("text.format.strict", "a boolean")
		}
		rf.Strict = s.Bool()
	}
	req.ResponseFormat = rf
	return nil
}

func decodeMisc(root gjson.Result, req *ir.Request) error {
	var err error
	if s := root.Get("stream"); present(s) {
		if s.Type != gjson.True && s.Type != gjson.False {
			return wrongType("stream", "a boolean")
		}
		req.Stream = s.Bool()
	}
	if req.ParallelToolCalls, err = optBool(root, "parallel_tool_calls"); err != nil {
		return err
	}
	if req.User, err = optString(root, "", "user"); err != nil {
		return err
	}
	if req.User == "" {
		// safety_identifier is the newer name for the end-user id.
		if req.User, err = optString(root, "", "safety_identifier"); err != nil {
			return err
		}
	}
	return decodeMetadata(root, req)
}

func decodeMetadata(root gjson.Result, req *ir.Request) error {
	m := root.Get("metadata")
	if !present(m) {
		return nil
	}
	if !m.IsObject() {
		return wrongType("metadata", "an object")
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(m.Raw), &out); err != nil {
		return wrongType("metadata", "an object")
	}
	if len(out) > 0 {
		req.Metadata = out
	}
	return nil
}

// echoFrom keeps the fields a Response object repeats, as sent.
func echoFrom(root gjson.Result) Echo {
	raw := func(key string) json.RawMessage {
		if v := root.Get(key); present(v) {
			return json.RawMessage(v.Raw)
		}
		return nil
	}
	return Echo{
		Instructions: raw("instructions"), MaxOutputTokens: raw("max_output_tokens"), Metadata: raw("metadata"),
		ParallelToolCalls: raw("parallel_tool_calls"), Reasoning: raw("reasoning"), Temperature: raw("temperature"),
		Text: raw("text"), ToolChoice: raw("tool_choice"), Tools: raw("tools"), TopP: raw("top_p"), User: raw("user"),
	}
}
