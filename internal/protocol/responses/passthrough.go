package responses

import (
	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// EventStream is what a relay needs to pass a Responses event stream through
// untouched.
type EventStream struct{}

// Events is the passthrough knowledge of the Responses event stream.
var Events = EventStream{}

var _ protocol.StreamPassthrough = EventStream{}

// SniffStreamUsage reads usage from a terminal event.
func (EventStream) SniffStreamUsage(name string, data []byte) (ir.Usage, bool) {
	return SniffStreamUsage(name, data)
}

// AppendStreamText appends the delta of text, reasoning-summary and
// function-argument delta events.
func (EventStream) AppendStreamText(dst []byte, name string, data []byte) []byte {
	switch EventType(name, data) {
	case "response.output_text.delta", "response.function_call_arguments.delta", "response.reasoning_summary_text.delta":
		dst = append(dst, gjson.GetBytes(data, "delta").String()...)
	}
	return dst
}

// UsageOnlyEvent is always false: usage rides on the terminal event.
func (EventStream) UsageOnlyEvent(string, []byte) bool { return false }

// EventType is an event's type: its SSE name, or the data's "type" when the
// event is unnamed.
func EventType(name string, data []byte) string {
	if name == "" || name == "message" {
		return gjson.GetBytes(data, "type").String()
	}
	return name
}
