package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

var responsesFields = []string{"model", "input", "instructions", "tools", "tool_choice", "stream", "store",
	"max_output_tokens", "temperature", "top_p", "previous_response_id", "metadata", "parallel_tool_calls", "reasoning",
	"text", "truncation", "user", "include", "background", "service_tier", "prompt", "prompt_cache_key",
	"safety_identifier", "stream_options", "max_tool_calls", "top_logprobs", "conversation"}

// responsesItem is an input item of the Responses API, in any of the
// shapes the tests send.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Args    string          `json:"arguments"`
	Output  json.RawMessage `json:"output"`
}

// responsesTurn validates the input as the API does (a function_call_output
// must answer a function_call given earlier) and extracts the last turn.
func responsesTurn(raw map[string]json.RawMessage) (turn, string) {
	t := turn{tools: map[string]bool{}}
	var tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw["tools"], &tools)
	for i, tl := range tools {
		if tl.Type == "function" && tl.Name == "" {
			return t, fmt.Sprintf("tools[%d].name is required (Responses tools are flat, not nested under function)", i)
		}
		t.tools[tl.Name] = tl.Type == "function"
	}
	t.settings = settings{system: str(raw["instructions"]), turns: 1, maxTokens: floatPtr(raw["max_output_tokens"]),
		temperature: floatPtr(raw["temperature"]), topP: floatPtr(raw["top_p"])}
	var text string
	if json.Unmarshal(raw["input"], &text) == nil {
		t.userText = text
		return t, ""
	}
	t.settings.turns = 0
	var items []responsesItem
	if err := json.Unmarshal(raw["input"], &items); err != nil || len(items) == 0 {
		return t, "input must be a string or a non-empty list of items"
	}
	calls := map[string]bool{}
	for i, it := range items {
		if it.Role != "" {
			t.settings.turns++
		}
		switch {
		case it.Type == "function_call":
			if it.CallID == "" || !json.Valid([]byte(it.Args)) {
				return t, fmt.Sprintf("input[%d]: a function_call needs a call_id and JSON arguments", i)
			}
			calls[it.CallID] = true
		case it.Type == "function_call_output":
			if !calls[it.CallID] {
				return t, fmt.Sprintf("input[%d]: No tool call found for function call output with call_id %s", i, it.CallID)
			}
			out, _ := contentText(it.Output)
			t.toolResult += out
		case it.Role == "user":
			s, ok := responsesContentText(it.Content)
			if !ok {
				return t, fmt.Sprintf("input[%d].content is neither a string nor input_text parts", i)
			}
			t.userText, t.toolResult = s, ""
		}
	}
	return t, ""
}

func responsesContentText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), true
}

// responsesCreate answers on the chat model, stores the response unless
// store is false, and streams the documented event sequence when asked.
func (u *openAIUpstream) responsesCreate(x *exchange) {
	raw, model, ok := x.jsonBody(responsesFields, u.chatModel)
	if !ok {
		return
	}
	t, problem := responsesTurn(raw)
	var rep reply
	if problem == "" {
		rep, problem = decide("openai", t)
	}
	switch {
	case problem != "":
		x.refuse("%s", problem)
		return
	case rep.fail:
		writeJSON(x.w, http.StatusInternalServerError, openAIError(500, "fake openai upstream: a server error, as asked"))
		return
	}
	u.mu.Lock()
	u.seq++
	id := fmt.Sprintf("resp_fake_%d", u.seq)
	u.mu.Unlock()
	final := responseObject(id, model, "completed", responseOutput(id, rep), true)
	if string(raw["store"]) != "false" {
		b, _ := json.Marshal(final)
		u.mu.Lock()
		u.stored[id] = b
		u.mu.Unlock()
	}
	x.served(model)
	if string(raw["stream"]) == "true" {
		streamResponse(x.w, id, model, rep, final)
		return
	}
	writeJSON(x.w, http.StatusOK, final)
}

// responsesCompact compacts a conversation: its user messages followed by
// one compaction item, as the API answers.
func (u *openAIUpstream) responsesCompact(x *exchange) {
	raw, model, ok := x.jsonBody([]string{"model", "input", "instructions", "previous_response_id", "prompt_cache_key"}, u.chatModel)
	if !ok {
		return
	}
	t, problem := responsesTurn(raw)
	if problem != "" || t.userText == "" {
		x.refuse("input must hold a user message to compact (%s)", problem)
		return
	}
	x.served(model)
	writeJSON(x.w, http.StatusOK, map[string]any{"id": "cmp_fake", "object": "response.compaction", "created_at": 1700000000,
		"output": []any{
			map[string]any{"type": "message", "id": "msg_cmp_fake", "status": "completed", "role": "user",
				"content": []any{map[string]any{"type": "input_text", "text": t.userText}}},
			map[string]any{"type": "compaction", "id": "cmp_item_fake", "encrypted_content": "fake-compacted-context"},
		},
		"usage": responseObject("", "", "", nil, true)["usage"]})
}

// responsesRetrieve returns a stored response; retrieval is not billed.
func (u *openAIUpstream) responsesRetrieve(x *exchange) {
	id := strings.TrimPrefix(x.r.URL.Path, "/v1/responses/")
	u.mu.Lock()
	b, ok := u.stored[id]
	u.mu.Unlock()
	if !ok {
		writeJSON(x.w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "Response with id '" + id + "' not found.",
			"type": "invalid_request_error", "param": nil, "code": nil}})
		return
	}
	x.w.Header().Set("Content-Type", "application/json")
	_, _ = x.w.Write(b)
}

func responseOutput(id string, rep reply) []any {
	if rep.toolCall {
		return []any{map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_fake_weather",
			"name": weatherTool, "arguments": weatherArgs, "status": "completed"}}
	}
	return []any{map[string]any{"type": "message", "id": "msg_" + id, "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}}}}
}

func responseObject(id, model, status string, output []any, withUsage bool) map[string]any {
	var usage any
	if withUsage {
		usage = map[string]any{"input_tokens": fakeInputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": fakeOutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": fakeInputTokens + fakeOutputTokens}
	}
	return map[string]any{"id": id, "object": "response", "created_at": 1700000000, "status": status, "model": model,
		"output": output, "usage": usage, "error": nil, "incomplete_details": nil, "instructions": nil, "metadata": map[string]any{},
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "temperature": 1.0, "top_p": 1.0,
		"max_output_tokens": nil, "previous_response_id": nil, "text": map[string]any{"format": map[string]any{"type": "text"}},
		"truncation": "disabled", "store": true}
}

// streamResponse sends the event sequence of the Responses API, each event
// named and numbered.
func streamResponse(w http.ResponseWriter, id, model string, rep reply, final map[string]any) {
	s := newSSE(w)
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		s.send(typ, fields)
	}
	send("response.created", map[string]any{"response": responseObject(id, model, "in_progress", []any{}, false)})
	send("response.in_progress", map[string]any{"response": responseObject(id, model, "in_progress", []any{}, false)})
	item := responseOutput(id, rep)[0].(map[string]any)
	itemID := item["id"]
	if rep.toolCall {
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "function_call",
			"id": itemID, "call_id": item["call_id"], "name": weatherTool, "arguments": "", "status": "in_progress"}})
		for _, part := range []string{`{"city":`, `"Paris"}`} {
			send("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": 0, "delta": part})
		}
		send("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": 0, "arguments": weatherArgs})
	} else {
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message",
			"id": itemID, "status": "in_progress", "role": "assistant", "content": []any{}}})
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		send("response.content_part.added", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "part": part})
		for _, p := range pieces(rep.text) {
			send("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "delta": p, "logprobs": []any{}})
		}
		send("response.output_text.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "text": rep.text, "logprobs": []any{}})
		done := map[string]any{"type": "output_text", "text": rep.text, "annotations": []any{}}
		send("response.content_part.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "part": done})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	send("response.completed", map[string]any{"response": final})
}
