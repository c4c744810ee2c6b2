package billing

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestQuotaFollowsTheContractFormula(t *testing.T) {
	mini := NewPrice(store.ModelPrice{Name: "gpt-4o-mini", InputPerMTok: 0.15, OutputPerMTok: 0.60})
	cases := []struct {
		name  string
		price *Price
		usage ir.Usage
		ratio float64
		want  int64
	}{
		// 1000×0.15×0.5 + 500×0.6×0.5 = 75 + 150
		{"input and output", mini, ir.Usage{InputTokens: 1000, OutputTokens: 500}, 1, 225},
		{"group ratio halves", mini, ir.Usage{InputTokens: 1000, OutputTokens: 500}, 0.5, 113}, // 112.5 rounds up
		{"one token rounds", mini, ir.Usage{InputTokens: 1}, 1, 0},                             // 0.075
		{"seven tokens round half up", mini, ir.Usage{InputTokens: 7, OutputTokens: 1}, 1, 1},  // 0.525+0.3=0.825
		{"exact half rounds up", NewPrice(store.ModelPrice{InputPerMTok: 1}), ir.Usage{InputTokens: 1}, 1, 1},
		{"free model", NewPrice(store.ModelPrice{Free: true, InputPerMTok: 5}), ir.Usage{InputTokens: 1000}, 1, 0},
		{"cache read at its own price", NewPrice(store.ModelPrice{InputPerMTok: 2, CacheReadPerMTok: 1}),
			ir.Usage{InputTokens: 1000, CacheReadTokens: 400}, 1, 800}, // (600×2 + 400×1)/1e6 $ × 5e5
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Quota(tc.price.TokenCost(tc.usage), 500000, tc.ratio)
			if got != tc.want {
				t.Fatalf("quota = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPerCallCostScalesWithCount(t *testing.T) {
	p := NewPrice(store.ModelPrice{PerCall: 0.04})
	if got := Quota(p.CallCost(3), 500000, 1); got != 60000 {
		t.Fatalf("got %d", got)
	}
}
