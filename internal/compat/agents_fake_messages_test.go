package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// agentMessages is the messages wire (an Anthropic channel).
type agentMessages struct{ key string }

type agentMessagesRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	Thinking  *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

type agentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

var toolUseID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func (a agentMessages) read(r *http.Request, body []byte) (agentView, bool, string) {
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		return agentView{}, false, "expected POST /v1/messages"
	case r.Header.Get("x-api-key") != a.key || r.Header.Get("anthropic-version") == "":
		return agentView{}, false, "expected x-api-key: <channel key> and an anthropic-version header"
	}
	var raw map[string]json.RawMessage
	var req agentMessagesRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return agentView{}, false, err.Error()
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return agentView{}, false, err.Error()
	}
	if bad := unknownKeys(raw, anthropicFields...); len(bad) > 0 {
		return agentView{}, false, strings.Join(bad, ", ") + ": Extra inputs are not permitted"
	}
	if _, ok := contentText(raw["system"]); !ok {
		return agentView{}, false, "system: Input should be a valid string or a list of text blocks"
	}
	v := agentView{model: req.Model, tools: map[string]map[string]json.RawMessage{}}
	if p := messagesThinking(&req, &v); p != "" {
		return v, false, p
	}
	for i, tl := range req.Tools {
		props, ok := schemaProps(tl.InputSchema)
		if !ok {
			return v, false, fmt.Sprintf("tools.%d.custom.input_schema: JSON schema is invalid: type must be object", i)
		}
		v.tools[tl.Name] = props
	}
	return v, req.Stream, a.conversation(&req, &v)
}

func messagesThinking(req *agentMessagesRequest, v *agentView) string {
	if req.MaxTokens < 1 {
		return "max_tokens: Field required"
	}
	if req.Thinking == nil || req.Thinking.Type == "disabled" {
		return ""
	}
	v.thinking = true
	if req.Thinking.Type == "enabled" && (req.Thinking.BudgetTokens < 1024 || req.Thinking.BudgetTokens >= req.MaxTokens) {
		return fmt.Sprintf("`max_tokens` must be greater than `thinking.budget_tokens` (at least 1024): %d, %d", req.MaxTokens, req.Thinking.BudgetTokens)
	}
	return ""
}

// conversation checks the turns as the API does: user and assistant only,
// every tool_result answering a tool_use of the assistant turn just before,
// and, with thinking on, the assistant turn whose call is being answered
// starting with its signed thinking.
func (agentMessages) conversation(req *agentMessagesRequest, v *agentView) string {
	if len(req.Messages) == 0 {
		return "messages: at least one message is required"
	}
	uses := map[string]string{}
	var lastAssistant []agentBlock
	for i, m := range req.Messages {
		blocks, ok := agentBlocks(m.Content)
		if !ok {
			return fmt.Sprintf("messages.%d.content: Input should be a valid string or list of blocks", i)
		}
		switch m.Role {
		case "assistant":
			uses, lastAssistant, v.result = map[string]string{}, blocks, ""
			for j, b := range blocks {
				if b.Type == "tool_use" {
					if !isJSONObject(b.Input) {
						return fmt.Sprintf("messages.%d.content.%d.tool_use.input: Input should be a valid dictionary", i, j)
					}
					if !toolUseID.MatchString(b.ID) {
						return fmt.Sprintf("messages.%d.content.%d.tool_use.id: String should match pattern", i, j)
					}
					uses[b.ID] = b.Name
				}
			}
		case "user":
			v.result = ""
			for j, b := range blocks {
				if b.Type != "tool_result" {
					continue
				}
				name, ok := uses[b.ToolUseID]
				if !ok {
					return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s", i, j, b.ToolUseID)
				}
				text, _ := contentText(b.Content)
				v.result, v.callNamed = v.result+text, name
			}
		default:
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
	}
	if v.result != "" && v.thinking && len(lastAssistant) > 0 {
		first := lastAssistant[0]
		if first.Type != "thinking" && first.Type != "redacted_thinking" {
			return "Expected `thinking` or `redacted_thinking`, but found `" + first.Type +
				"`. When `thinking` is enabled, a final `assistant` message must start with a thinking block"
		}
		v.replayed = first.Signature
	}
	return ""
}

func agentBlocks(raw json.RawMessage) ([]agentBlock, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []agentBlock{{Type: "text", Text: s}}, true
	}
	var blocks []agentBlock
	return blocks, json.Unmarshal(raw, &blocks) == nil
}

func (agentMessages) fail(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"type": "error",
		"error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

func (agentMessages) write(w http.ResponseWriter, v agentView, stream bool, rep agentReply) {
	var blocks []map[string]any
	if rep.signature != "" {
		blocks = append(blocks, map[string]any{"type": "thinking", "thinking": "The note holds the answer.", "signature": rep.signature})
	}
	stop := "end_turn"
	if rep.call {
		stop = "tool_use"
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": "toolu_01Agent", "name": rep.name, "input": json.RawMessage(rep.args)})
	} else {
		blocks = append(blocks, map[string]any{"type": "text", "text": rep.text})
	}
	usage := map[string]any{"input_tokens": fakeInputTokens, "output_tokens": fakeOutputTokens}
	msg := map[string]any{"id": "msg_agent", "type": "message", "role": "assistant", "model": v.model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	s := newSSE(w)
	msg["content"], msg["stop_reason"], msg["usage"] = []any{}, nil, map[string]any{"input_tokens": fakeInputTokens, "output_tokens": 1}
	s.send("message_start", map[string]any{"type": "message_start", "message": msg})
	for i, b := range blocks {
		sendMessagesBlock(s, i, b)
	}
	s.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": fakeOutputTokens}})
	s.send("message_stop", map[string]any{"type": "message_stop"})
}

// sendMessagesBlock streams one block as the API does: an empty start, its
// deltas, a stop.
func sendMessagesBlock(s *sseWriter, i int, b map[string]any) {
	start := map[string]any{"type": b["type"]}
	var deltas []map[string]any
	switch b["type"] {
	case "thinking":
		start["thinking"], start["signature"] = "", ""
		deltas = []map[string]any{{"type": "thinking_delta", "thinking": b["thinking"]}, {"type": "signature_delta", "signature": b["signature"]}}
	case "tool_use":
		start["id"], start["name"], start["input"] = b["id"], b["name"], map[string]any{}
		deltas = []map[string]any{{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}}
	default:
		start["text"] = ""
		for _, p := range pieces(b["text"].(string)) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
		}
	}
	s.send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
	for _, d := range deltas {
		s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}
