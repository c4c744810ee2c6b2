// Package bedrock is the upstream half of Amazon Bedrock's Converse API
// (POST /model/{modelId}/converse and /converse-stream) as a
// protocol.UpstreamCodec: IR requests become Converse bodies, Converse
// answers, stream events and errors become IR.
//
// Usage convention: Converse reports inputTokens without the cached tokens
// and counts cacheReadInputTokens and cacheWriteInputTokens separately, as
// the messages-native format does; the IR counts them inside InputTokens,
// so the decoders add them.
//
// Stream events arrive as AWS event-stream frames, which the channel's
// adapter unwraps: the decoder sees each frame's :event-type as the event
// name (messageStart, contentBlockStart, contentBlockDelta,
// contentBlockStop, messageStop, metadata) and its JSON payload as data.
package bedrock

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/protocol"
)

// Codec is the Converse codec. It is stateless; stream state lives in the
// decoder NewStreamDecoder returns.
type Codec struct{}

// Converse is the codec value channels of Amazon Bedrock use.
var Converse = Codec{}

var _ protocol.UpstreamCodec = Codec{}

// Format reports protocol.Bedrock.
func (Codec) Format() protocol.Format { return protocol.Bedrock }

// NewStreamDecoder returns a decoder for one ConverseStream answer.
func (Codec) NewStreamDecoder() protocol.StreamDecoder {
	return &streamDecoder{blocks: map[int]*decBlock{}}
}

// IsAnthropicModel reports a Bedrock model id (or inference profile id)
// of an Anthropic model, whose extra fields (thinking, top_k) the codec
// knows how to send.
func IsAnthropicModel(model string) bool {
	m := strings.ToLower(model)
	return strings.Contains(m, "anthropic.") || strings.Contains(m, "claude")
}

// badParam is a 400 naming the offending field.
func badParam(param, format string, args ...any) *ir.Error {
	e := ir.BadRequest("invalid_request_error", format, args...)
	e.Param = param
	return e
}

// unsupported is a 400 for a field Converse has no way to express.
func unsupported(param, format string, args ...any) *ir.Error {
	e := ir.BadRequest("unsupported_parameter", format, args...)
	e.Param = param
	return e
}

// malformed reports an upstream answer this codec cannot read.
func malformed(msg string) *ir.Error {
	return &ir.Error{Status: 502, Kind: ir.KindUpstream, Code: "bad_upstream_response", Message: msg, Retry: ir.RetryNext}
}

// marshal encodes without HTML escaping, which only bloats model text.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// compact returns raw JSON without insignificant whitespace, or raw as it
// is when it does not parse.
func compact(raw string) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return raw
	}
	return buf.String()
}

func idx(base string, i int) string {
	var b [20]byte
	n := len(b)
	if i == 0 {
		n--
		b[n] = '0'
	}
	for v := i; v > 0; v /= 10 {
		n--
		b[n] = byte('0' + v%10)
	}
	return base + "[" + string(b[n:]) + "]"
}
