package openai

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

var (
	_ protocol.StreamErrorEncoder = ChatCodec{}
	_ protocol.StreamEndSniffer   = ChatCodec{}
)

// EncodeStreamError is the unnamed event data: {"error":{…}} the OpenAI
// libraries raise as an APIError mid-stream; no [DONE] follows it.
func (ChatCodec) EncodeStreamError(e *ir.Error) (string, []byte) { return "", encodeError(e) }

// StreamEnds is true for [DONE] and for a chunk with a finish_reason: a
// stream that stopped for a reason is whole even when [DONE] is missing.
// Most chunks carry "finish_reason":null, which is ruled out before
// parsing.
func (ChatCodec) StreamEnds(_ string, data []byte) bool {
	if bytes.Equal(data, doneSentinel) {
		return true
	}
	if named, null := scanName(data, finishReasonBare); !named || null {
		return false
	}
	return gjson.GetBytes(data, "choices.0.finish_reason").Type == gjson.String
}
