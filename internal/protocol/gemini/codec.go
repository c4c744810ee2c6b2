package gemini

import "github.com/turnpike-gw/turnpike/internal/protocol"

// Codec converts the alternate-native generateContent format to and from the
// IR. It holds no state; stream codecs carry their own.
type Codec struct{}

// Generate is the codec for POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent.
var Generate = Codec{}

var _ protocol.Codec = Codec{}

// Format names the wire format this codec speaks.
func (Codec) Format() protocol.Format { return protocol.Gemini }

// NewStreamDecoder returns a decoder for one upstream stream.
func (Codec) NewStreamDecoder() protocol.StreamDecoder { return &streamDecoder{} }

// NewStreamEncoder returns an encoder writing one client stream to sink.
func (Codec) NewStreamEncoder(sink protocol.EventSink, _ protocol.StreamOptions) protocol.StreamEncoder {
	return &streamEncoder{sink: sink}
}
