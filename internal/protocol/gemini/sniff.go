package gemini

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/turnpike-gw/turnpike/internal/ir"
)

var usageKey = []byte(`"usageMetadata"`)

// SniffUsage reads usageMetadata from a relayed body without decoding it. A
// JSON-array stream body reports its last chunk's cumulative usage.
func (Codec) SniffUsage(body []byte) (ir.Usage, bool) {
	if !bytes.Contains(body, usageKey) {
		return ir.Usage{}, false
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var last gjson.Result
		gjson.ParseBytes(trimmed).ForEach(func(_, v gjson.Result) bool {
			if u := v.Get("usageMetadata"); u.IsObject() {
				last = u
			}
			return true
		})
		return usageFromResult(last)
	}
	return usageFromResult(gjson.GetBytes(body, "usageMetadata"))
}

// SniffStreamUsage reads one chunk's cumulative usageMetadata.
func (c Codec) SniffStreamUsage(_ string, data []byte) (ir.Usage, bool) {
	if !bytes.Contains(data, usageKey) {
		return ir.Usage{}, false
	}
	return usageFromResult(gjson.GetBytes(data, "usageMetadata"))
}

func usageFromResult(u gjson.Result) (ir.Usage, bool) {
	if !u.IsObject() {
		return ir.Usage{}, false
	}
	// One pass over the object instead of a lookup per field.
	var w usageWire
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.String() {
		case "promptTokenCount":
			w.PromptTokenCount = int(v.Int())
		case "candidatesTokenCount":
			w.CandidatesTokenCount = int(v.Int())
		case "cachedContentTokenCount":
			w.CachedContentTokenCount = int(v.Int())
		case "thoughtsTokenCount":
			w.ThoughtsTokenCount = int(v.Int())
		case "toolUsePromptTokenCount":
			w.ToolUsePromptTokenCount = int(v.Int())
		}
		return true
	})
	return usageFromWire(&w), true
}
