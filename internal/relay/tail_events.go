package relay

import (
	"net/http"

	"github.com/tidwall/gjson"
)

// The OpenAI event streams that are not chat (image generations and edits,
// transcriptions, Responses, a stored response's retrieval) carry a typed
// event per step; only their terminal events make an answer whole. A stream
// that ends without one was cut off, and says so (CONTRACT §22).
var (
	responseEnds = terminalTypes{"response.completed": true, "response.incomplete": true, "response.failed": true,
		"error": true}
	// eventAnswerEnds are the terminal events of every endpoint event
	// stream relayEventAnswer serves.
	eventAnswerEnds = terminalTypes{"image_generation.completed": true, "image_edit.completed": true,
		"transcript.text.done": true}
)

// terminalTypes is a protocol.StreamEndSniffer over the events' type
// member.
type terminalTypes map[string]bool

// StreamEnds reads the event's type (the SSE event name, else the data's
// type member).
func (t terminalTypes) StreamEnds(name string, data []byte) bool {
	if name != "" && name != "message" {
		return t[name]
	}
	return t[gjson.GetBytes(data, "type").String()]
}

// brokenEventStreamData is the error event these streams end with when cut.
// It carries the Responses API's own error members (type, code, message)
// and an error object, which the official OpenAI clients raise on any
// event that has one.
var brokenEventStreamData = []byte(`{"type":"error","code":"stream_broken","message":"the upstream stream broke off before the answer was complete","param":null,` +
	`"error":{"type":"server_error","code":"stream_broken","message":"the upstream stream broke off before the answer was complete"}}`)

// eventStreamBroken ends a cut event stream with its error event.
func eventStreamBroken(s *sink) func() {
	return func() { _ = s.Event("error", brokenEventStreamData) }
}

// cutConnection ends a binary answer (speech audio) the upstream cut off:
// raw bytes have no error event, so what was sent is flushed and the
// connection closed without the body's end, and the client's library
// reports a truncated body instead of taking part of a file for all of it.
// Where the connection cannot be taken over (HTTP/2), the body ends.
func cutConnection(s *sink) func() {
	return func() {
		s.flush()
		if conn, _, err := http.NewResponseController(s.w).Hijack(); err == nil {
			_ = conn.Close()
		}
	}
}
