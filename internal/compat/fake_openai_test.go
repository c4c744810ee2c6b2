package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// openAIFields are the chat completions request fields the real API accepts.
var openAIFields = []string{
	"model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "temperature",
	"top_p", "n", "stop", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
	"user", "tools", "tool_choice", "parallel_tool_calls", "response_format", "seed", "service_tier", "store",
	"metadata", "reasoning_effort", "modalities", "audio", "prediction", "web_search_options", "verbosity",
	"functions", "function_call", "safety_identifier", "prompt_cache_key",
}

type openAIMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type openAIRequest struct {
	Model         string          `json:"model"`
	Messages      []openAIMessage `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// openAIFake serves POST /v1/chat/completions like the OpenAI API.
func openAIFake(model, key string) func(rc *recorder, w http.ResponseWriter, r *http.Request) {
	return dialect{
		kind: "openai",
		check: func(r *http.Request) (func(http.ResponseWriter, reply), turn, string) {
			req, t, problem := checkOpenAI(r, model, key)
			return func(w http.ResponseWriter, rep reply) {
				if req.Stream {
					streamOpenAI(w, req, rep)
				} else {
					writeJSON(w, http.StatusOK, openAICompletion(req.Model, rep))
				}
			}, t, problem
		},
		error: func(status int, msg string) any {
			typ := "invalid_request_error"
			if status >= 500 {
				typ = "server_error"
			}
			return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
		},
	}.handler(model)
}

func checkOpenAI(r *http.Request, model, key string) (*openAIRequest, turn, string) {
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions":
		return nil, turn{}, "expected POST /v1/chat/completions"
	case r.Header.Get("Authorization") != "Bearer "+key:
		return nil, turn{}, fmt.Sprintf("expected Authorization: Bearer <channel key>, got %q", redact(r.Header.Get("Authorization")))
	}
	var raw map[string]json.RawMessage
	var req openAIRequest
	body, err := readBody(r)
	if err == nil {
		err = json.Unmarshal(body, &raw)
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		return nil, turn{}, "body is not a chat completions request: " + err.Error()
	}
	if bad := unknownKeys(raw, openAIFields...); len(bad) > 0 {
		return nil, turn{}, "unrecognized request arguments " + strings.Join(bad, ", ")
	}
	if req.Model != model {
		return nil, turn{}, fmt.Sprintf("model %q, expected %q", req.Model, model)
	}
	t, problem := openAITurn(&req)
	t.settings.maxTokens = floatPtr(raw["max_tokens"])
	if t.settings.maxTokens == nil {
		t.settings.maxTokens = floatPtr(raw["max_completion_tokens"])
	}
	t.settings.temperature, t.settings.topP = floatPtr(raw["temperature"]), floatPtr(raw["top_p"])
	t.settings.stop = stringOrList(raw["stop"])
	return &req, t, problem
}

// stringOrList reads a field that is a string or a list of strings.
func stringOrList(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(raw, &list)
	return list
}

// openAIImages describes the data-URL images of a content part list.
func openAIImages(raw json.RawMessage) ([]string, bool) {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil, true // a plain string has no images
	}
	var out []string
	for _, p := range parts {
		if p.Type != "image_url" {
			continue
		}
		mime, data, ok := dataURL(p.ImageURL.URL)
		desc, ok2 := describeImage(mime, data)
		if !ok || !ok2 {
			return nil, false
		}
		out = append(out, desc)
	}
	return out, true
}

// openAITurn validates the conversation as the API does (tool messages must
// answer a preceding assistant tool call) and extracts the last turn.
func openAITurn(req *openAIRequest) (turn, string) {
	if len(req.Messages) == 0 {
		return turn{}, "messages is empty"
	}
	t := turn{tools: map[string]bool{}}
	for _, tl := range req.Tools {
		t.tools[tl.Function.Name] = tl.Type == "function"
	}
	calls := map[string]bool{}
	for i, m := range req.Messages {
		text, ok := contentText(m.Content)
		if !ok {
			return t, fmt.Sprintf("messages[%d].content is neither a string nor text parts", i)
		}
		switch m.Role {
		case "system", "developer":
			t.settings.system += text
			continue
		case "user":
			t.userText, t.toolResult = text, ""
			if t.images, ok = openAIImages(m.Content); !ok {
				return t, fmt.Sprintf("messages[%d].content has an image_url that is not a base64 data URL", i)
			}
		case "assistant":
			for _, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Type != "function" || !json.Valid([]byte(tc.Function.Arguments)) {
					return t, fmt.Sprintf("messages[%d].tool_calls needs id, type function and JSON arguments", i)
				}
				calls[tc.ID] = true
			}
			t.userText, t.toolResult, t.images = "", "", nil
		case "tool":
			if !calls[m.ToolCallID] {
				return t, fmt.Sprintf("messages[%d].tool_call_id %q answers no preceding tool call", i, m.ToolCallID)
			}
			t.toolResult += text
		default:
			return t, fmt.Sprintf("messages[%d].role %q is not valid", i, m.Role)
		}
		t.settings.turns++
	}
	return t, ""
}

func openAIMessageOf(rep reply) map[string]any {
	if rep.toolCall {
		return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": "call_fake_weather", "type": "function",
			"function": map[string]any{"name": weatherTool, "arguments": weatherArgs}}}}
	}
	return map[string]any{"role": "assistant", "content": rep.text}
}

func finishOf(rep reply) string {
	if rep.toolCall {
		return "tool_calls"
	}
	return "stop"
}

func openAIUsage() map[string]any {
	return map[string]any{"prompt_tokens": fakeInputTokens, "completion_tokens": fakeOutputTokens,
		"total_tokens": fakeInputTokens + fakeOutputTokens}
}

func openAICompletion(model string, rep reply) map[string]any {
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": openAIMessageOf(rep), "logprobs": nil, "finish_reason": finishOf(rep)}},
		"usage":   openAIUsage(),
	}
}

// streamOpenAI sends the chunks the API sends: a role chunk, deltas, the
// finish chunk, a usage chunk only when include_usage asked for it, [DONE].
func streamOpenAI(w http.ResponseWriter, req *openAIRequest, rep reply) {
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	if rep.toolCall {
		s.send("", chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": "call_fake_weather", "type": "function",
			"function": map[string]any{"name": weatherTool, "arguments": ""}}}}, nil))
		for _, part := range []string{`{"city":`, `"Paris"}`} {
			s.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": part}}}}, nil))
		}
	} else {
		s.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for i, p := range pieces(rep.text) {
			s.send("", chunk(map[string]any{"content": p}, nil))
			rep.pauseAfter(i)
		}
	}
	s.send("", chunk(map[string]any{}, finishOf(rep)))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		s.send("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
			"model": req.Model, "choices": []any{}, "usage": openAIUsage()})
	}
	s.send("", "[DONE]")
}
