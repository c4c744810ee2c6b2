package admission

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// TestTheRowsFactsAnswerAsItsOtherReadBack: SetOther hands the rollups
// the values it wrote into other, and they must be what reading other
// back gives, or the rollups would differ from a backfill of the same
// rows. Where a detail key could change that reading (a name that folds
// to a member the rollups read), or the encoding would change a string,
// the row carries no facts and other is read.
func TestTheRowsFactsAnswerAsItsOtherReadBack(t *testing.T) {
	attempts := []Attempt{{ChannelID: 3, KeyIndex: 1, Status: 502}, {ChannelID: 4, KeyIndex: 2, Status: 200}}
	cases := []struct {
		name   string
		o      Other
		detail map[string]any
		facts  bool
	}{
		{name: "a plain call", o: Other{Surface: "openai", GroupRatio: 1}, facts: true},
		{name: "every member the rollups read", o: Other{Surface: "openai", UpstreamModel: "gpt-x", CacheRead: 40,
			UpstreamCostUSD: "0.0000123", Attempts: attempts, GroupRatio: 1.5}, facts: true},
		{name: "a negative cache count", o: Other{CacheRead: -3, GroupRatio: 1}, facts: true},
		{name: "an unrelated detail key", o: Other{UpstreamModel: "m"}, detail: map[string]any{"task_id": "t1"}, facts: true},
		{name: "a detail key folding to upstream_model", o: Other{UpstreamModel: "m"},
			detail: map[string]any{"Upstream_Model": "other"}, facts: false},
		{name: "a detail adjustment", o: Other{UpstreamCostUSD: "1"}, detail: map[string]any{"adjustment": true}, facts: false},
		{name: "a detail key folding to attempts", o: Other{Attempts: attempts}, detail: map[string]any{"ATTEMPTS": []int{}}, facts: false},
		{name: "an upstream model of invalid UTF-8", o: Other{UpstreamModel: "m\xff"}, facts: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row := store.UsageLog{Type: store.LogConsume, UserID: 1, TokenID: 2, ChannelID: 3, Model: "m", Quota: 7}
			SetOther(&row, &tc.o, tc.detail)
			read := row
			read.Facts = store.OtherFacts{}
			if got := row.Facts.Known(); got != tc.facts {
				t.Errorf("the row carries facts = %v, want %v", got, tc.facts)
			}
			k1, s1, ck1, cs1, ok1 := store.Rollups(row)
			k2, s2, ck2, cs2, ok2 := store.Rollups(read)
			if k1 != k2 || s1 != s2 || ck1 != ck2 || cs1 != cs2 || ok1 != ok2 {
				t.Errorf("with facts: %v %v %v %v %v\nother read: %v %v %v %v %v", k1, s1, ck1, cs1, ok1, k2, s2, ck2, cs2, ok2)
			}
		})
	}
}

// BenchmarkRollupsOfAChatRow is what the billing writer does for each
// usage row it folds into the rollups, for a chat call's row as the relay
// writes it: with the facts SetOther hands over, and with other read back.
func BenchmarkRollupsOfAChatRow(b *testing.B) {
	row := store.UsageLog{Type: store.LogConsume, UserID: 1, TokenID: 2, ChannelID: 3, Model: "bench-model",
		PromptTokens: 12, CompletionTokens: 20, Quota: 15}
	SetOther(&row, &Other{Endpoint: "/v1/chat/completions", Surface: "openai", UpstreamModel: "bench-model", GroupRatio: 1,
		Attempts: []Attempt{{ChannelID: 3, Status: 200, LatencyMS: 2}}, UpstreamCostUSD: "0.0000138", PriceVersion: 1, Strategy: "weighted"}, nil)
	read := row
	read.Facts = store.OtherFacts{}
	for _, bc := range []struct {
		name string
		row  store.UsageLog
	}{{"facts", row}, {"other read", read}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				store.Rollups(bc.row)
			}
		})
	}
}
