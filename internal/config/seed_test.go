package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSeedPriceReadsReasoningAndTiers(t *testing.T) {
	p := writeFile(t, `
models:
  gemini-2.5-pro:
    input_per_mtok: 1.25
    output_per_mtok: 10
    reasoning_per_mtok: 10
    cache_read_per_mtok: 0.31
    tiers:
      - {above_input_tokens: 200000, input_per_mtok: 2.5, output_per_mtok: 15, cache_read_per_mtok: 0.625}
      - above_input_tokens: 1000000
        reasoning_per_mtok: 20
        cache_write_per_mtok: 4.5
`)
	c, err := Load(p, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Models["gemini-2.5-pro"]
	want := SeedPrice{InputPerMTok: 1.25, OutputPerMTok: 10, ReasoningPerMTok: 10, CacheReadPerMTok: 0.31, Tiers: []SeedPriceTier{
		{AboveInputTokens: 200000, InputPerMTok: 2.5, OutputPerMTok: 15, CacheReadPerMTok: 0.625},
		{AboveInputTokens: 1000000, ReasoningPerMTok: 20, CacheWritePerMTok: 4.5},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// The entry is handed to the admin API's decoder as JSON under the
	// API's member names.
	raw, _ := json.Marshal(got)
	for _, member := range []string{`"reasoning_per_mtok":10`, `"tiers":[{"above_input_tokens":200000,"input_per_mtok":2.5,"output_per_mtok":15,"cache_read_per_mtok":0.625}`} {
		if !strings.Contains(string(raw), member) {
			t.Errorf("JSON %s lacks %s", raw, member)
		}
	}
	// A price without the new members marshals as before, so the digest
	// that marks it applied does not change and it is not re-applied.
	plain, _ := json.Marshal(SeedPrice{InputPerMTok: 0.15, OutputPerMTok: 0.6})
	if string(plain) != `{"input_per_mtok":0.15,"output_per_mtok":0.6}` {
		t.Errorf("plain price marshals as %s", plain)
	}
}

func TestSeedTierRefusesUnknownMembers(t *testing.T) {
	p := writeFile(t, `
models:
  m:
    input_per_mtok: 1
    tiers:
      - {above_input_tokens: 10, input_per_mtok: 2, per_call: 1}
`)
	if _, err := Load(p, env(nil)); err == nil || !strings.Contains(err.Error(), "per_call") {
		t.Fatalf("err = %v, want one naming per_call", err)
	}
}
