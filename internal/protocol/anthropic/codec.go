// Package anthropic implements the messages-native wire format
// (POST /v1/messages) as a protocol.Codec: requests, responses, stream events,
// errors and usage, converted to and from the IR.
//
// Usage convention: the format reports input_tokens without cache tokens and
// counts cache_creation_input_tokens and cache_read_input_tokens separately;
// the IR counts them inside InputTokens. Decoders add them, encoders subtract.
package anthropic

import (
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// DefaultVersion is the version header value sent upstream when the client
// gave none.
const DefaultVersion = "2023-06-01"

// DefaultMaxTokens fills the upstream's required max_tokens when the IR
// request (typically from a format where it is optional) has none.
var DefaultMaxTokens = 4096

// Codec is the messages-native codec. It is stateless; stream state lives in
// the values NewStreamDecoder and NewStreamEncoder return.
type Codec struct{}

// Messages is the codec value the relay registers for /v1/messages.
var Messages = Codec{}

var _ protocol.Codec = Codec{}

// Format reports protocol.Anthropic.
func (Codec) Format() protocol.Format { return protocol.Anthropic }

// NewStreamDecoder returns a decoder for one upstream stream.
func (Codec) NewStreamDecoder() protocol.StreamDecoder { return newStreamDecoder() }

// NewStreamEncoder returns an encoder writing one client stream to sink.
func (Codec) NewStreamEncoder(sink protocol.EventSink, _ protocol.StreamOptions) protocol.StreamEncoder {
	return newStreamEncoder(sink)
}

// badParam is a 400 naming the offending field, as every request check uses.
func badParam(param, code, format string, args ...any) *ir.Error {
	e := ir.BadRequest(code, format, args...)
	e.Param = param
	return e
}
