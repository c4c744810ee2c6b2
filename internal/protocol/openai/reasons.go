package openai

import (
	"crypto/rand"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// stopReason maps finish_reason to the IR. Values outside the documented set
// (compatible servers invent some) count as a normal end.
func stopReason(finish string) ir.StopReason {
	switch finish {
	case "length":
		return ir.StopMaxTokens
	case "tool_calls", "function_call":
		return ir.StopToolUse
	case "content_filter":
		return ir.StopContentFilter
	}
	return ir.StopEnd
}

// finishReason maps an IR stop reason to finish_reason. A matched stop
// sequence is "stop" in this format.
func finishReason(r ir.StopReason) string {
	switch r {
	case ir.StopMaxTokens:
		return "length"
	case ir.StopToolUse:
		return "tool_calls"
	case ir.StopContentFilter:
		return "content_filter"
	}
	return "stop"
}

// newID returns prefix plus 26 random base32 characters.
func newID(prefix string) string { return prefix + rand.Text() }

// upstreamError reports an upstream answer this codec cannot read. Another
// channel may answer properly, so it is worth retrying elsewhere.
func upstreamError(format string, args ...any) *ir.Error {
	e := ir.Errorf(502, ir.KindUpstream, "bad_upstream_response", format, args...)
	e.Retry = ir.RetryNext
	return e
}
