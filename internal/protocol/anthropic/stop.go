package anthropic

import "github.com/turnpike-gw/turnpike/internal/ir"

// stopFromWire maps the format's stop_reason to the IR. pause_turn (a long
// server-tool turn the client may resume) ends the answer as far as other
// formats can tell; model_context_window_exceeded is a length limit.
func stopFromWire(s string) ir.StopReason {
	switch s {
	case "max_tokens", "model_context_window_exceeded":
		return ir.StopMaxTokens
	case "tool_use":
		return ir.StopToolUse
	case "stop_sequence":
		return ir.StopSequence
	case "refusal":
		return ir.StopContentFilter
	default:
		return ir.StopEnd
	}
}

// stopToWire maps an IR stop reason to stop_reason. An IR error stop has no
// counterpart; end_turn is what clients handle without special cases.
func stopToWire(s ir.StopReason) string {
	switch s {
	case ir.StopMaxTokens:
		return "max_tokens"
	case ir.StopToolUse:
		return "tool_use"
	case ir.StopSequence:
		return "stop_sequence"
	case ir.StopContentFilter:
		return "refusal"
	default:
		return "end_turn"
	}
}
