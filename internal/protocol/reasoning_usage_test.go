package protocol_test

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
)

// TestReasoningTokensArePartOfOutputTokens holds every codec to the IR's
// convention that billing relies on: ir.Usage.OutputTokens includes the
// reasoning tokens. OpenAI chat and Responses report it that way already;
// Gemini counts thoughts apart from candidates, so its codec adds them;
// Anthropic counts thinking inside output_tokens and reports no separate
// figure. Each answer below had 10 answer tokens and 20 of reasoning.
func TestReasoningTokensArePartOfOutputTokens(t *testing.T) {
	cases := []struct {
		name   string
		sniff  func() (ir.Usage, bool)
		decode func() (*ir.Response, error) // nil: the codec has no decoder for this shape
		want   ir.Usage
	}{
		{"openai chat",
			func() (ir.Usage, bool) {
				return openai.Chat.SniffUsage([]byte(`{"id":"x","usage":{"prompt_tokens":7,"completion_tokens":30,"total_tokens":37,"completion_tokens_details":{"reasoning_tokens":20}}}`))
			},
			func() (*ir.Response, error) {
				return openai.Chat.DecodeResponse([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],` +
					`"usage":{"prompt_tokens":7,"completion_tokens":30,"total_tokens":37,"completion_tokens_details":{"reasoning_tokens":20}}}`))
			},
			ir.Usage{InputTokens: 7, OutputTokens: 30, ReasoningTokens: 20}},
		{"openai chat stream chunk",
			func() (ir.Usage, bool) {
				return openai.Chat.SniffStreamUsage("", []byte(`{"id":"x","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":30,"completion_tokens_details":{"reasoning_tokens":20}}}`))
			},
			nil, ir.Usage{InputTokens: 7, OutputTokens: 30, ReasoningTokens: 20}},
		{"responses",
			func() (ir.Usage, bool) {
				return responses.API.SniffUsage([]byte(`{"id":"resp_1","object":"response","usage":{"input_tokens":7,"output_tokens":30,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":37}}`))
			},
			nil, ir.Usage{InputTokens: 7, OutputTokens: 30, ReasoningTokens: 20}},
		{"gemini",
			func() (ir.Usage, bool) {
				return gemini.Generate.SniffUsage([]byte(`{"candidates":[],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":10,"thoughtsTokenCount":20,"totalTokenCount":37}}`))
			},
			func() (*ir.Response, error) {
				return gemini.Generate.DecodeResponse([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],` +
					`"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":10,"thoughtsTokenCount":20,"totalTokenCount":37}}`))
			},
			ir.Usage{InputTokens: 7, OutputTokens: 30, ReasoningTokens: 20}},
		{"gemini stream chunk",
			func() (ir.Usage, bool) {
				return gemini.Generate.SniffStreamUsage("", []byte(`{"candidates":[],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":10,"thoughtsTokenCount":20}}`))
			},
			nil, ir.Usage{InputTokens: 7, OutputTokens: 30, ReasoningTokens: 20}},
		{"anthropic",
			func() (ir.Usage, bool) {
				return anthropic.Messages.SniffUsage([]byte(`{"id":"msg_1","type":"message","usage":{"input_tokens":7,"output_tokens":30}}`))
			},
			func() (*ir.Response, error) {
				return anthropic.Messages.DecodeResponse([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m",` +
					`"content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":30}}`))
			},
			ir.Usage{InputTokens: 7, OutputTokens: 30}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.sniff()
			if !ok || got != tc.want {
				t.Errorf("sniffed %+v (%v), want %+v", got, ok, tc.want)
			}
			if got.ReasoningTokens > got.OutputTokens {
				t.Errorf("sniffed reasoning %d above output %d", got.ReasoningTokens, got.OutputTokens)
			}
			if tc.decode == nil {
				return
			}
			res, err := tc.decode()
			if err != nil {
				t.Fatal(err)
			}
			if res.Usage != tc.want {
				t.Errorf("decoded %+v, want %+v", res.Usage, tc.want)
			}
		})
	}
}
