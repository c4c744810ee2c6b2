package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestDecodeRequestRejectsBadInputNamingTheField(t *testing.T) {
	tests := []struct {
		name, body, param string
	}{
		{"malformed JSON", `{"contents": [`, ""},
		{"body is not an object", `[1,2]`, ""},
		{"contents missing", `{}`, "contents"},
		{"contents empty", `{"contents": []}`, "contents"},
		{"contents not an array", `{"contents": {"parts": []}}`, "contents"},
		{"content without parts", `{"contents": [{"role": "user"}]}`, "contents[0].parts"},
		{"content with empty parts", `{"contents": [{"parts": []}]}`, "contents[0].parts"},
		{"part without data", `{"contents": [{"parts": [{"text": "a"}, {"thought": true}]}]}`, "contents[0].parts[1]"},
		{"part with two data fields", `{"contents": [{"parts": [{"text": "a", "inlineData": {"mimeType": "image/png", "data": "AA=="}}]}]}`, "contents[0].parts[0]"},
		{"text is a number", `{"contents": [{"parts": [{"text": 5}]}]}`, "contents[0].parts[0].text"},
		{"inline data without MIME type", `{"contents": [{"parts": [{"inlineData": {"data": "AA=="}}]}]}`, "contents[0].parts[0].inlineData.mimeType"},
		{"file data without URI", `{"contents": [{"parts": [{"file_data": {"mime_type": "image/png"}}]}]}`, "contents[0].parts[0].file_data.fileUri"},
		{"unknown role", `{"contents": [{"role": "assistant", "parts": [{"text": "a"}]}]}`, "contents[0].role"},
		{"function call in a user turn", `{"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}]}`, "contents[0].parts[0].functionCall"},
		{"function response in a model turn", `{"contents": [{"role": "model", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]}`, "contents[0].parts[0].functionResponse"},
		{"function call without name", `{"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]}`, "contents[0].parts[0].functionCall.name"},
		{"function args not an object", `{"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": "x"}}]}]}`, "contents[0].parts[0].functionCall.args"},
		{"function response not an object", `{"contents": [{"parts": [{"functionResponse": {"name": "f", "response": [1]}}]}]}`, "contents[0].parts[0].functionResponse.response"},
		{"temperature is a string", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"temperature": "hot"}}`, "generationConfig.temperature"},
		{"temperature out of range", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"temperature": 3}}`, "generationConfig.temperature"},
		{"zero max output tokens", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"maxOutputTokens": 0}}`, "generationConfig.maxOutputTokens"},
		{"fractional top k", `{"contents": [{"parts": [{"text": "a"}]}], "generation_config": {"top_k": 1.5}}`, "generation_config.top_k"},
		{"stop sequence not a string", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"stopSequences": ["a", 1]}}`, "generationConfig.stopSequences[1]"},
		{"unknown thinking level", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"thinkingConfig": {"thinkingLevel": "extreme"}}}`, "generationConfig.thinkingConfig.thinkingLevel"},
		{"thinking budget below -1", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"thinkingConfig": {"thinkingBudget": -2}}}`, "generationConfig.thinkingConfig.thinkingBudget"},
		{"tools not an array", `{"contents": [{"parts": [{"text": "a"}]}], "tools": {}}`, "tools"},
		{"declaration without name", `{"contents": [{"parts": [{"text": "a"}]}], "tools": [{"functionDeclarations": [{"description": "x"}]}]}`, "tools[0].functionDeclarations[0].name"},
		{"unknown calling mode", `{"contents": [{"parts": [{"text": "a"}]}], "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}}`, "toolConfig.functionCallingConfig.mode"},
		{"image in system instruction", `{"contents": [{"parts": [{"text": "a"}]}], "systemInstruction": {"parts": [{"inlineData": {"mimeType": "image/png", "data": "AA=="}}]}}`, "systemInstruction.parts[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate.DecodeRequest([]byte(tt.body))
			if err == nil {
				t.Fatal("want an error")
			}
			e := asIRError(t, err)
			if e.Status != 400 || e.Kind != ir.KindInvalidRequest {
				t.Errorf("want a 400 invalid request, got %d %s", e.Status, e.Kind)
			}
			if e.Param != tt.param {
				t.Errorf("param = %q, want %q", e.Param, tt.param)
			}
			if tt.param != "" && !strings.Contains(e.Message, tt.param) {
				t.Errorf("message %q does not name %q", e.Message, tt.param)
			}
		})
	}
}

func TestDecodeRequestMapping(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, r *ir.Request)
	}{
		{"model stays empty for the relay to fill", `{"model": "models/x", "contents": [{"parts": [{"text": "a"}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if r.Model != "" {
					t.Errorf("model = %q", r.Model)
				}
			}},
		{"null fields count as absent", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": null, "tools": null}`,
			func(t *testing.T, r *ir.Request) {
				if r.Tools != nil || r.Temperature != nil {
					t.Errorf("unexpected settings %+v", r)
				}
			}},
		{"thinking budget zero disables reasoning", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}`,
			func(t *testing.T, r *ir.Request) {
				if r.Reasoning == nil || !r.Reasoning.Disabled {
					t.Errorf("reasoning = %+v", r.Reasoning)
				}
			}},
		{"include thoughts alone asks for medium effort", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"thinkingConfig": {"includeThoughts": true, "thinkingBudget": -1}}}`,
			func(t *testing.T, r *ir.Request) {
				if r.Reasoning == nil || r.Reasoning.Effort != "medium" {
					t.Errorf("reasoning = %+v", r.Reasoning)
				}
			}},
		{"JSON without schema is json_object", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"responseMimeType": "application/json"}}`,
			func(t *testing.T, r *ir.Request) {
				if r.ResponseFormat == nil || r.ResponseFormat.Type != "json_object" {
					t.Errorf("format = %+v", r.ResponseFormat)
				}
			}},
		{"integers may be strings as in proto JSON", `{"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"maxOutputTokens": "64"}}`,
			func(t *testing.T, r *ir.Request) {
				if r.MaxTokens == nil || *r.MaxTokens != 64 {
					t.Errorf("max tokens = %v", r.MaxTokens)
				}
			}},
		{"system instruction may be a plain string", `{"systemInstruction": "Be nice.", "contents": [{"parts": [{"text": "a"}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if len(r.System) != 1 || r.System[0].Text != "Be nice." {
					t.Errorf("system = %+v", r.System)
				}
			}},
		{"unmatched function response gets a stable synthesized id", `{"contents": [{"parts": [{"functionResponse": {"name": "f", "response": {"x": 1}}}]}]}`,
			func(t *testing.T, r *ir.Request) {
				tr := r.Messages[0].Parts[0].ToolResult
				if tr.CallID != synthID("0", "0", "f") || !strings.HasPrefix(tr.CallID, "call_") {
					t.Errorf("call id = %q", tr.CallID)
				}
			}},
		{"file URI without MIME type is typed by extension", `{"contents": [{"parts": [{"fileData": {"fileUri": "https://x.test/a.JPG?s=1"}}]}]}`,
			func(t *testing.T, r *ir.Request) {
				if p := r.Messages[0].Parts[0]; p.Kind != ir.PartImage {
					t.Errorf("kind = %s", p.Kind)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Generate.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
}

func TestEncodeRequestRejectsWhatCannotBeExpressed(t *testing.T) {
	user := ir.Message{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi"}}}
	tests := []struct {
		name  string
		req   ir.Request
		param string
	}{
		{"no messages", ir.Request{System: []ir.Part{{Kind: ir.PartText, Text: "s"}}}, "messages"},
		{"tool result for an unknown call without a name", ir.Request{Messages: []ir.Message{user,
			{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "call_x"}}}}}},
			"messages[1].parts[0].tool_call_id"},
		{"tool call arguments that are not an object", ir.Request{Messages: []ir.Message{user,
			{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c", Name: "f", Arguments: `{"a":`}}}}}},
			"messages[1].parts[0].arguments"},
		{"unknown role", ir.Request{Messages: []ir.Message{{Role: "narrator", Parts: user.Parts}}}, "messages[0].role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate.EncodeRequest(&tt.req)
			e := asIRError(t, err)
			if e.Status != 400 || e.Param != tt.param {
				t.Errorf("got %d param %q, want 400 param %q", e.Status, e.Param, tt.param)
			}
		})
	}
}

func TestEncodeRequestNeverWritesAModelField(t *testing.T) {
	req := &ir.Request{Model: "gemini-2.5-flash", Stream: true,
		Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi"}}}}}
	out, err := Generate.EncodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "stream"} {
		if _, ok := m[k]; ok {
			t.Errorf("body has %q: %s", k, out)
		}
	}
}

func TestSignatureSentinelOnlyForModelsThatRequireIt(t *testing.T) {
	tests := []struct {
		model string
		want  bool
	}{
		{"gemini-3-pro-preview", true},
		{"models/gemini-3.1-flash", true},
		{"gemini-flash-latest", true},
		{"gemini-2.5-flash", false},
		{"gemini-1.5-pro", false},
		{"gemma-3-27b-it", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := wantsSentinel(tt.model); got != tt.want {
			t.Errorf("wantsSentinel(%q) = %v, want %v", tt.model, got, tt.want)
		}
	}
}
