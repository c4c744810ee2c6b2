package gemini

import "encoding/json"

// The structs below are the camelCase wire shapes this codec writes, and the
// shapes it reads from upstream answers (which always come in camelCase).
// Client requests are read field by field instead (see decode_request.go) so
// both spellings are accepted and errors can name the exact field.

type contentWire struct {
	Role  string     `json:"role,omitempty"`
	Parts []partWire `json:"parts"`
}

type partWire struct {
	// Text is a pointer so an empty text part that only carries a
	// thoughtSignature can still be written.
	Text             *string               `json:"text,omitempty"`
	Thought          bool                  `json:"thought,omitempty"`
	ThoughtSignature string                `json:"thoughtSignature,omitempty"`
	InlineData       *blobWire             `json:"inlineData,omitempty"`
	FileData         *fileDataWire         `json:"fileData,omitempty"`
	FunctionCall     *functionCallWire     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponseWire `json:"functionResponse,omitempty"`
}

type blobWire struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileDataWire struct {
	MIMEType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type functionCallWire struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponseWire struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type requestWire struct {
	Contents          []contentWire     `json:"contents"`
	SystemInstruction *contentWire      `json:"systemInstruction,omitempty"`
	Tools             []toolWire        `json:"tools,omitempty"`
	ToolConfig        *toolConfigWire   `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type toolWire struct {
	FunctionDeclarations []functionDeclWire `json:"functionDeclarations"`
}

type functionDeclWire struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfigWire struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int            `json:"topK,omitempty"`
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	CandidateCount     *int            `json:"candidateCount,omitempty"`
	Seed               *int32          `json:"seed,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

type responseWire struct {
	Candidates     []candidateWire     `json:"candidates,omitempty"`
	PromptFeedback *promptFeedbackWire `json:"promptFeedback,omitempty"`
	UsageMetadata  *usageWire          `json:"usageMetadata,omitempty"`
	ModelVersion   string              `json:"modelVersion,omitempty"`
	ResponseID     string              `json:"responseId,omitempty"`
	// Error appears when a stream fails after it started.
	Error *errorDetail `json:"error,omitempty"`
}

type candidateWire struct {
	Content      *contentWire `json:"content,omitempty"`
	FinishReason string       `json:"finishReason,omitempty"`
	Index        int          `json:"index"`
}

type promptFeedbackWire struct {
	BlockReason string `json:"blockReason,omitempty"`
}

type usageWire struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount,omitempty"`
}

type errorEnvelope struct {
	Error *errorDetail `json:"error"`
}

type errorDetail struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []json.RawMessage `json:"details,omitempty"`
	// Level names the level of a budget or rate-limit refusal.
	Level string `json:"level,omitempty"`
}
