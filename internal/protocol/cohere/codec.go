// Package cohere converts between the IR and Cohere's v2 chat wire
// (POST /v2/chat and its server-sent event stream). Only channels speak it,
// so it implements the upstream half of a codec: requests are encoded,
// answers, stream events and errors decoded.
//
// Two choices shape the conversion:
//   - The tool plan (the text a model writes before calling tools, streamed
//     as tool-plan-delta) becomes answer text, not reasoning: Cohere shows
//     it to users as the model's explanation, and assistant text sent back
//     next to tool calls is encoded as tool_plan again, so it round-trips.
//   - Thinking content of reasoning models becomes thinking blocks.
package cohere

import "github.com/turnpike-gw/turnpike/internal/protocol"

// Codec is the v2 chat wire. It holds no state; stream decoders carry
// their own.
type Codec struct{}

// V2 is the codec of POST /v2/chat.
var V2 = Codec{}

var _ protocol.UpstreamCodec = Codec{}

// Format names the wire format.
func (Codec) Format() protocol.Format { return protocol.Cohere }

// NewStreamDecoder returns a decoder for one upstream stream.
func (Codec) NewStreamDecoder() protocol.StreamDecoder { return &streamDecoder{} }
