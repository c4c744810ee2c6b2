package openai

import (
	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Completions is the passthrough view of the legacy /v1/completions stream:
// the same usage object and usage-only last chunk as chat, with the answer
// text at choices[0].text.
var Completions completionStream

type completionStream struct{}

// SniffStreamUsage reads a chunk's usage; an all-zero usage object is no
// report (some upstreams send one on every chunk), so the text is counted.
func (completionStream) SniffStreamUsage(_ string, data []byte) (ir.Usage, bool) {
	u, ok := sniffUsage(data)
	if !ok || (u.InputTokens == 0 && u.OutputTokens == 0) {
		return ir.Usage{}, false
	}
	return u, true
}

// AppendStreamText appends a chunk's completion text.
func (completionStream) AppendStreamText(dst []byte, _ string, data []byte) []byte {
	return append(dst, gjson.GetBytes(data, "choices.0.text").String()...)
}

// UsageOnlyEvent is the chunk include_usage adds, as for chat.
func (completionStream) UsageOnlyEvent(name string, data []byte) bool {
	return ChatCodec{}.UsageOnlyEvent(name, data)
}
