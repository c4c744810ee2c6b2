package store

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// OtherFacts are the members of a usage row's other that the rollups read,
// handed over by the code that marshalled other: the billing writer folds
// every row into its buckets, and reading back the other it was just
// given was about 1.5 % of a gateway's CPU under load. They hold for the
// bytes they were made with only: a row whose other is replaced later (a
// plan's or team's mark appended) has its other read as before.
type OtherFacts struct {
	of []byte
	o  rollupOther
}

// NewOtherFacts records, for the other bytes just marshalled, the values
// readRollupOther would find there: an absent member is its zero value,
// keyIndex is the last attempt's key_index. The caller vouches that other
// has no adjustment member and no second member whose name folds to one
// of these.
func NewOtherFacts(other []byte, cacheRead int64, upstreamCostUSD, upstreamModel string, keyIndex int64) OtherFacts {
	return OtherFacts{of: other, o: rollupOther{CacheRead: cacheRead, UpstreamCostUSD: upstreamCostUSD,
		UpstreamModel: upstreamModel, Attempts: lastAttempt{KeyIndex: keyIndex}}}
}

// Known reports whether f was made for some other.
func (f OtherFacts) Known() bool { return f.of != nil }

// rollupOther is what the rollups read of l's other: its facts when they
// were made with these very bytes, else other parsed.
func (l *UsageLog) rollupOther() rollupOther {
	if f := l.Facts.of; len(f) > 0 && len(f) == len(l.Other) && &f[0] == &l.Other[0] {
		return l.Facts.o
	}
	return readRollupOther(l.Other)
}

// readRollupOther reads what a bucket needs of a row's other exactly as
// json.Unmarshal into rollupOther would, without its reflection: the
// billing writer does this for every usage row, and the reflective
// decode was about 3 % of a gateway's CPU under load. The rules it
// mirrors: invalid JSON or a value that is not an object sets nothing;
// member names match case-insensitively and the last match wins; a value
// of the wrong type (or an integer out of range) leaves the member as it
// was; null leaves it as it was.
func readRollupOther(raw []byte) rollupOther {
	var o rollupOther
	if len(raw) == 0 || !gjson.ValidBytes(raw) {
		return o
	}
	doc := gjson.ParseBytes(raw)
	if !doc.IsObject() {
		return o
	}
	doc.ForEach(func(k, v gjson.Result) bool {
		switch {
		case strings.EqualFold(k.Str, "cache_read_tokens"):
			if v.Type == gjson.Number {
				if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
					o.CacheRead = n
				}
			}
		case strings.EqualFold(k.Str, "upstream_cost_usd"):
			if v.Type == gjson.String {
				o.UpstreamCostUSD = v.Str
			}
		case strings.EqualFold(k.Str, "adjustment"):
			if v.Type == gjson.True || v.Type == gjson.False {
				o.Adjustment = v.Type == gjson.True
			}
		case strings.EqualFold(k.Str, "upstream_model"):
			if v.Type == gjson.String {
				o.UpstreamModel = v.Str
			}
		case strings.EqualFold(k.Str, "attempts"):
			if v.IsArray() {
				o.Attempts = lastAttempt{KeyIndex: lastKeyIndex(v)}
			}
		}
		return true
	})
	return o
}

// lastKeyIndex is the key_index of the last element of attempts, as
// lastAttempt.UnmarshalJSON reads it: an element that is no object, or
// whose member is no integer, reads as 0.
func lastKeyIndex(attempts gjson.Result) int64 {
	var last gjson.Result
	n := 0
	attempts.ForEach(func(_, v gjson.Result) bool {
		last, n = v, n+1
		return true
	})
	var index int64
	if n == 0 || !last.IsObject() {
		return 0
	}
	last.ForEach(func(k, v gjson.Result) bool {
		if strings.EqualFold(k.Str, "key_index") && v.Type == gjson.Number {
			if i, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
				index = i
			}
		}
		return true
	})
	return index
}

// picoFast reads a plain decimal of at most twelve fractional digits
// ("0.0000108", "-3", "12.5") as 10⁻¹² dollars without math/big, which is
// what every upstream cost the gateway writes looks like; ok is false for
// anything else (exponents, signs in odd places, more digits, overflow),
// which pico then reads the exact way.
func picoFast(s string) (n int64, ok bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > 12 || len(whole) > 6 || dot && frac == "" && whole == "" {
		return 0, false
	}
	for _, part := range [2]string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, false
			}
			n = n*10 + int64(part[i]-'0')
		}
	}
	for i := len(frac); i < 12; i++ {
		n *= 10
	}
	if neg {
		n = -n
	}
	return n, true
}
