// Package protocol defines what a wire-format codec offers the relay. Each
// subpackage (openai, anthropic, gemini) implements Codec with pure functions
// between its wire format and the IR; the relay never looks inside a format.
package protocol

import "github.com/turnpike-gw/turnpike/internal/ir"

// Format names a wire format.
type Format string

// The wire formats the gateway speaks.
const (
	OpenAI    Format = "openai"
	Anthropic Format = "anthropic"
	Gemini    Format = "gemini"
	// Cohere is Cohere's v2 chat wire, spoken only towards channels.
	Cohere Format = "cohere"
	// Bedrock is Amazon Bedrock's Converse API, spoken only towards channels.
	Bedrock Format = "bedrock"
)

// EventSink receives encoded stream events. The relay frames them (SSE, or a
// JSON array for the alternate-native non-SSE stream) and flushes each one.
// name is the SSE event name, empty for unnamed events. data is only valid
// during the call.
type EventSink interface {
	Event(name string, data []byte) error
}

// StreamDecoder turns the data of each upstream stream event into IR events.
// It is stateful: one per stream.
type StreamDecoder interface {
	// Decode handles one upstream event. name is its SSE event name (may be
	// empty); data its payload. emit is called for each IR event produced.
	Decode(name string, data []byte, emit func(ir.Event) error) error
	// Finish is called at the end of the upstream stream; it emits whatever
	// the format implies at the end (a final Stop/Done if none came) and
	// reports an error when the stream ended too early to be a whole answer.
	Finish(emit func(ir.Event) error) error
}

// StreamEncoder turns IR events into the client's stream events. It is
// stateful: one per stream.
type StreamEncoder interface {
	Encode(ev ir.Event) error
}

// StreamOptions tune a client's stream encoder for one call.
type StreamOptions struct {
	// IncludeUsage is the client's request for a usage report inside the
	// stream (OpenAI's stream_options.include_usage); formats that always
	// report usage ignore it.
	IncludeUsage bool
}

// StreamPassthrough is what a relay needs to pass one format's stream events
// to a client untouched: the usage and answer text they carry, read cheaply
// as they pass. Codecs implement it, and so do stream formats that are not
// chat codecs (the Responses API).
type StreamPassthrough interface {
	// SniffStreamUsage reads usage from one stream event's data, if the
	// event carries any; ok is false for events without usage.
	SniffStreamUsage(name string, data []byte) (u ir.Usage, ok bool)
	// AppendStreamText appends the answer text (and tool arguments) one
	// stream event carries to dst: the relay counts it when the upstream
	// reports no usage.
	AppendStreamText(dst []byte, name string, data []byte) []byte
	// UsageOnlyEvent reports an event that carries nothing but usage, the
	// kind PassthroughBody asked for on the client's behalf; the relay
	// drops it for a client that did not ask for it itself.
	UsageOnlyEvent(name string, data []byte) bool
}

// UpstreamCodec is the upstream half of a wire format: what the relay
// needs to call a channel that speaks it. Formats only channels speak
// (Bedrock Converse, Cohere v2) implement just this; the client formats
// implement the whole Codec.
type UpstreamCodec interface {
	Format() Format
	// EncodeRequest builds the upstream body for this format. A field the
	// format cannot express is dropped only where that is harmless, else an
	// *ir.Error 400 naming it is returned.
	EncodeRequest(req *ir.Request) ([]byte, error)
	DecodeResponse(body []byte) (*ir.Response, error)
	NewStreamDecoder() StreamDecoder
	// DecodeError reads an upstream error answer of this format into an
	// *ir.Error with the status kept and a client-safe message.
	DecodeError(status int, body []byte) *ir.Error
}

// EventReader reads an upstream stream one event at a time, whatever its
// framing (SSE, AWS event-stream). name and data are valid until the next
// call; io.EOF ends a stream that ended normally.
type EventReader interface {
	NextEvent() (name, data []byte, err error)
	// Buffered reports bytes already read from the upstream and not yet
	// returned as events, so the relay flushes only when none wait.
	Buffered() int
}

// Codec converts one wire format of chat-style calls to and from the IR.
type Codec interface {
	UpstreamCodec
	StreamPassthrough
	// ModelCatalog answers the format's model-list calls.
	ModelCatalog
	// DecodeRequest parses a client request; failures are *ir.Error 400s
	// that name the offending field.
	DecodeRequest(body []byte) (*ir.Request, error)
	EncodeResponse(resp *ir.Response) ([]byte, error)
	NewStreamEncoder(sink EventSink, opts StreamOptions) StreamEncoder
	// EncodeError renders a client-facing error in this format's dialect.
	EncodeError(e *ir.Error) []byte
	// SniffUsage reads usage from a complete response body without fully
	// decoding it; it is used when the body is relayed untouched.
	SniffUsage(body []byte) (ir.Usage, bool)
	// PassthroughBody returns a client's own request body as an upstream
	// of the same format should receive it: the model set to the channel's
	// (where the body names one) and, for a stream, usage requested when
	// the format only reports it on request. raw is never modified.
	PassthroughBody(raw []byte, model string, stream bool) ([]byte, error)
	// CheckConvertible refuses, with a 400 naming the field, a client body
	// using features that would be lost converting it to another format.
	CheckConvertible(raw []byte) error
}

// StreamErrorEncoder is a client format that can end a stream its upstream
// broke off with an error event of its own dialect, so a client never takes
// a truncated answer for a whole one (CONTRACT §22).
type StreamErrorEncoder interface {
	// EncodeStreamError returns the event that ends a broken stream: its
	// SSE event name (empty for an unnamed event) and its data.
	EncodeStreamError(e *ir.Error) (name string, data []byte)
}

// StreamEndSniffer is a format whose stream says when it is whole: the
// relay passing events untouched learns from it whether an upstream stream
// that ended had ended properly or was cut off.
type StreamEndSniffer interface {
	// StreamEnds reports whether one stream event marks the answer whole
	// (the format's end marker or its final stop reason).
	StreamEnds(name string, data []byte) bool
}
