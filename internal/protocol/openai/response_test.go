package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestDecodeResponseEdgeCases(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, r *ir.Response)
	}{
		{"stop with tool calls is a tool stop", `{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}]}`,
			func(t *testing.T, r *ir.Response) {
				if r.StopReason != ir.StopToolUse {
					t.Errorf("StopReason = %s", r.StopReason)
				}
			}},
		{"content as a part array", `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}`,
			func(t *testing.T, r *ir.Response) {
				if len(r.Content) != 1 || r.Content[0].Text != "ab" {
					t.Errorf("Content = %+v", r.Content)
				}
			}},
		{"refusal becomes text", `{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
			func(t *testing.T, r *ir.Response) {
				if len(r.Content) != 1 || r.Content[0].Text != "I can't help with that." {
					t.Errorf("Content = %+v", r.Content)
				}
			}},
		{"reasoning field is read as thinking", `{"choices":[{"message":{"reasoning":"think","content":"ok"},"finish_reason":"length"}]}`,
			func(t *testing.T, r *ir.Response) {
				if r.Content[0].Kind != ir.PartThinking || r.StopReason != ir.StopMaxTokens {
					t.Errorf("got %+v / %s", r.Content, r.StopReason)
				}
			}},
		{"DeepSeek cache hits count as cache reads", `{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_cache_hit_tokens":8}}`,
			func(t *testing.T, r *ir.Response) {
				if r.Usage.CacheReadTokens != 8 || r.Usage.InputTokens != 10 {
					t.Errorf("Usage = %+v", r.Usage)
				}
			}},
		{"tool call without id gets one", `{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			func(t *testing.T, r *ir.Response) {
				c := r.Content[0].ToolCall
				if !strings.HasPrefix(c.ID, "call_") || c.Arguments != "{}" {
					t.Errorf("ToolCall = %+v", c)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Chat.DecodeResponse([]byte(tt.body))
			if err != nil {
				t.Fatalf("DecodeResponse: %v", err)
			}
			tt.check(t, r)
		})
	}
}

func TestDecodeResponseFailuresAreRetryableUpstreamErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		message string
	}{
		{"not JSON", `<html>bad gateway</html>`, "not JSON"},
		{"no choices", `{"id":"x","choices":[]}`, "no choices"},
		{"error object with status 200", `{"error":{"message":"engine overloaded","type":"server_error"}}`, "engine overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Chat.DecodeResponse([]byte(tt.body))
			var e *ir.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v", err)
			}
			if e.Retry != ir.RetryNext || !strings.Contains(e.Message, tt.message) {
				t.Errorf("got %+v", e)
			}
		})
	}
}

func TestEncodeResponseFillsIDCreatedAndShapes(t *testing.T) {
	out, err := Chat.EncodeResponse(&ir.Response{
		Model: "m",
		Content: []ir.Part{
			{Kind: ir.PartThinking, Thinking: &ir.Thinking{Text: "plan"}},
			{Kind: ir.PartText, Text: "Hello, "},
			{Kind: ir.PartText, Text: "world"},
			{Kind: ir.PartRedactedThinking, Thinking: &ir.Thinking{Redacted: "opaque"}},
		},
		StopReason: ir.StopSequence,
		Usage:      ir.Usage{InputTokens: 5, OutputTokens: 3, CacheReadTokens: 2, CacheWriteTokens: 1, ReasoningTokens: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"object":                                           `"chat.completion"`,
		"choices.0.index":                                  "0",
		"choices.0.message.role":                           `"assistant"`,
		"choices.0.message.content":                        `"Hello, world"`,
		"choices.0.message.reasoning_content":              `"plan"`,
		"choices.0.message.tool_calls":                     "",
		"choices.0.finish_reason":                          `"stop"`,
		"usage.total_tokens":                               "8",
		"usage.prompt_tokens_details.cached_tokens":        "2",
		"usage.completion_tokens_details.reasoning_tokens": "1",
	}
	for path, w := range want {
		if got := gjson.GetBytes(out, path).Raw; got != w {
			t.Errorf("%s = %s, want %s", path, got, w)
		}
	}
	if id := gjson.GetBytes(out, "id").Str; !strings.HasPrefix(id, "chatcmpl-") || len(id) < 20 {
		t.Errorf("id = %q", id)
	}
	if gjson.GetBytes(out, "created").Int() == 0 {
		t.Error("created is zero")
	}
}
