package openai

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestSniffUsage(t *testing.T) {
	tests := []struct {
		name string
		data string
		want ir.Usage
		ok   bool
	}{
		{"full usage", `{"id":"x","usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":12}}}`,
			ir.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 64, ReasoningTokens: 12}, true},
		{"chunk without usage", `{"choices":[{"delta":{"content":"hi"}}]}`, ir.Usage{}, false},
		{"usage null on a chunk", `{"choices":[],"usage":null}`, ir.Usage{}, false},
		{"the word usage inside content is not usage", `{"choices":[{"delta":{"content":"\"usage\": 5"}}]}`, ir.Usage{}, false},
		{"nested usage is not top-level usage", `{"x":{"usage":{"prompt_tokens":5}}}`, ir.Usage{}, false},
		{"negative counts are clamped", `{"usage":{"prompt_tokens":-5,"completion_tokens":3}}`, ir.Usage{OutputTokens: 3}, true},
		{"not JSON", `{"usage":`, ir.Usage{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Chat.SniffUsage([]byte(tt.data))
			if got != tt.want || ok != tt.ok {
				t.Errorf("SniffUsage = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
			got, ok = Chat.SniffStreamUsage("", []byte(tt.data))
			if got != tt.want || ok != tt.ok {
				t.Errorf("SniffStreamUsage = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func BenchmarkSniffStreamUsageOnContentChunk(b *testing.B) {
	data := []byte(chunk(`{"content":"Hello there, this is a typical token"}`, ""))
	for b.Loop() {
		Chat.SniffStreamUsage("", data)
	}
}
