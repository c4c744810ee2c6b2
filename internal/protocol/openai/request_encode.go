package openai

import (
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// encodeRequest builds the body sent to an OpenAI-style upstream.
func encodeRequest(req *ir.Request) ([]byte, error) {
	if req == nil || req.Model == "" {
		return nil, missing("model")
	}
	for i, t := range req.Tools {
		if len(t.Native) > 0 {
			return nil, ir.NativeToolError(i, t.Name)
		}
	}
	if err := ir.SingleAnswer(req); err != nil {
		return nil, err
	}
	msgs, err := encodeMessages(req)
	if err != nil {
		return nil, err
	}
	w := wireRequest{
		Model:            req.Model,
		Messages:         msgs,
		Temperature:      req.Temperature,
		TopP:             req.TopP,
		FrequencyPenalty: req.FrequencyPenalty,
		PresencePenalty:  req.PresencePenalty,
		Seed:             req.Seed,
		N:                req.N,
		Stop:             req.Stop,
		Stream:           req.Stream,
		User:             requestUser(req),
	}
	// top_k is left out on purpose: the OpenAI API rejects it as an
	// unrecognized argument, and it is only a sampling hint. metadata is left
	// out too: the API takes it only with stored completions, and it only
	// labels the call.
	encodeTools(req, &w)
	encodeMaxTokens(req, &w)
	if req.Stream {
		// Billing needs the upstream's own count, whatever the client asked.
		w.StreamOptions = &wireStreamOpts{IncludeUsage: true}
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "" {
		w.ResponseFormat = &wireRespFormat{Type: rf.Type}
		if rf.Type == "json_schema" {
			w.ResponseFormat.JSONSchema = &wireJSONSchema{Name: schemaName(rf.Name), Schema: rf.Schema, Strict: rf.Strict}
		}
	}
	w.ReasoningEffort = reasoningEffort(req.Reasoning)
	body, err := marshal(w)
	if err != nil {
		return nil, invalid("", "the request cannot be encoded: %v", err)
	}
	return body, nil
}

func encodeTools(req *ir.Request, w *wireRequest) {
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	// Like parallel_tool_calls, tool_choice without tools is refused by the
	// API and means nothing, so it is left out.
	if tc := req.ToolChoice; tc != nil && len(w.Tools) > 0 {
		if tc.Mode == ir.ToolChoiceTool {
			named := wireNamedFunction{Type: "function"}
			named.Function.Name = tc.Name
			w.ToolChoice = named
		} else if tc.Mode != "" {
			w.ToolChoice = string(tc.Mode)
		}
	}
	// The API refuses parallel_tool_calls without tools, and without tools
	// the setting means nothing.
	if len(w.Tools) > 0 {
		w.ParallelToolCalls = req.ParallelToolCalls
	}
}

// encodeMaxTokens picks the parameter name the target model accepts: the
// reasoning model families refuse max_tokens, while many compatible servers
// still only know max_tokens.
func encodeMaxTokens(req *ir.Request, w *wireRequest) {
	if req.MaxTokens == nil {
		return
	}
	model := strings.ToLower(req.Model)
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, prefix) {
			w.MaxCompletionTokens = req.MaxTokens
			return
		}
	}
	w.MaxTokens = req.MaxTokens
}

// reasoningEffort translates a token budget into the nearest effort level,
// because Chat Completions has no budget parameter.
func reasoningEffort(r *ir.Reasoning) string {
	switch {
	case r == nil || r.Disabled:
		return ""
	case r.Effort != "":
		return knownEffort(r.Effort)
	case r.BudgetTokens <= 0:
		return ""
	case r.BudgetTokens < 4096:
		return "low"
	case r.BudgetTokens < 16384:
		return "medium"
	}
	return "high"
}

// knownEffort maps another format's effort levels onto the ones Chat
// Completions accepts; "max" and any level it does not know become the
// strongest it has.
func knownEffort(e string) string {
	if reasoningEfforts[e] {
		return e
	}
	return "high"
}

// requestUser falls back to the messages-native metadata.user_id, the same
// end-user identifier under another name.
func requestUser(req *ir.Request) string {
	if req.User != "" {
		return req.User
	}
	if id, ok := req.Metadata["user_id"].(string); ok {
		return id
	}
	return ""
}

func schemaName(name string) string {
	if name == "" {
		return "response"
	}
	return name
}
