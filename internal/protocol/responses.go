package protocol

import "github.com/turnpike-gw/turnpike/internal/ir"

// ResponsesAPI is the OpenAI Responses API (POST /v1/responses) as the relay
// serves it: relayed untouched to channels that speak it, whose usage and
// response ids it reads as they pass, or converted for chat channels.
type ResponsesAPI interface {
	// StreamPassthrough reads a native Responses event stream.
	StreamPassthrough
	// DecodeRequest converts a request for a chat channel. Anything such a
	// channel cannot do is a 400 naming the field, except hosted tools,
	// which are left out and reported (ResponsesConversion.DroppedTools).
	DecodeRequest(body []byte) (ResponsesConversion, error)
	// SniffUsage reads the usage of a Response object (or a compaction
	// answer) relayed untouched.
	SniffUsage(body []byte) (ir.Usage, bool)
	// ResponseID reads the id of a Response object, or of the response a
	// stream event carries; empty when there is none fit to keep.
	ResponseID(data []byte) string
	// CreatedEvent reports the stream event announcing the response
	// (response.created), which carries its id; it is cheap for the others.
	CreatedEvent(name string, data []byte) bool
}

// ResponsesConversion is one Responses request converted for a chat
// channel: the call in IR, and the encoders of its answer, which repeat the
// request's fields back as the Response object does.
type ResponsesConversion interface {
	// Call is the request in IR; callers copy it before changing it.
	Call() *ir.Request
	// DroppedTools names (by type) the hosted tools the conversion left
	// out, which a chat channel cannot run; the usage row records them.
	DroppedTools() []string
	// EncodeResponse renders a chat answer as a Response object; model
	// names it when the answer does not.
	EncodeResponse(res *ir.Response, model string) ([]byte, error)
	// DecodeResponse reads a Response object a channel speaking the
	// Responses API answered for this request back into IR (the inverse of
	// EncodeResponse), or fails when it holds output IR cannot carry
	// whole: the response cache keeps native answers in IR.
	DecodeResponse(body []byte) (*ir.Response, error)
	// NewStreamEncoder returns an encoder of IR events into the Responses
	// event stream, written to sink.
	NewStreamEncoder(sink EventSink, model string) FailingStreamEncoder
	// TrackStream returns a tracker of a Responses event stream relayed
	// untouched for this request, from which a broken one can be resumed.
	TrackStream() ResponsesStream
}

// ResponsesStream is what a client was sent of a Responses event stream
// relayed untouched, as far as continuing it elsewhere needs (stream
// failover, CONTRACT §22).
type ResponsesStream interface {
	// Note reads one event the client was sent.
	Note(name string, data []byte)
	// Resumable reports a stream cut inside the text of its one open
	// message, with text sent and no other item (a tool call, reasoning)
	// under way: only such an answer may be continued.
	Resumable() bool
	// Text is the open message's text so far.
	Text() string
	// Resume returns an encoder that goes on with the stream on sink: IR
	// block 0 continues the open message (same item, same sequence), and
	// the end carries every item the client was sent.
	Resume(sink EventSink) FailingStreamEncoder
}

// FailingStreamEncoder is a StreamEncoder that can end its stream with an
// error of its format when the upstream stream broke off.
type FailingStreamEncoder interface {
	StreamEncoder
	// Fail ends the stream with a client-safe message.
	Fail(message string) error
}
