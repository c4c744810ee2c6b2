package responses

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

var usageKey = []byte(`"usage"`)

// SniffUsage reads the usage of a Response object (or of a compaction
// answer, which reports usage the same way) relayed untouched.
func SniffUsage(body []byte) (ir.Usage, bool) {
	if !bytes.Contains(body, usageKey) {
		return ir.Usage{}, false
	}
	return usageFrom(gjson.GetBytes(body, "usage"))
}

// SniffStreamUsage reads usage from a terminal stream event
// (response.completed, response.incomplete, response.failed), whose
// response carries the usage of the whole call.
func SniffStreamUsage(name string, data []byte) (ir.Usage, bool) {
	if !bytes.Contains(data, usageKey) {
		return ir.Usage{}, false
	}
	typ := name
	if typ == "" || typ == "message" {
		typ = gjson.GetBytes(data, "type").String()
	}
	if !IsTerminalEvent(typ) {
		return ir.Usage{}, false
	}
	return usageFrom(gjson.GetBytes(data, "response.usage"))
}

// IsTerminalEvent reports whether an event type ends a Responses stream.
func IsTerminalEvent(typ string) bool {
	switch typ {
	case "response.completed", "response.incomplete", "response.failed":
		return true
	}
	return false
}

func usageFrom(u gjson.Result) (ir.Usage, bool) {
	if !u.IsObject() {
		return ir.Usage{}, false
	}
	out := ir.Usage{
		InputTokens:     count(u.Get("input_tokens")),
		OutputTokens:    count(u.Get("output_tokens")),
		CacheReadTokens: count(u.Get("input_tokens_details.cached_tokens")),
		ReasoningTokens: count(u.Get("output_tokens_details.reasoning_tokens")),
	}
	if out.CacheReadTokens > out.InputTokens {
		out.CacheReadTokens = out.InputTokens
	}
	return out, !out.IsZero()
}

// count reads a token count; negative or absurd values count as zero so a
// broken upstream cannot turn a charge into a refund.
func count(v gjson.Result) int {
	if v.Type != gjson.Number || v.Num <= 0 || v.Num >= 1<<40 {
		return 0
	}
	return int(v.Int())
}

// ResponseIDOf reads the id of a Response object, or of the response in a
// stream event; empty when there is none.
func ResponseIDOf(data []byte) string {
	r := gjson.ParseBytes(data)
	if r.Get("object").String() == "response" {
		return responseID(r.Get("id").String())
	}
	return responseID(r.Get("response.id").String())
}

// responseID bounds an upstream id before the gateway keeps it.
func responseID(id string) string {
	if len(id) > 200 || strings.ContainsAny(id, "/?#") {
		return ""
	}
	return id
}
