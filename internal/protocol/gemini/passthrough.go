package gemini

import "github.com/tidwall/gjson"

// PassthroughBody returns raw unchanged: the model is named by the URL, and
// every chunk reports usageMetadata unasked.
func (Codec) PassthroughBody(raw []byte, _ string, _ bool) ([]byte, error) { return raw, nil }

// CheckConvertible refuses features the IR cannot carry; see the package
// function of the same name.
func (Codec) CheckConvertible(raw []byte) error { return CheckConvertible(raw) }

// AppendStreamText appends the text of every part of the first candidate
// (thoughts included: they are billed as output).
func (Codec) AppendStreamText(dst []byte, _ string, data []byte) []byte {
	gjson.GetBytes(data, "candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
		dst = append(dst, p.Get("text").String()...)
		return true
	})
	return dst
}

// UsageOnlyEvent is always false: the gateway never asks this format for
// usage, every chunk carries it.
func (Codec) UsageOnlyEvent(string, []byte) bool { return false }
