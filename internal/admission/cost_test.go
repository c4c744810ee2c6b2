package admission

import (
	"math/big"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestUpstreamCostPricesTheSameUsageAtTheChannelsCost(t *testing.T) {
	list := billing.NewPrice(store.ModelPrice{Name: "gpt-x", InputPerMTok: 2, OutputPerMTok: 8, CacheReadPerMTok: 0.5, PerCall: 0.01})
	free := billing.NewPrice(store.ModelPrice{Name: "local", Free: true})
	discount := func(f float64) *float64 { return &f }
	u := ir.Usage{InputTokens: 1000, OutputTokens: 500, CacheReadTokens: 200}
	// list: 800×2 + 200×0.5 + 500×8 = 5700 per million = 0.0057
	tests := []struct {
		name  string
		price *billing.Price
		cost  *store.ChannelCost
		model string
		up    string
		usd   *big.Rat
		want  string
	}{
		{"no cost is the list price", list, nil, "gpt-x", "", nil, "0.0057"},
		{"a discount is a fraction of the list price", list, &store.ChannelCost{Discount: discount(0.8)}, "gpt-x", "", nil, "0.00456"},
		{"the non-token parts are discounted too", list, &store.ChannelCost{Discount: discount(0.5)}, "gpt-x", "", big.NewRat(1, 100), "0.00785"},
		{"own prices replace the list's", list, &store.ChannelCost{Discount: discount(0.1),
			Prices: map[string]store.CostPrice{"gpt-x": {InputPerMTok: 1, OutputPerMTok: 4}}}, "gpt-x", "", nil, "0.003"},
		{"own prices found under the upstream name", list, &store.ChannelCost{
			Prices: map[string]store.CostPrice{"gpt-x-2025": {InputPerMTok: 1, OutputPerMTok: 4}}}, "gpt-x", "gpt-x-2025", nil, "0.003"},
		{"own per_call scales the per-call parts", list, &store.ChannelCost{
			Prices: map[string]store.CostPrice{"gpt-x": {PerCall: 0.005}}}, "gpt-x", "", big.NewRat(3, 100), "0.015"},
		{"a model another channel price names pays list minus discount", list, &store.ChannelCost{Discount: discount(0.5),
			Prices: map[string]store.CostPrice{"other": {InputPerMTok: 1}}}, "gpt-x", "", nil, "0.00285"},
		{"a free model costs nothing at list", free, &store.ChannelCost{Discount: discount(0.5)}, "local", "", nil, "0"},
		{"a free model with own prices costs those", free, &store.ChannelCost{
			Prices: map[string]store.CostPrice{"local": {InputPerMTok: 1}}}, "local", "", nil, "0.001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := USD(UpstreamCost(tt.price, tt.cost, tt.model, tt.up, u, tt.usd))
			if got != tt.want {
				t.Fatalf("upstream cost = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestUSDWritesPlainDecimals(t *testing.T) {
	tests := []struct {
		in   *big.Rat
		want string
	}{
		{nil, "0"}, {new(big.Rat), "0"}, {big.NewRat(3, 2), "1.5"}, {big.NewRat(12, 1), "12"},
		{big.NewRat(1, 3), "0.333333333333"}, {big.NewRat(-1, 4), "-0.25"}, {big.NewRat(1, 1_000_000_000_000_000), "0"},
	}
	for _, tt := range tests {
		if got := USD(tt.in); got != tt.want {
			t.Errorf("USD(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuotaUSDUndoesTheGroupRatio(t *testing.T) {
	if got := USD(QuotaUSD(250_000, 500_000, 0.5)); got != "1" {
		t.Fatalf("250000 units at ratio 0.5 = %s USD, want 1", got)
	}
	if got := USD(QuotaUSD(250_000, 500_000, 1)); got != "0.5" {
		t.Fatalf("250000 units at ratio 1 = %s USD, want 0.5", got)
	}
}
