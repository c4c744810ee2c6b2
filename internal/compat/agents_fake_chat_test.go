package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// agentChat is the chat-completions wire (an OpenAI channel).
type agentChat struct{ key string }

type agentChatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
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
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func (a agentChat) read(r *http.Request, body []byte) (agentView, bool, string) {
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions":
		return agentView{}, false, "expected POST /v1/chat/completions"
	case r.Header.Get("Authorization") != "Bearer "+a.key:
		return agentView{}, false, "expected Authorization: Bearer <channel key>"
	}
	var raw map[string]json.RawMessage
	var req agentChatRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return agentView{}, false, err.Error()
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return agentView{}, false, err.Error()
	}
	if bad := unknownKeys(raw, openAIFields...); len(bad) > 0 {
		return agentView{}, false, "Unrecognized request arguments supplied: " + strings.Join(bad, ", ")
	}
	v := agentView{model: req.Model, tools: map[string]map[string]json.RawMessage{}}
	for i, tl := range req.Tools {
		props, ok := schemaProps(tl.Function.Parameters)
		if tl.Type != "function" || !ok {
			return v, false, fmt.Sprintf("tools[%d] must be a function with an object schema", i)
		}
		v.tools[tl.Function.Name] = props
	}
	v.noUsage = req.StreamOptions == nil || !req.StreamOptions.IncludeUsage
	return v, req.Stream, a.conversation(&req, &v)
}

// conversation checks roles and that each tool message answers a call of
// the assistant turn before it, and reads the trailing tool output.
func (agentChat) conversation(req *agentChatRequest, v *agentView) string {
	if len(req.Messages) == 0 {
		return "messages must not be empty"
	}
	calls := map[string]string{}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user":
			calls, v.result = map[string]string{}, ""
		case "assistant":
			calls, v.result = map[string]string{}, ""
			for j, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || !json.Valid([]byte(c.Function.Arguments)) {
					return fmt.Sprintf("messages[%d].tool_calls[%d] needs an id, type function and JSON arguments", i, j)
				}
				calls[c.ID] = c.Function.Name
			}
		case "tool":
			name, ok := calls[m.ToolCallID]
			if !ok {
				return fmt.Sprintf("messages[%d]: tool_call_id %q answers no preceding tool call", i, m.ToolCallID)
			}
			text, _ := contentText(m.Content)
			v.result += text
			v.callNamed = name
		default:
			return fmt.Sprintf("messages[%d].role %q is not valid", i, m.Role)
		}
	}
	return ""
}

func (agentChat) fail(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

func (agentChat) write(w http.ResponseWriter, v agentView, stream bool, rep agentReply) {
	msg := map[string]any{"role": "assistant", "content": rep.text}
	finish := "stop"
	call := map[string]any{"id": "call_agent_1", "type": "function", "function": map[string]any{"name": rep.name, "arguments": rep.args}}
	if rep.call {
		finish = "tool_calls"
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
	}
	if !stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": "chatcmpl-agent", "object": "chat.completion", "created": 1700000000,
			"model": v.model, "usage": openAIUsage(),
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}})
		return
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-agent", "object": "chat.completion.chunk", "created": 1700000000, "model": v.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if rep.call {
		// The API sends the call's id and name first, then its arguments.
		call["index"], call["function"] = 0, map[string]any{"name": rep.name, "arguments": ""}
		s.send("", chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}, nil))
		s.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": rep.args}}}}, nil))
	} else {
		s.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, p := range pieces(rep.text) {
			s.send("", chunk(map[string]any{"content": p}, nil))
		}
	}
	s.send("", chunk(map[string]any{}, finish))
	if !v.noUsage {
		s.send("", map[string]any{"id": "chatcmpl-agent", "object": "chat.completion.chunk", "created": 1700000000,
			"model": v.model, "choices": []any{}, "usage": openAIUsage()})
	}
	s.send("", "[DONE]")
}
