package anthropic

import (
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// PassthroughBody sets the channel's model; the format reports usage in
// every stream unasked.
func (Codec) PassthroughBody(raw []byte, model string, _ bool) ([]byte, error) {
	if gjson.GetBytes(raw, "model").String() == model {
		return raw, nil
	}
	body, err := sjson.SetBytes(raw, "model", model)
	if err != nil {
		return nil, ir.BadRequest("invalid_body", "the request body is not a JSON object")
	}
	return body, nil
}

// CheckConvertible accepts every body: what the IR cannot carry is dropped
// harmlessly or refused by DecodeRequest (server tools are refused by the
// encoders of the formats that lack them).
func (Codec) CheckConvertible([]byte) error { return nil }

// streamTextPaths are where content_block_delta events carry text.
var streamTextPaths = [...]string{"delta.text", "delta.thinking", "delta.partial_json"}

// AppendStreamText appends the text, thinking or tool input of a
// content_block_delta.
func (Codec) AppendStreamText(dst []byte, name string, data []byte) []byte {
	if name != "" && name != "content_block_delta" {
		return dst
	}
	for _, p := range streamTextPaths {
		dst = append(dst, gjson.GetBytes(data, p).String()...)
	}
	return dst
}

// UsageOnlyEvent is always false: the gateway never asks this format for
// usage, it comes in message_start and message_delta anyway.
func (Codec) UsageOnlyEvent(string, []byte) bool { return false }
