package store

import (
	"testing"
	"time"
)

// benchOther is the other object of a regular chat call's usage row as
// the relay writes it.
var benchOther = []byte(`{"endpoint":"/v1/chat/completions","surface":"openai","stream":true,"upstream_model":"bench-model",` +
	`"group_ratio":1,"attempts":[{"channel_id":1,"channel":"bench-upstream","key_index":0,"status":200,"ms":3}],` +
	`"upstream_cost_usd":"0.0000108","price_version":4,"affinity":"hit","strategy":"priority","request_id":"3f1c9a4e-8a8e-4c55-9a52-1f0c8e2b7d11"}`)

// BenchmarkRollupOf is what the billing writer pays per usage row to find
// its hourly bucket: reading the row's other for the cache-read tokens,
// the upstream cost and the adjustment mark.
func BenchmarkRollupOf(b *testing.B) {
	l := UsageLog{CreatedAt: time.Date(2026, 12, 7, 5, 30, 0, 0, time.UTC), UserID: 1, TokenID: 2, ChannelID: 3,
		Model: "bench-model", Type: LogConsume, PromptTokens: 12, CompletionTokens: 18, Quota: 9, Other: benchOther}
	b.ReportAllocs()
	for b.Loop() {
		_, s := RollupOf(l)
		if s.UpstreamCostPico != 10_800_000 {
			b.Fatalf("cost %d pico", s.UpstreamCostPico)
		}
	}
}
