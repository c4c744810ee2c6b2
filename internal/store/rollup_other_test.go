package store

import (
	"encoding/json"
	"math/big"
	"testing"
)

// referenceOther is what readRollupOther must agree with.
func referenceOther(raw []byte) rollupOther {
	var o rollupOther
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &o)
	}
	return o
}

// referencePico is pico without its fast path.
func referencePico(usd string) int64 {
	r, ok := new(big.Rat).SetString(usd)
	if !ok {
		return 0
	}
	r.Mul(r, picoPerUSD)
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() {
		return 0
	}
	return n.Int64()
}

func TestRollupOtherReadsWhatJSONUnmarshalReads(t *testing.T) {
	for _, raw := range []string{
		string(benchOther),
		``, `null`, `[]`, `"x"`, `{}`, `{"cache_read_tokens":`, `{"cache_read_tokens":7} x`,
		`{"cache_read_tokens":7,"upstream_cost_usd":"0.5","adjustment":true}`,
		`{"Cache_Read_Tokens":7,"UPSTREAM_COST_USD":"1","Adjustment":true}`,
		`{"cache_read_tokens":7,"cache_read_tokens":9}`,
		`{"cache_read_tokens":7,"cache_read_tokens":"9"}`,
		`{"cache_read_tokens":7,"cache_read_tokens":null}`,
		`{"cache_read_tokens":1.5}`, `{"cache_read_tokens":1e3}`, `{"cache_read_tokens":-0}`,
		`{"cache_read_tokens":99999999999999999999}`, `{"cache_read_tokens":-9223372036854775808}`,
		`{"upstream_cost_usd":0.5}`, `{"upstream_cost_usd":"\u0030.1"}`, `{"upstream_cost_usd":["1"]}`,
		`{"adjustment":"true"}`, `{"adjustment":1}`, `{"adjustment":true,"adjustment":false}`,
		`{"a\u0064justment":true}`, `{"nested":{"adjustment":true}}`, `{"ſadjustment":true}`,
		`{"cache_read_tokens":7,"bad":tru}`,
		`{"upstream_model":"m","Upstream_Model":"n"}`, `{"upstream_model":3}`, `{"upstream_model":"m","upstream_model":null}`,
		`{"attempts":[{"key_index":1},{"key_index":4}]}`, `{"attempts":[]}`, `{"attempts":[{"key_index":2}],"attempts":[]}`,
		`{"attempts":[{"key_index":2}],"attempts":"x"}`, `{"attempts":[{"key_index":2}],"attempts":null}`,
		`{"attempts":[{"key_index":2},7]}`, `{"attempts":[{"Key_Index":2,"key_index":"3"}]}`, `{"attempts":[{"key_index":1.5}]}`,
		`{"attempts":{"key_index":2}}`, `{"attempts":[{"key_index":2,"key_index":5}]}`,
	} {
		t.Run(raw, func(t *testing.T) {
			if got, want := readRollupOther([]byte(raw)), referenceOther([]byte(raw)); got != want {
				t.Fatalf("read %+v, json.Unmarshal reads %+v", got, want)
			}
		})
	}
}

func TestPicoReadsEveryDecimalAsMathBigDoes(t *testing.T) {
	for _, s := range []string{"0", "1", "0.0000108", "12.5", "-3", "+3", "-0.000000000001", "0.000000000001",
		"0.0000000000015", "5.", ".5", ".", "-", "+", "1e-6", "1/3", "999999.999999999999", "9999999", "00012.000",
		"1.2.3", " 1", "0x10", "1_000", "-.5"} {
		if got, want := pico(s), referencePico(s); got != want {
			t.Errorf("pico(%q) = %d, math/big reads %d", s, got, want)
		}
	}
}

func FuzzRollupOtherMatchesJSON(f *testing.F) {
	f.Add(benchOther)
	f.Add([]byte(`{"Adjustment":true,"cache_read_tokens":3,"upstream_cost_usd":"0.25"}`))
	f.Add([]byte(`{"attempts":[{"key_index":1},{"key_index":4}],"upstream_model":"m"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, want := readRollupOther(raw), referenceOther(raw)
		// The cost is compared as what it adds up to: json.Unmarshal and
		// gjson may spell invalid UTF-8 in a string differently, which no
		// decimal has.
		if got.CacheRead != want.CacheRead || got.Adjustment != want.Adjustment || pico(got.UpstreamCostUSD) != pico(want.UpstreamCostUSD) ||
			got.Attempts != want.Attempts {
			t.Fatalf("%q: read %+v, json.Unmarshal reads %+v", raw, got, want)
		}
	})
}

func FuzzPicoMatchesMathBig(f *testing.F) {
	for _, s := range []string{"0.0000108", "12.5", "-3", "5.", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		if got, want := pico(s), referencePico(s); got != want {
			t.Fatalf("pico(%q) = %d, math/big reads %d", s, got, want)
		}
	})
}

// TestFactsHoldOnlyForTheBytesTheyWereMadeWith: a row's other replaced
// after its facts were taken (a plan's or team's mark appended) is read,
// not answered from facts that no longer describe it.
func TestFactsHoldOnlyForTheBytesTheyWereMadeWith(t *testing.T) {
	other := []byte(`{"upstream_model":"a","cache_read_tokens":5}`)
	l := UsageLog{Other: other, Facts: NewOtherFacts(other, 5, "", "a", 0)}
	if got := l.rollupOther(); got.UpstreamModel != "a" || got.CacheRead != 5 {
		t.Fatalf("with its facts: %+v", got)
	}
	l.Facts.o.CacheRead = 99 // facts that would show if they were used
	if got := l.rollupOther(); got.CacheRead != 99 {
		t.Fatalf("the facts of these very bytes were not used: %+v", got)
	}
	cases := map[string][]byte{
		"other replaced by equal bytes": []byte(`{"upstream_model":"a","cache_read_tokens":5}`),
		"other grown by a mark":         append(other[:len(other)-1:len(other)-1], []byte(`,"plan":1}`)...),
		"other cut short":               other[:len(other)-1],
	}
	for name, replaced := range cases {
		t.Run(name, func(t *testing.T) {
			l := l
			l.Other = replaced
			if got, want := l.rollupOther(), readRollupOther(replaced); got != want {
				t.Errorf("got %+v, want other read: %+v", got, want)
			}
		})
	}
}
