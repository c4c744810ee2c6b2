package cohere

import "encoding/json"

// wireRequest is the body of POST /v2/chat.
type wireRequest struct {
	Model            string        `json:"model"`
	Messages         []wireMessage `json:"messages"`
	Tools            []wireTool    `json:"tools,omitempty"`
	ToolChoice       string        `json:"tool_choice,omitempty"`
	ResponseFormat   *wireFormat   `json:"response_format,omitempty"`
	MaxTokens        *int          `json:"max_tokens,omitempty"`
	StopSequences    []string      `json:"stop_sequences,omitempty"`
	Temperature      *float64      `json:"temperature,omitempty"`
	Seed             *int64        `json:"seed,omitempty"`
	FrequencyPenalty *float64      `json:"frequency_penalty,omitempty"`
	PresencePenalty  *float64      `json:"presence_penalty,omitempty"`
	K                *int          `json:"k,omitempty"`
	P                *float64      `json:"p,omitempty"`
	Thinking         *wireThinking `json:"thinking,omitempty"`
	Stream           bool          `json:"stream,omitempty"`
}

// wireMessage is one turn. Content is a string or a list of content items;
// tool calls and the tool plan only appear on assistant turns, tool_call_id
// only on tool turns.
type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"`
	ToolPlan   string         `json:"tool_plan,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// wireContent is a content item: text, or an image by URL (a web address
// or a data URI).
type wireContent struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string      `json:"type"`
	Function wireToolDef `json:"function"`
}

type wireToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// wireFormat is response_format: json_object, with a schema when one is
// given.
type wireFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

type wireThinking struct {
	Type        string `json:"type"`
	TokenBudget int    `json:"token_budget,omitempty"`
}
