package openai

import (
	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// sniffUsage reads the top-level usage object of a response body or chunk.
// The byte search first keeps the common chunk (no usage) free of parsing.
func sniffUsage(data []byte) (ir.Usage, bool) {
	if !hasName(data, usageBare) {
		return ir.Usage{}, false
	}
	u := gjson.GetBytes(data, "usage")
	if !u.IsObject() {
		return ir.Usage{}, false
	}
	return usageFrom(u), true
}

// usageFrom reads an OpenAI usage object. prompt_cache_hit_tokens is the
// DeepSeek spelling of cached prompt tokens, used when the standard one is
// absent.
func usageFrom(u gjson.Result) ir.Usage {
	out := ir.Usage{
		InputTokens:     nonNegative(u.Get("prompt_tokens").Int()),
		OutputTokens:    nonNegative(u.Get("completion_tokens").Int()),
		CacheReadTokens: nonNegative(u.Get("prompt_tokens_details.cached_tokens").Int()),
		ReasoningTokens: nonNegative(u.Get("completion_tokens_details.reasoning_tokens").Int()),
	}
	if out.CacheReadTokens == 0 {
		out.CacheReadTokens = nonNegative(u.Get("prompt_cache_hit_tokens").Int())
	}
	return out
}

// nonNegative keeps a hostile or broken count from turning into a refund.
func nonNegative(n int64) int {
	if n < 0 {
		return 0
	}
	return clampInt(n)
}

func toWireUsage(u ir.Usage) wireUsage {
	return wireUsage{
		PromptTokens:            u.InputTokens,
		CompletionTokens:        u.OutputTokens,
		TotalTokens:             u.Total(),
		PromptTokensDetails:     wirePromptDetails{CachedTokens: u.CacheReadTokens},
		CompletionTokensDetails: wireOutputDetails{ReasoningTokens: u.ReasoningTokens},
	}
}
