package anthropic

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

// wireUsage is the format's usage object; input_tokens excludes cache tokens.
type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (w wireUsage) toIR() ir.Usage {
	return ir.Usage{
		InputTokens:      w.InputTokens + w.CacheCreationInputTokens + w.CacheReadInputTokens,
		OutputTokens:     w.OutputTokens,
		CacheReadTokens:  w.CacheReadInputTokens,
		CacheWriteTokens: w.CacheCreationInputTokens,
	}
}

func usageToWire(u ir.Usage) wireUsage {
	return wireUsage{
		InputTokens:              max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0),
		OutputTokens:             u.OutputTokens,
		CacheCreationInputTokens: u.CacheWriteTokens,
		CacheReadInputTokens:     u.CacheReadTokens,
	}
}

// usageFromGJSON reads a usage object; absent fields stay zero.
func usageFromGJSON(u gjson.Result) wireUsage {
	return wireUsage{
		InputTokens:              int(u.Get("input_tokens").Int()),
		OutputTokens:             int(u.Get("output_tokens").Int()),
		CacheCreationInputTokens: int(u.Get("cache_creation_input_tokens").Int()),
		CacheReadInputTokens:     int(u.Get("cache_read_input_tokens").Int()),
	}
}

var usageKey = []byte(`"usage"`)

// SniffUsage reads usage from a complete message body without decoding it.
func (Codec) SniffUsage(body []byte) (ir.Usage, bool) {
	if !bytes.Contains(body, usageKey) {
		return ir.Usage{}, false
	}
	u := gjson.GetBytes(body, "usage")
	if !u.IsObject() {
		return ir.Usage{}, false
	}
	return usageFromGJSON(u).toIR(), true
}

// SniffStreamUsage reads usage from message_start (message.usage) and
// message_delta (usage) events. A message_delta usually carries only the
// cumulative output_tokens; the input fields it leaves out come back zero,
// which ir.Usage.Merge keeps from the earlier message_start.
func (Codec) SniffStreamUsage(name string, data []byte) (ir.Usage, bool) {
	if !bytes.Contains(data, usageKey) {
		return ir.Usage{}, false
	}
	u := gjson.GetBytes(data, "usage")
	if !u.IsObject() {
		u = gjson.GetBytes(data, "message.usage")
	}
	if !u.IsObject() {
		return ir.Usage{}, false
	}
	return usageFromGJSON(u).toIR(), true
}
