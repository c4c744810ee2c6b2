package admission

import (
	"math/rand/v2"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// The pico-dollar path of a row's upstream cost writes exactly what the
// math/big path writes, for every kind of token price.
func TestUpstreamCostWithoutMathBigWritesTheSameDecimal(t *testing.T) {
	prices := []store.ModelPrice{
		{Name: "m", InputPerMTok: 0.15, OutputPerMTok: 0.6},
		{Name: "m", InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75, ReasoningPerMTok: 20},
		{Name: "m", InputPerMTok: 1.25, OutputPerMTok: 10, Tiers: []store.PriceTier{{AboveInputTokens: 200000, InputPerMTok: 2.5, OutputPerMTok: 15}}},
		{Name: "m", Free: true},
		{Name: "m", InputPerMTok: 0.000001, OutputPerMTok: 1e-7},
		{Name: "m", InputPerMTok: 1},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, mp := range prices {
		p := billing.NewPrice(mp)
		for range 500 {
			u := ir.Usage{InputTokens: rng.IntN(400000), OutputTokens: rng.IntN(100000), CacheReadTokens: rng.IntN(5000),
				CacheWriteTokens: rng.IntN(5000)}
			u.ReasoningTokens = rng.IntN(u.OutputTokens + 1)
			fast := UpstreamCostUSD(p, nil, "m", "", u, nil)
			slow := USD(UpstreamCost(p, nil, "m", "", u, nil))
			if fast != slow {
				t.Fatalf("price %d, usage %+v: %s without math/big, %s with", i, u, fast, slow)
			}
		}
	}
}
