package gemini

import (
	"bytes"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var (
	_ protocol.StreamErrorEncoder = Codec{}
	_ protocol.StreamEndSniffer   = Codec{}
)

// EncodeStreamError is an error object as one more element of the stream,
// the shape the alternate-native libraries raise when a stream fails.
func (c Codec) EncodeStreamError(e *ir.Error) (string, []byte) { return "", c.EncodeError(e) }

// StreamEnds is true for the chunk that carries a finishReason: the
// alternate-native stream has no other end marker.
func (Codec) StreamEnds(_ string, data []byte) bool {
	return bytes.Contains(data, finishReasonKey)
}

var finishReasonKey = []byte(`"finishReason"`)
