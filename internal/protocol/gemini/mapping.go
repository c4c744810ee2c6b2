package gemini

import "github.com/turnpike-gw/turnpike/internal/ir"

// stopReason maps a finishReason. STOP after a function call is tool use,
// which this format does not report separately.
func stopReason(finish string, calledTool bool) ir.StopReason {
	switch finish {
	case "MAX_TOKENS":
		return ir.StopMaxTokens
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
		"IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return ir.StopContentFilter
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL":
		return ir.StopError
	}
	if calledTool {
		return ir.StopToolUse
	}
	return ir.StopEnd
}

// finishReason maps back; tool use and stop sequences are a plain STOP here.
func finishReason(r ir.StopReason) string {
	switch r {
	case ir.StopMaxTokens:
		return "MAX_TOKENS"
	case ir.StopContentFilter:
		return "SAFETY"
	case ir.StopError:
		return "OTHER"
	}
	return "STOP"
}

// usageFromWire converts usageMetadata: the prompt count already includes
// cached tokens (as IR input does), tool-use prompt tokens are billed as
// input, and output is the answer plus the thoughts, which are counted apart.
func usageFromWire(u *usageWire) ir.Usage {
	if u == nil {
		return ir.Usage{}
	}
	return ir.Usage{
		InputTokens:     u.PromptTokenCount + u.ToolUsePromptTokenCount,
		OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CacheReadTokens: u.CachedContentTokenCount,
		ReasoningTokens: u.ThoughtsTokenCount,
	}
}

func usageToWire(u ir.Usage) *usageWire {
	candidates := max(u.OutputTokens-u.ReasoningTokens, 0)
	return &usageWire{
		PromptTokenCount:        u.InputTokens,
		CandidatesTokenCount:    candidates,
		TotalTokenCount:         u.InputTokens + candidates + u.ReasoningTokens,
		CachedContentTokenCount: u.CacheReadTokens,
		ThoughtsTokenCount:      u.ReasoningTokens,
	}
}
