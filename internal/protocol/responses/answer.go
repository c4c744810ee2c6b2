package responses

import (
	"errors"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// ErrNoIRForm is a Response object that IR cannot carry whole: output a
// chat answer has no part for (hosted tool calls, refusals, citations,
// log probabilities), or an answer that did not end as the model meant.
var ErrNoIRForm = errors.New("responses: the response has output IR cannot carry")

// DecodeResponse reads a Response object a channel speaking the Responses
// API answered for this request back into IR: the inverse of
// EncodeResponse, with the request's tool map turning namespaced and custom
// tool calls back into the functions the request became. Anything it
// cannot carry whole is ErrNoIRForm, never dropped: the response cache
// keeps an answer only when replaying it gives the client the same output.
func (r *Request) DecodeResponse(body []byte) (*ir.Response, error) {
	if !gjson.ValidBytes(body) {
		return nil, ErrNoIRForm
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, ErrNoIRForm
	}
	res := &ir.Response{ID: root.Get("id").String(), Model: root.Get("model").String(), StopReason: ir.StopEnd}
	switch root.Get("status").String() {
	case "completed":
	case "incomplete":
		if root.Get("incomplete_details.reason").String() != "max_output_tokens" {
			return nil, ErrNoIRForm
		}
		res.StopReason = ir.StopMaxTokens
	default:
		return nil, ErrNoIRForm
	}
	output := root.Get("output")
	if !output.IsArray() {
		return nil, ErrNoIRForm
	}
	for _, item := range output.Array() {
		parts, err := r.outputParts(item)
		if err != nil {
			return nil, err
		}
		res.Content = append(res.Content, parts...)
	}
	for _, p := range res.Content {
		if p.Kind == ir.PartToolCall && res.StopReason == ir.StopEnd {
			res.StopReason = ir.StopToolUse
		}
	}
	res.Usage, _ = usageFrom(root.Get("usage"))
	return res, nil
}

// outputParts is one output item as IR parts.
func (r *Request) outputParts(item gjson.Result) ([]ir.Part, error) {
	switch item.Get("type").String() {
	case "message":
		return messageParts(item)
	case "reasoning":
		return reasoningPart(item)
	case "function_call":
		name, ns := item.Get("name").String(), item.Get("namespace").String()
		if ns != "" && r.Tools != nil {
			name = r.Tools.flatten(ns, name)
		}
		return toolCallPart(item, name, item.Get("arguments").String())
	case "custom_tool_call":
		name := item.Get("name").String()
		if !r.Tools.IsCustom(name) {
			return nil, ErrNoIRForm
		}
		return toolCallPart(item, name, customArguments(item.Get("input").String()))
	}
	return nil, ErrNoIRForm
}

// messageParts is an assistant message's text; a refusal, a citation or
// log probabilities have no IR form.
func messageParts(item gjson.Result) ([]ir.Part, error) {
	if role := item.Get("role").String(); role != "assistant" && role != "" {
		return nil, ErrNoIRForm
	}
	var out []ir.Part
	for _, c := range item.Get("content").Array() {
		if c.Get("type").String() != "output_text" || notEmpty(c.Get("annotations")) || notEmpty(c.Get("logprobs")) {
			return nil, ErrNoIRForm
		}
		out = append(out, ir.Part{Kind: ir.PartText, Text: c.Get("text").String()})
	}
	return out, nil
}

// reasoningPart is a reasoning item's summary and its encrypted content;
// raw reasoning text has no place in it.
func reasoningPart(item gjson.Result) ([]ir.Part, error) {
	if notEmpty(item.Get("content")) {
		return nil, ErrNoIRForm
	}
	var texts []string
	for _, s := range item.Get("summary").Array() {
		if s.Get("type").String() != "summary_text" {
			return nil, ErrNoIRForm
		}
		texts = append(texts, s.Get("text").String())
	}
	th := &ir.Thinking{Text: strings.Join(texts, "\n\n"), Signature: item.Get("encrypted_content").String()}
	return []ir.Part{{Kind: ir.PartThinking, Thinking: th}}, nil
}

func toolCallPart(item gjson.Result, name, args string) ([]ir.Part, error) {
	id := item.Get("call_id").String()
	if id == "" || name == "" {
		return nil, ErrNoIRForm
	}
	return []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: id, Name: name, Arguments: args}}}, nil
}

// notEmpty: a member present with something in it (an array or object
// with elements, or any other value but null).
func notEmpty(v gjson.Result) bool {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return false
	case v.IsArray():
		return len(v.Array()) > 0
	case v.IsObject():
		return len(v.Map()) > 0
	}
	return true
}
