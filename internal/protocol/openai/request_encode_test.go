package openai

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

func ptr[T any](v T) *T { return &v }

func userText(s string) ir.Message {
	return ir.Message{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: s}}}
}

func TestEncodeRequest(t *testing.T) {
	tests := []struct {
		name string
		req  ir.Request
		// want maps gjson paths of the upstream body to their raw JSON.
		want map[string]string
	}{
		{"streaming always asks for usage", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")}, Stream: true},
			map[string]string{"stream": "true", "stream_options.include_usage": "true"}},
		{"top_k and metadata are left out", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")}, TopK: ptr(5), Metadata: map[string]any{"k": "v"}},
			map[string]string{"top_k": "", "metadata": ""}},
		{"metadata user_id stands in for user", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")}, Metadata: map[string]any{"user_id": "u-9"}},
			map[string]string{"user": `"u-9"`}},
		{"reasoning models get max_completion_tokens", ir.Request{Model: "openai/o3-mini", Messages: []ir.Message{userText("hi")}, MaxTokens: ptr(100)},
			map[string]string{"max_completion_tokens": "100", "max_tokens": ""}},
		{"other models get max_tokens", ir.Request{Model: "llama-3", Messages: []ir.Message{userText("hi")}, MaxTokens: ptr(100)},
			map[string]string{"max_tokens": "100", "max_completion_tokens": ""}},
		{"a thinking budget becomes an effort", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")}, Reasoning: &ir.Reasoning{BudgetTokens: 8000}},
			map[string]string{"reasoning_effort": `"medium"`}},
		{"disabled reasoning sends no effort", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")}, Reasoning: &ir.Reasoning{Disabled: true}},
			map[string]string{"reasoning_effort": ""}},
		{"parallel_tool_calls is dropped without tools", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")}, ParallelToolCalls: ptr(false)},
			map[string]string{"parallel_tool_calls": ""}},
		{"tool choice modes are strings", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")},
			Tools: []ir.Tool{{Name: "f"}}, ToolChoice: &ir.ToolChoice{Mode: ir.ToolChoiceRequired}},
			map[string]string{"tool_choice": `"required"`}},
		{"a system message mid-conversation stays in place", ir.Request{Model: "m", Messages: []ir.Message{
			userText("a"), {Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartText, Text: "be brief"}}}}},
			map[string]string{"messages.1.role": `"system"`, "messages.1.content": `"be brief"`}},
		{"tool results inside a user turn become tool messages first", ir.Request{Model: "m", Messages: []ir.Message{{
			Role: ir.RoleUser, Parts: []ir.Part{
				{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "toolu_1", Content: []ir.Part{
					{Kind: ir.PartText, Text: "line 1"}, {Kind: ir.PartText, Text: "line 2"},
					{Kind: ir.PartImage, Media: &ir.Media{MIMEType: "image/png", Data: "AAAA"}}}}},
				{Kind: ir.PartText, Text: "what now?"}}}}},
			map[string]string{
				"messages.0.role": `"tool"`, "messages.0.tool_call_id": `"toolu_1"`, "messages.0.content": `"line 1\nline 2"`,
				"messages.1.role": `"user"`, "messages.1.content.0.image_url.url": `"data:image/png;base64,AAAA"`,
				"messages.1.content.1.text": `"what now?"`,
			}},
		{"assistant reasoning is not sent back", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleAssistant, Parts: []ir.Part{
			{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: "hmm", Signature: "sig"}}, {Kind: ir.PartText, Text: "yes"}}}}},
			map[string]string{"messages.0.content": `"yes"`, "messages.0.reasoning_content": ""}},
		{"an empty assistant turn has empty content, not null", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleAssistant}}},
			map[string]string{"messages.0.content": `""`}},
		{"a file id goes back as file_id", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
			{Kind: ir.PartFile, Media: &ir.Media{URL: fileIDScheme + "file-1"}}}}}},
			map[string]string{"messages.0.content.0.file.file_id": `"file-1"`}},
		{"mp3 audio uses the mp3 format name", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
			{Kind: ir.PartFile, Media: &ir.Media{MIMEType: "audio/mpeg", Data: "AAAA"}}}}}},
			map[string]string{"messages.0.content.0.input_audio.format": `"mp3"`}},
		{"json_schema without a name gets one", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")},
			ResponseFormat: &ir.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object"}`)}},
			map[string]string{"response_format.json_schema.name": `"response"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := Chat.EncodeRequest(&tt.req)
			if err != nil {
				t.Fatalf("EncodeRequest: %v", err)
			}
			for path, want := range tt.want {
				if got := gjson.GetBytes(body, path).Raw; got != want {
					t.Errorf("%s = %s, want %s\nbody: %s", path, got, want, body)
				}
			}
		})
	}
}

func TestEncodeRequestRejectsWhatCannotBeExpressed(t *testing.T) {
	tests := []struct {
		name  string
		req   ir.Request
		param string
	}{
		{"no model", ir.Request{Messages: []ir.Message{userText("hi")}}, "model"},
		{"image in the system prompt", ir.Request{Model: "m", System: []ir.Part{{Kind: ir.PartImage, Media: &ir.Media{URL: "https://x"}}}}, "system"},
		{"file by remote URL", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
			{Kind: ir.PartFile, Media: &ir.Media{URL: "https://x/doc.pdf", MIMEType: "application/pdf"}}}}}}, "messages[0].content[0]"},
		{"image in an assistant turn", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleAssistant, Parts: []ir.Part{
			{Kind: ir.PartImage, Media: &ir.Media{URL: "https://x"}}}}}}, "messages[0].content[0]"},
		{"tool call in a user turn", ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c", Name: "f"}}}}}}, "messages[0].content[0]"},
		{"unknown role", ir.Request{Model: "m", Messages: []ir.Message{{Role: "narrator"}}}, "messages[0].role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Chat.EncodeRequest(&tt.req)
			var e *ir.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Param != tt.param {
				t.Fatalf("err = %#v, want a 400 naming %q", err, tt.param)
			}
		})
	}
}

func TestEncodeRequestLeavesOutWhatTheAPIRefuses(t *testing.T) {
	two, max := 2, "max"
	cases := []struct {
		name string
		req  ir.Request
		path string
		want string
	}{
		{"tool_choice without tools", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")},
			ToolChoice: &ir.ToolChoice{Mode: ir.ToolChoiceNone}}, "tool_choice", ""},
		{"an effort level the API does not know", ir.Request{Model: "m", Messages: []ir.Message{userText("hi")},
			Reasoning: &ir.Reasoning{Effort: max}}, "reasoning_effort", `"high"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := Chat.EncodeRequest(&tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(body, tc.path).Raw; got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
	_, err := Chat.EncodeRequest(&ir.Request{Model: "m", N: &two, Messages: []ir.Message{userText("hi")}})
	if e := ir.As(err); err == nil || e.Status != 400 || e.Param != "n" {
		t.Fatalf("n > 1 on a converted call: %v", err)
	}
}
