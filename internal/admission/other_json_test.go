package admission

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// otherCases are the shapes a usage row's other takes: the plain chat
// call, every member set, and the values encoding/json escapes or formats
// specially.
var otherCases = []struct {
	name string
	o    Other
}{
	{"nothing set", Other{}},
	{"a regular chat call", Other{Endpoint: "chat", Surface: "openai", UpstreamModel: "gpt-4o-mini", GroupRatio: 1,
		Attempts: []Attempt{{ChannelID: 1, Status: 200, LatencyMS: 3}}, UpstreamCostUSD: "0.000123", PriceVersion: 2,
		Strategy: "weighted", Team: 7, Org: 3}},
	{"every member", Other{Endpoint: "responses", Surface: "responses", Stream: true, UpstreamModel: "m", CacheRead: 5,
		CacheWrite: 6, Reasoning: -7, GroupRatio: 0.75, Attempts: []Attempt{{ChannelID: 2, KeyIndex: 1, Status: 429,
			ErrorCode: "rate_limited", LatencyMS: 9}, {ChannelID: 3, Status: 200}}, FallbackFrom: "big", UpstreamCostUSD: "1",
		PriceVersion: 9, Affinity: "hit", Strategy: "latency", DroppedTools: []string{"web_search", "file_search"},
		Content: "c-1", Guardrails: []guardrail.Record{{Name: "pii", Stage: "input", Action: "mask", Matches: map[string]int{"email": 2}}},
		Team: -1, Org: 1 << 40}},
	{"strings encoding/json escapes", Other{Endpoint: "a\"b\\c", Surface: "<tag>&", UpstreamModel: "ünï\u2028",
		FallbackFrom: "\x00\x1f\n\t", Affinity: "\xff\xfe", GroupRatio: 1}},
	{"a tiny ratio takes an exponent", Other{GroupRatio: 1e-7}},
	{"a huge ratio takes an exponent", Other{GroupRatio: -1e21}},
	{"a ratio of two thirds", Other{GroupRatio: 2.0 / 3}},
	{"negative zero", Other{GroupRatio: math.Copysign(0, -1)}},
}

func TestAppendOtherWritesWhatEncodingJSONWrites(t *testing.T) {
	for _, tc := range otherCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(&tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := appendOther(nil, &tc.o)
			if !ok || string(got) != string(want) {
				t.Fatalf("appendOther = %s (ok %v)\njson.Marshal %s", got, ok, want)
			}
		})
	}
}

func TestAppendOtherLeavesANonFiniteRatioToEncodingJSON(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if b, ok := appendOther(nil, &Other{GroupRatio: f}); ok {
			t.Errorf("ratio %v: appendOther wrote %s, want it to decline as json.Marshal errs", f, b)
		}
		if got := MarshalOther(&Other{GroupRatio: f}, nil); got != nil {
			t.Errorf("ratio %v: MarshalOther = %s, want nothing as before", f, got)
		}
	}
}

func FuzzAppendOtherMatchesEncodingJSON(f *testing.F) {
	f.Add("chat", "gpt-4o-mini", "rate_limited", "web_search", 1.0, int64(3), 200, true)
	f.Add("<a&b>", "\xff\u2028", "\"\\", "\x7f", 1e-7, int64(-1), 0, false)
	f.Fuzz(func(t *testing.T, endpoint, model, code, tool string, ratio float64, n int64, status int, stream bool) {
		o := Other{Endpoint: endpoint, Surface: model, Stream: stream, UpstreamModel: model, CacheRead: int(n),
			GroupRatio: ratio, Attempts: []Attempt{{ChannelID: n, Status: status, ErrorCode: code, LatencyMS: n}},
			FallbackFrom: code, UpstreamCostUSD: tool, PriceVersion: n, Affinity: tool, Strategy: endpoint,
			DroppedTools: []string{tool, code}, Content: model, Team: n, Org: -n}
		want, err := json.Marshal(&o)
		got, ok := appendOther(nil, &o)
		if (err == nil) != ok {
			t.Fatalf("json.Marshal err %v, appendOther ok %v", err, ok)
		}
		if ok && string(got) != string(want) {
			t.Fatalf("appendOther = %s\njson.Marshal %s", got, want)
		}
	})
}

func BenchmarkMarshalOtherChatCall(b *testing.B) {
	o := otherCases[1].o
	b.ReportAllocs()
	for b.Loop() {
		MarshalOther(&o, nil)
	}
}
