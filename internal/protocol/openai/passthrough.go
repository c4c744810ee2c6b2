package openai

import (
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// PassthroughBody sets the channel's model and, for a stream, asks for the
// usage chunk: without stream_options.include_usage the API reports no
// usage at all and the gateway would have to bill by counting.
func (ChatCodec) PassthroughBody(raw []byte, model string, stream bool) ([]byte, error) {
	body := raw
	var err error
	if gjson.GetBytes(body, "model").String() != model {
		if body, err = sjson.SetBytes(body, "model", model); err != nil {
			return nil, notAnObject()
		}
	}
	if stream && !gjson.GetBytes(body, "stream_options.include_usage").Bool() {
		if body, err = sjson.SetBytes(body, "stream_options.include_usage", true); err != nil {
			return nil, notAnObject()
		}
	}
	return body, nil
}

func notAnObject() *ir.Error {
	return ir.BadRequest("invalid_body", "the request body is not a JSON object")
}

// CheckConvertible accepts every body: everything a chat completion request
// can say that the IR cannot carry is dropped harmlessly or refused by
// DecodeRequest already.
func (ChatCodec) CheckConvertible([]byte) error { return nil }

// deltaTextMembers are where a chunk's first choice's delta carries text.
var deltaTextMembers = [...]string{"content", "reasoning_content"}

// AppendStreamText appends a chunk's content and reasoning text: those of
// choices.0.delta. The delta is found once, and the first choice by
// iterating the array rather than by the path "choices.0": gjson's array
// path step has a 1 KB frame, and this runs on the goroutine of an open
// stream, whose stack stays at the deepest it ever was.
func (ChatCodec) AppendStreamText(dst []byte, _ string, data []byte) []byte {
	var first gjson.Result
	if choices := gjson.GetBytes(data, "choices"); choices.IsArray() {
		choices.ForEach(func(_, choice gjson.Result) bool {
			first = choice
			return false
		})
	}
	// Looked up after ForEach returned, so its frame is not under Get's.
	delta := first.Get("delta")
	for _, m := range deltaTextMembers {
		dst = append(dst, delta.Get(m).String()...)
	}
	return dst
}

// UsageOnlyEvent reports the chunk include_usage adds at the end: usage
// with an empty choices array.
func (ChatCodec) UsageOnlyEvent(_ string, data []byte) bool {
	ch := gjson.GetBytes(data, "choices")
	return ch.IsArray() && !ch.Get("0").Exists()
}
