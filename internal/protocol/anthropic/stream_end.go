package anthropic

import (
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var (
	_ protocol.StreamErrorEncoder = Codec{}
	_ protocol.StreamEndSniffer   = Codec{}
)

// EncodeStreamError is the "error" event the messages API sends when a
// stream fails mid-way; its data is the error envelope of a whole answer.
func (c Codec) EncodeStreamError(e *ir.Error) (string, []byte) { return "error", c.EncodeError(e) }

// StreamEnds is true for message_stop and for the message_delta that
// carries the stop reason: after it only the stop marker is left.
func (Codec) StreamEnds(name string, _ []byte) bool {
	return name == "message_stop" || name == "message_delta"
}
