package ir

import (
	"encoding/json"
	"fmt"
)

// Role is who authored a message.
type Role string

// The roles a conversation can hold. Tool results travel as RoleTool so that
// formats which put them in user turns (messages-native, alternate-native) and
// formats with a dedicated role (OpenAI) can both be expressed.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartKind tells which field of a Part is set.
type PartKind string

// Kinds of content a message part can carry.
const (
	PartText       PartKind = "text"
	PartImage      PartKind = "image"
	PartFile       PartKind = "file"
	PartToolCall   PartKind = "tool_call"
	PartToolResult PartKind = "tool_result"
	PartThinking   PartKind = "thinking"
	// PartRedactedThinking is opaque provider-encrypted reasoning that must be
	// sent back verbatim on the next turn and is never shown.
	PartRedactedThinking PartKind = "redacted_thinking"
)

// Request is one model call, independent of the wire format it arrived in.
type Request struct {
	Model    string
	System   []Part
	Messages []Message
	Tools    []Tool
	// ToolChoice is nil when the client did not say.
	ToolChoice *ToolChoice

	MaxTokens        *int
	Temperature      *float64
	TopP             *float64
	TopK             *int
	FrequencyPenalty *float64
	PresencePenalty  *float64
	Seed             *int64
	N                *int
	Stop             []string
	Stream           bool
	// IncludeUsage is the client's explicit wish for usage in a stream.
	IncludeUsage bool

	ResponseFormat *ResponseFormat
	Reasoning      *Reasoning
	User           string
	Metadata       map[string]any
	// ParallelToolCalls is nil when the client did not say.
	ParallelToolCalls *bool
}

// Message is one conversation turn.
type Message struct {
	Role  Role
	Name  string
	Parts []Part
}

// Part is one piece of message content; Kind says which pointer field is set.
type Part struct {
	Kind       PartKind
	Text       string
	Media      *Media
	ToolCall   *ToolCall
	ToolResult *ToolResult
	Thinking   *Thinking
	// CacheControl is the messages-native cache hint, carried opaquely.
	CacheControl json.RawMessage
}

// Media is an image or file given either by URL or inline (base64 Data).
type Media struct {
	URL      string
	MIMEType string
	// Data is base64 text, kept encoded because every format wants it so.
	Data   string
	Detail string
	Name   string
}

// ToolCall is the assistant asking for a tool. Arguments is a JSON object text.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ToolResult answers a ToolCall. Name is kept for formats that match results
// to calls by function name rather than id.
type ToolResult struct {
	CallID  string
	Name    string
	Content []Part
	IsError bool
}

// Thinking is visible reasoning text with the provider's signature, if any.
type Thinking struct {
	Text      string
	Signature string
	// Redacted holds opaque data for PartRedactedThinking.
	Redacted string
}

// Tool is a function the model may call. Parameters is a JSON Schema object.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// Native is a provider's own tool definition (a server-side tool such
	// as web search), carried verbatim. Only a codec of the format it came
	// from can send it; other codecs refuse it with a 400 naming the tool,
	// because dropping it would silently change what the model can do.
	Native json.RawMessage
}

// NativeToolError is the 400 a codec returns for a provider tool it cannot
// express, naming tools[i].
func NativeToolError(i int, name string) *Error {
	return &Error{Status: 400, Kind: KindInvalidRequest, Code: "unsupported_tool", Param: fmt.Sprintf("tools[%d]", i),
		Message: fmt.Sprintf("tools[%d] (%s) is a provider-specific tool that the selected channel's format cannot express", i, name)}
}

// ToolChoiceMode is how the model must use tools.
type ToolChoiceMode string

// Tool choice modes; ToolChoiceTool pins one function by Name.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required"
	ToolChoiceTool     ToolChoiceMode = "tool"
)

// ToolChoice constrains tool use.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string
}

// ResponseFormat asks for JSON output; Schema is set for json_schema.
type ResponseFormat struct {
	Type   string // text, json_object, json_schema
	Name   string
	Schema json.RawMessage
	Strict bool
}

// Reasoning asks for model reasoning. Either Effort (low/medium/high) or
// BudgetTokens may be set; converters translate one into the other.
type Reasoning struct {
	Effort       string
	BudgetTokens int
	// Disabled is true when the client explicitly turned reasoning off.
	Disabled bool
}

// SingleAnswer refuses a request for several answers (n > 1) on a converted
// call: the converting codecs carry one candidate, and relaying one while
// the upstream bills for n would charge for answers the client never sees.
// Passthrough calls never reach it, so n works when formats match.
func SingleAnswer(req *Request) *Error {
	if req.N != nil && *req.N > 1 {
		return &Error{Status: 400, Kind: KindInvalidRequest, Code: "unsupported_parameter", Param: "n",
			Message: "n > 1 (several answers) is only supported when the channel speaks the client's own format"}
	}
	return nil
}
