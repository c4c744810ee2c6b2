package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicFields are the messages request fields the real API accepts; it
// refuses any other ("Extra inputs are not permitted").
var anthropicFields = []string{
	"model", "messages", "max_tokens", "system", "metadata", "stop_sequences", "stream", "temperature",
	"top_p", "top_k", "tools", "tool_choice", "thinking", "service_tier", "container", "mcp_servers",
	"context_management",
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Source    struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

type anthropicRequest struct {
	Model     string `json:"model"`
	MaxTokens *int   `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	System json.RawMessage `json:"system"`
	Tools  []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// anthropicFake serves POST /v1/messages like the Anthropic API.
func anthropicFake(model, key string) func(rc *recorder, w http.ResponseWriter, r *http.Request) {
	return dialect{
		kind: "anthropic",
		check: func(r *http.Request) (func(http.ResponseWriter, reply), turn, string) {
			req, t, problem := checkAnthropic(r, model, key)
			return func(w http.ResponseWriter, rep reply) {
				if req.Stream {
					streamAnthropic(w, req.Model, rep)
				} else {
					writeJSON(w, http.StatusOK, anthropicMessage(req.Model, rep))
				}
			}, t, problem
		},
		error: func(status int, msg string) any {
			typ := "invalid_request_error"
			if status >= 500 {
				typ = "api_error"
			}
			return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
		},
	}.handler(model)
}

func checkAnthropic(r *http.Request, model, key string) (*anthropicRequest, turn, string) {
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		return nil, turn{}, "expected POST /v1/messages"
	case r.Header.Get("x-api-key") != key:
		return nil, turn{}, fmt.Sprintf("expected x-api-key: <channel key>, got %q", redact(r.Header.Get("x-api-key")))
	case r.Header.Get("anthropic-version") == "":
		return nil, turn{}, "the anthropic-version header is missing"
	}
	var raw map[string]json.RawMessage
	var req anthropicRequest
	body, err := readBody(r)
	if err == nil {
		err = json.Unmarshal(body, &raw)
	}
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		return nil, turn{}, "body is not a messages request: " + err.Error()
	}
	if bad := unknownKeys(raw, anthropicFields...); len(bad) > 0 {
		return nil, turn{}, strings.Join(bad, ", ") + ": Extra inputs are not permitted"
	}
	switch {
	case req.Model != model:
		return nil, turn{}, fmt.Sprintf("model %q, expected %q", req.Model, model)
	case req.MaxTokens == nil || *req.MaxTokens < 1:
		return nil, turn{}, "max_tokens is required and must be at least 1"
	}
	system, ok := contentText(req.System)
	if !ok {
		return nil, turn{}, "system is neither a string nor text blocks"
	}
	t, problem := anthropicTurn(&req)
	t.settings.system, t.settings.turns = system, len(req.Messages)
	t.settings.maxTokens = floatPtr(raw["max_tokens"])
	t.settings.temperature, t.settings.topP = floatPtr(raw["temperature"]), floatPtr(raw["top_p"])
	_ = json.Unmarshal(raw["stop_sequences"], &t.settings.stop)
	return &req, t, problem
}

// anthropicTurn validates the conversation as the API does (a tool_result
// must name a tool_use of an earlier assistant turn and sit in a user turn)
// and extracts the last turn.
func anthropicTurn(req *anthropicRequest) (turn, string) {
	if len(req.Messages) == 0 {
		return turn{}, "messages is empty"
	}
	t := turn{tools: map[string]bool{}}
	for i, tl := range req.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(tl.InputSchema, &schema) != nil || schema.Type != "object" {
			return t, fmt.Sprintf("tools[%d].input_schema must be a JSON schema of type object", i)
		}
		t.tools[tl.Name] = true
	}
	uses := map[string]bool{}
	for i, m := range req.Messages {
		blocks, ok := anthropicBlocks(m.Content)
		if !ok {
			return t, fmt.Sprintf("messages[%d].content is neither a string nor content blocks", i)
		}
		if m.Role != "user" && m.Role != "assistant" {
			return t, fmt.Sprintf("messages[%d].role %q is not user or assistant", i, m.Role)
		}
		t.userText, t.toolResult, t.images = "", "", nil
		for j, b := range blocks {
			if msg := anthropicBlockProblem(m.Role, b, uses); msg != "" {
				return t, fmt.Sprintf("messages[%d].content[%d]: %s", i, j, msg)
			}
			switch b.Type {
			case "text":
				if m.Role == "user" {
					t.userText += b.Text
				}
			case "image":
				t.images = append(t.images, describeAnthropicImage(b))
			case "tool_use":
				uses[b.ID] = true
			case "tool_result":
				text, _ := contentText(b.Content)
				t.toolResult += text
			}
		}
	}
	return t, ""
}

func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}, s != ""
	}
	var blocks []anthropicBlock
	return blocks, json.Unmarshal(raw, &blocks) == nil && len(blocks) > 0
}

func anthropicBlockProblem(role string, b anthropicBlock, uses map[string]bool) string {
	switch b.Type {
	case "text":
		if b.Text == "" {
			return "text blocks must be non-empty"
		}
	case "tool_use":
		var input map[string]any
		if role != "assistant" || b.ID == "" || b.Name == "" || json.Unmarshal(b.Input, &input) != nil || input == nil {
			return "tool_use needs an assistant turn, an id, a name and an object input"
		}
	case "tool_result":
		if role != "user" || !uses[b.ToolUseID] {
			return fmt.Sprintf("tool_result tool_use_id %q answers no tool_use of an earlier assistant turn", b.ToolUseID)
		}
		if _, ok := contentText(b.Content); !ok {
			return "tool_result content is neither a string nor text blocks"
		}
	case "image":
		if _, ok := describeImage(b.Source.MediaType, b.Source.Data); b.Source.Type == "base64" && !ok {
			return "image source is not valid base64 with a media_type"
		}
	case "document", "thinking", "redacted_thinking":
	default:
		return fmt.Sprintf("unknown content block type %q", b.Type)
	}
	return ""
}

func describeAnthropicImage(b anthropicBlock) string {
	if desc, ok := describeImage(b.Source.MediaType, b.Source.Data); ok {
		return desc
	}
	return b.Source.Type + " image"
}

func anthropicContent(rep reply) []any {
	if rep.toolCall {
		return []any{map[string]any{"type": "tool_use", "id": "toolu_fake_weather", "name": weatherTool,
			"input": map[string]any{"city": "Paris"}}}
	}
	return []any{map[string]any{"type": "text", "text": rep.text}}
}

func stopOf(rep reply) string {
	if rep.toolCall {
		return "tool_use"
	}
	return "end_turn"
}

func anthropicUsage(output int) map[string]any {
	return map[string]any{"input_tokens": fakeInputTokens, "output_tokens": output,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func anthropicMessage(model string, rep reply) map[string]any {
	return map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"content": anthropicContent(rep), "stop_reason": stopOf(rep), "stop_sequence": nil,
		"usage": anthropicUsage(fakeOutputTokens)}
}

// streamAnthropic sends the documented event sequence; output_tokens in
// message_delta is the cumulative count, as the API reports it.
func streamAnthropic(w http.ResponseWriter, model string, rep reply) {
	s := newSSE(w)
	start := anthropicMessage(model, rep)
	start["content"], start["stop_reason"], start["usage"] = []any{}, nil, anthropicUsage(1)
	s.send("message_start", map[string]any{"type": "message_start", "message": start})
	if rep.toolCall {
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": "toolu_fake_weather", "name": weatherTool, "input": map[string]any{}}})
		s.send("ping", map[string]any{"type": "ping"})
		for _, part := range []string{`{"city":`, ` "Paris"}`} {
			s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	} else {
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.send("ping", map[string]any{"type": "ping"})
		for i, p := range pieces(rep.text) {
			s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": p}})
			rep.pauseAfter(i)
		}
	}
	s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopOf(rep), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": fakeOutputTokens}})
	s.send("message_stop", map[string]any{"type": "message_stop"})
}
