package admission

import (
	"encoding/json"
	"math"
	"strconv"
)

// Every call's usage row carries an Other, so it is written here member by
// member instead of through encoding/json's reflection (about 1 % of a
// regular call's CPU under load): the same bytes as json.Marshal, which
// FuzzAppendOtherMatchesEncodingJSON holds it to. What is rare or nested
// beyond a level (guardrail records) still goes through json.Marshal.

// appendOther appends o as json.Marshal writes it; ok is false for what
// json.Marshal refuses (a group ratio that is not a finite number).
func appendOther(b []byte, o *Other) ([]byte, bool) {
	if math.IsNaN(o.GroupRatio) || math.IsInf(o.GroupRatio, 0) {
		return b, false
	}
	b = append(b, '{')
	b = appendStringMember(b, `"endpoint":`, o.Endpoint)
	b = appendStringMember(b, `"surface":`, o.Surface)
	b = append(b, `"stream":`...)
	b = strconv.AppendBool(b, o.Stream)
	b = append(b, ',')
	b = appendStringMember(b, `"upstream_model":`, o.UpstreamModel)
	b = appendIntMember(b, `"cache_read_tokens":`, int64(o.CacheRead))
	b = appendIntMember(b, `"cache_write_tokens":`, int64(o.CacheWrite))
	b = appendIntMember(b, `"reasoning_tokens":`, int64(o.Reasoning))
	b = append(b, `"group_ratio":`...)
	b = appendFloat(b, o.GroupRatio)
	b = append(b, ',')
	if len(o.Attempts) > 0 {
		b = appendAttempts(b, o.Attempts)
	}
	b = appendStringMember(b, `"fallback_from":`, o.FallbackFrom)
	b = appendStringMember(b, `"upstream_cost_usd":`, o.UpstreamCostUSD)
	b = appendIntMember(b, `"price_version":`, o.PriceVersion)
	b = appendStringMember(b, `"affinity":`, o.Affinity)
	b = appendStringMember(b, `"strategy":`, o.Strategy)
	if len(o.DroppedTools) > 0 {
		b = append(b, `"dropped_tools":[`...)
		for i, s := range o.DroppedTools {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, "],"...)
	}
	b = appendStringMember(b, `"content":`, o.Content)
	if len(o.Guardrails) > 0 {
		g, err := json.Marshal(o.Guardrails)
		if err != nil {
			return b, false
		}
		b = append(append(append(b, `"guardrails":`...), g...), ',')
	}
	b = appendIntMember(b, `"team":`, o.Team)
	b = appendIntMember(b, `"org":`, o.Org)
	b[len(b)-1] = '}' // the last member's comma; "stream" is always there
	return b, true
}

func appendAttempts(b []byte, as []Attempt) []byte {
	b = append(b, `"attempts":[`...)
	for i, a := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"channel_id":`...)
		b = strconv.AppendInt(b, a.ChannelID, 10)
		b = append(b, `,"key_index":`...)
		b = strconv.AppendInt(b, int64(a.KeyIndex), 10)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(a.Status), 10)
		if a.ErrorCode != "" {
			b = append(b, `,"error_code":`...)
			b = appendString(b, a.ErrorCode)
		}
		b = append(b, `,"latency_ms":`...)
		b = strconv.AppendInt(b, a.LatencyMS, 10)
		b = append(b, '}')
	}
	return append(b, "],"...)
}

// appendStringMember appends name and s and a comma, or nothing for an
// empty s (omitempty).
func appendStringMember(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return append(appendString(append(b, name...), s), ',')
}

// appendIntMember appends name and n and a comma, or nothing for zero
// (omitempty).
func appendIntMember(b []byte, name string, n int64) []byte {
	if n == 0 {
		return b
	}
	return append(strconv.AppendInt(append(b, name...), n, 10), ',')
}

// appendString appends s quoted. Printable ASCII that encoding/json leaves
// as it is goes straight in; anything else (escapes, HTML-sensitive bytes,
// other scripts, invalid UTF-8) takes json.Marshal's own path.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendFloat writes a finite f as encoding/json does: plain decimals
// between 1e-6 and 1e21, exponents outside, without an exponent's
// leading zero.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}
