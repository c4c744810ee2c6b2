package bedrock

import "encoding/json"

// wireRequest is a Converse request body. The model is not in the body: it
// is the {modelId} of the URL.
type wireRequest struct {
	Messages        []wireMessage   `json:"messages"`
	System          []wireBlock     `json:"system,omitempty"`
	InferenceConfig *wireInference  `json:"inferenceConfig,omitempty"`
	ToolConfig      *wireToolConfig `json:"toolConfig,omitempty"`
	// AdditionalModelRequestFields carries model-specific parameters the
	// Converse shape has no field for (an Anthropic model's thinking).
	AdditionalModelRequestFields map[string]any `json:"additionalModelRequestFields,omitempty"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

// wireBlock is Converse's ContentBlock union (also the system and tool
// result block unions): exactly one field is set.
type wireBlock struct {
	Text             *string         `json:"text,omitempty"`
	Image            *wireImage      `json:"image,omitempty"`
	Document         *wireDocument   `json:"document,omitempty"`
	ToolUse          *wireToolUse    `json:"toolUse,omitempty"`
	ToolResult       *wireToolResult `json:"toolResult,omitempty"`
	ReasoningContent *wireReasoning  `json:"reasoningContent,omitempty"`
	CachePoint       *wireCachePoint `json:"cachePoint,omitempty"`
}

func textBlock(s string) wireBlock { return wireBlock{Text: &s} }

type wireImage struct {
	Format string     `json:"format"`
	Source wireSource `json:"source"`
}

type wireDocument struct {
	Format string     `json:"format"`
	Name   string     `json:"name"`
	Source wireSource `json:"source"`
}

// wireSource holds media inline (base64 in JSON, as Bedrock's blobs are)
// or in Amazon S3.
type wireSource struct {
	Bytes      string          `json:"bytes,omitempty"`
	S3Location *wireS3Location `json:"s3Location,omitempty"`
}

type wireS3Location struct {
	URI string `json:"uri"`
}

type wireToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type wireToolResult struct {
	ToolUseID string      `json:"toolUseId"`
	Content   []wireBlock `json:"content"`
	Status    string      `json:"status,omitempty"`
}

type wireReasoning struct {
	ReasoningText   *wireReasoningText `json:"reasoningText,omitempty"`
	RedactedContent string             `json:"redactedContent,omitempty"`
}

type wireReasoningText struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

type wireCachePoint struct {
	Type string `json:"type"`
}

var cachePoint = wireBlock{CachePoint: &wireCachePoint{Type: "default"}}

type wireInference struct {
	MaxTokens     *int     `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

func (w *wireInference) empty() bool {
	return w.MaxTokens == nil && w.Temperature == nil && w.TopP == nil && len(w.StopSequences) == 0
}

type wireToolConfig struct {
	Tools      []wireTool      `json:"tools"`
	ToolChoice *wireToolChoice `json:"toolChoice,omitempty"`
}

type wireTool struct {
	ToolSpec wireToolSpec `json:"toolSpec"`
}

type wireToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema wireInputSchema `json:"inputSchema"`
}

type wireInputSchema struct {
	JSON json.RawMessage `json:"json"`
}

// wireToolChoice is a union: auto, any (some tool), or one named tool.
type wireToolChoice struct {
	Auto *struct{}         `json:"auto,omitempty"`
	Any  *struct{}         `json:"any,omitempty"`
	Tool *wireToolChoiceOf `json:"tool,omitempty"`
}

type wireToolChoiceOf struct {
	Name string `json:"name"`
}
