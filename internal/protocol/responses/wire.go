package responses

import (
	"crypto/rand"
	"encoding/json"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Meta is what a Response object carries beyond the IR answer.
type Meta struct {
	// ID is the base of every id in the response: resp_<ID>, and items
	// msg_<ID>_<n>, fc_<ID>_<n>, rs_<ID>_<n>. Empty picks a random one.
	ID        string
	CreatedAt int64
	// Model is used when the answer names none.
	Model string
	Echo  Echo
	// Tools maps calls back to the tool kinds the request declared; nil
	// leaves every call a function_call.
	Tools *ToolMap
	// responseID is the whole id of a response an upstream named, which a
	// resumed stream goes on with (see Sent.Resume).
	responseID string
}

func (m *Meta) fill() {
	if m.ID == "" {
		m.ID = rand.Text()
	}
	if m.CreatedAt == 0 {
		m.CreatedAt = time.Now().Unix()
	}
}

// ResponseID is the response id that Meta m gives.
func (m Meta) ResponseID() string {
	if m.responseID != "" {
		return m.responseID
	}
	return "resp_" + m.ID
}

func (m Meta) itemID(prefix string, n int) string { return prefix + "_" + m.ID + "_" + strconv.Itoa(n) }

type wireResponse struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	CreatedAt          int64           `json:"created_at"`
	Status             string          `json:"status"`
	Background         bool            `json:"background"`
	Error              *wireError      `json:"error"`
	IncompleteDetails  *wireIncomplete `json:"incomplete_details"`
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    json.RawMessage `json:"max_output_tokens"`
	Model              string          `json:"model"`
	Output             []any           `json:"output"`
	ParallelToolCalls  json.RawMessage `json:"parallel_tool_calls"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Reasoning          json.RawMessage `json:"reasoning"`
	Store              bool            `json:"store"`
	Temperature        json.RawMessage `json:"temperature"`
	Text               json.RawMessage `json:"text"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              json.RawMessage `json:"tools"`
	TopP               json.RawMessage `json:"top_p"`
	Truncation         string          `json:"truncation"`
	Usage              *wireUsage      `json:"usage"`
	User               json.RawMessage `json:"user"`
	Metadata           json.RawMessage `json:"metadata"`
}

type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type wireIncomplete struct {
	Reason string `json:"reason"`
}

type wireUsage struct {
	InputTokens         int               `json:"input_tokens"`
	InputTokensDetails  wireInputDetails  `json:"input_tokens_details"`
	OutputTokens        int               `json:"output_tokens"`
	OutputTokensDetails wireOutputDetails `json:"output_tokens_details"`
	TotalTokens         int               `json:"total_tokens"`
}

type wireInputDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type wireOutputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

func toWireUsage(u ir.Usage) *wireUsage {
	return &wireUsage{
		InputTokens: u.InputTokens, InputTokensDetails: wireInputDetails{CachedTokens: u.CacheReadTokens},
		OutputTokens: u.OutputTokens, OutputTokensDetails: wireOutputDetails{ReasoningTokens: u.ReasoningTokens},
		TotalTokens: u.Total(),
	}
}

type wireMessage struct {
	ID      string     `json:"id"`
	Type    string     `json:"type"`
	Status  string     `json:"status"`
	Role    string     `json:"role"`
	Content []wireText `json:"content"`
}

type wireText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

func outputText(s string) wireText {
	return wireText{Type: "output_text", Text: s, Annotations: []any{}}
}

type wireFunctionCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// wireCustomCall is a call of a custom (freeform) tool: raw input, no JSON.
type wireCustomCall struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

// callItem is the output item for a tool call, in the kind the request
// declared its tool.
func (m Meta) callItem(n int, c *ir.ToolCall, status string) any {
	if m.Tools.IsCustom(c.Name) {
		return wireCustomCall{ID: m.itemID("ctc", n), Type: "custom_tool_call", Status: status,
			CallID: c.ID, Name: c.Name, Input: customInput(c.Arguments)}
	}
	ns, name := m.Tools.Restore(c.Name)
	return wireFunctionCall{ID: m.itemID("fc", n), Type: "function_call", Status: status,
		Arguments: c.Arguments, CallID: c.ID, Name: name, Namespace: ns}
}

type wireReasoning struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	Summary          []wireSummary `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

type wireSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func summaryOf(text string) []wireSummary {
	if text == "" {
		return []wireSummary{}
	}
	return []wireSummary{{Type: "summary_text", Text: text}}
}

func orDefault(v json.RawMessage, def string) json.RawMessage {
	if v == nil {
		return json.RawMessage(def)
	}
	return v
}

// envelope is the Response object around output items, with the request's
// echoed fields; status is completed, incomplete, in_progress or failed.
func envelope(m Meta, model, status string, output []any, usage *wireUsage) wireResponse {
	if output == nil {
		output = []any{}
	}
	e := m.Echo
	return wireResponse{
		ID: m.ResponseID(), Object: "response", CreatedAt: m.CreatedAt, Status: status,
		Instructions: e.Instructions, MaxOutputTokens: e.MaxOutputTokens, Model: model, Output: output,
		ParallelToolCalls: orDefault(e.ParallelToolCalls, "true"),
		Reasoning:         orDefault(e.Reasoning, `{"effort":null,"summary":null}`),
		Temperature:       orDefault(e.Temperature, "1"), Text: orDefault(e.Text, `{"format":{"type":"text"}}`),
		ToolChoice: orDefault(e.ToolChoice, `"auto"`), Tools: orDefault(e.Tools, "[]"), TopP: orDefault(e.TopP, "1"),
		Truncation: "disabled", Usage: usage, User: e.User, Metadata: orDefault(e.Metadata, "{}"),
	}
}

// finalStatus maps why generation ended to the Response status and, for an
// incomplete one, its reason.
func finalStatus(r ir.StopReason) (string, *wireIncomplete) {
	switch r {
	case ir.StopMaxTokens:
		return "incomplete", &wireIncomplete{Reason: "max_output_tokens"}
	case ir.StopContentFilter:
		return "incomplete", &wireIncomplete{Reason: "content_filter"}
	}
	return "completed", nil
}
