package billing

import (
	"math/rand/v2"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// At 500,000 quota units per dollar a charge is Σ tokens × rate / 2, so
// every expected figure below can be checked by hand.
const testQuotaPerUSD = 500000

// tiered has a base price, a first tier above 1,000 input tokens that
// leaves the cache write and reasoning prices to the base, and a second
// above 5,000 that leaves the output and cache prices to the base.
var tiered = store.ModelPrice{Name: "tiered",
	InputPerMTok: 2, OutputPerMTok: 8, ReasoningPerMTok: 16, CacheReadPerMTok: 0.5, CacheWritePerMTok: 2.5,
	Tiers: []store.PriceTier{
		{AboveInputTokens: 1000, InputPerMTok: 4, OutputPerMTok: 12, CacheReadPerMTok: 1},
		{AboveInputTokens: 5000, InputPerMTok: 6, ReasoningPerMTok: 20},
	}}

func TestTokenCostSplitsReasoningAndPicksTiers(t *testing.T) {
	unsorted := tiered
	unsorted.Tiers = []store.PriceTier{tiered.Tiers[1], tiered.Tiers[0]}
	plain := store.ModelPrice{InputPerMTok: 2, OutputPerMTok: 8}
	// Cache tokens with no cache price of their own cost the input rate of
	// the tier, not of the base.
	noCachePrice := store.ModelPrice{InputPerMTok: 1, OutputPerMTok: 2, Tiers: []store.PriceTier{{AboveInputTokens: 100, InputPerMTok: 3}}}
	cases := []struct {
		name  string
		price store.ModelPrice
		usage ir.Usage
		want  int64
	}{
		// (100×2 + 30×8 + 20×16) / 2
		{"reasoning at its own price", tiered, ir.Usage{InputTokens: 100, OutputTokens: 50, ReasoningTokens: 20}, 380},
		// (100×2 + 50×16) / 2: all output was reasoning
		{"all output is reasoning", tiered, ir.Usage{InputTokens: 100, OutputTokens: 50, ReasoningTokens: 50}, 500},
		// (100×2 + 10×16) / 2: reasoning past the output is capped at it
		{"reasoning above output is capped", tiered, ir.Usage{InputTokens: 100, OutputTokens: 10, ReasoningTokens: 50}, 180},
		// (100×2 + 50×8) / 2: no reasoning price, all output at the output price
		{"no reasoning price charges output as before", plain, ir.Usage{InputTokens: 100, OutputTokens: 50, ReasoningTokens: 20}, 300},
		// (1000×2 + 10×8) / 2
		{"exactly at the first threshold is base", tiered, ir.Usage{InputTokens: 1000, OutputTokens: 10}, 1040},
		// (1001×4 + 10×12) / 2
		{"one past the first threshold is the tier", tiered, ir.Usage{InputTokens: 1001, OutputTokens: 10}, 2062},
		// (1001×4 + 6×12 + 4×16) / 2: the tier leaves reasoning to the base
		{"tier without reasoning price uses the base's", tiered, ir.Usage{InputTokens: 1001, OutputTokens: 10, ReasoningTokens: 4}, 2070},
		// (1200×4 + 500×1 + 300×2.5) / 2: tier cache read, base cache write
		{"cache tokens under a tier", tiered, ir.Usage{InputTokens: 2000, CacheReadTokens: 500, CacheWriteTokens: 300}, 3025},
		// (5000×4 + 10×12) / 2
		{"exactly at the second threshold is the first tier", tiered, ir.Usage{InputTokens: 5000, OutputTokens: 10}, 10060},
		// (5001×6 + 5×8 + 5×20) / 2: output from the base, reasoning from the tier
		{"one past the second threshold is the second tier", tiered, ir.Usage{InputTokens: 5001, OutputTokens: 10, ReasoningTokens: 5}, 15073},
		// (5000×6 + 1000×0.5) / 2: the base's cache read, not the first tier's
		{"omitted tier price falls back to the base not the tier below", tiered, ir.Usage{InputTokens: 6000, CacheReadTokens: 1000}, 15250},
		{"tiers stored out of order", unsorted, ir.Usage{InputTokens: 5001, OutputTokens: 10, ReasoningTokens: 5}, 15073},
		// (100×3 + 50×3 + 50×3) / 2
		{"cache without own price at the tier's input", noCachePrice, ir.Usage{InputTokens: 200, CacheReadTokens: 50, CacheWriteTokens: 50}, 300},
		// (100×1 + 1×2) / 2 = 51
		{"below the tier at base input", noCachePrice, ir.Usage{InputTokens: 100, OutputTokens: 1}, 51},
		// (1×2 + 1×8) / 2
		{"one token each", tiered, ir.Usage{InputTokens: 1, OutputTokens: 1}, 5},
		// (3×2 + 1×16) / 2
		{"reasoning only output", tiered, ir.Usage{InputTokens: 3, OutputTokens: 1, ReasoningTokens: 1}, 11},
		// 1×2 / 2: reasoning reported without output tokens adds nothing
		{"reasoning without output costs nothing more", tiered, ir.Usage{InputTokens: 1, ReasoningTokens: 7}, 1},
		// (1000×4 + 1×1) / 2 = 2000.5, rounded half up once
		{"half a unit under a tier rounds up", tiered, ir.Usage{InputTokens: 1001, CacheReadTokens: 1}, 2001},
		{"free ignores tiers", store.ModelPrice{Free: true, Tiers: tiered.Tiers, ReasoningPerMTok: 3}, ir.Usage{InputTokens: 9999, OutputTokens: 9, ReasoningTokens: 9}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Quota(NewPrice(tc.price).TokenCost(tc.usage), testQuotaPerUSD, 1)
			if err != nil || got != tc.want {
				t.Fatalf("quota = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestTieredPriceDecimalRatesAreExact is the worked example of
// docs/PRICING.md: Gemini-style prices, 1.25 and 2.5 input and 10 and 15
// output per million, with a dearer cache read above 200k input tokens.
func TestTieredPriceDecimalRatesAreExact(t *testing.T) {
	p := NewPrice(store.ModelPrice{InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerMTok: 0.31,
		Tiers: []store.PriceTier{{AboveInputTokens: 200_000, InputPerMTok: 2.5, OutputPerMTok: 15, CacheReadPerMTok: 0.625}}})
	cases := []struct {
		usage ir.Usage
		want  int64
	}{
		{ir.Usage{InputTokens: 200_000, OutputTokens: 1000}, 130000},                           // $0.26
		{ir.Usage{InputTokens: 200_001, OutputTokens: 1000}, 257501},                           // $0.5150025 = 257,501.25 units
		{ir.Usage{InputTokens: 300_000, CacheReadTokens: 100_000, OutputTokens: 2000}, 296250}, // $0.5925
	}
	for _, tc := range cases {
		got, err := Quota(p.TokenCost(tc.usage), testQuotaPerUSD, 1)
		if err != nil || got != tc.want {
			t.Errorf("%+v: quota = %d, %v; want %d", tc.usage, got, err, tc.want)
		}
	}
}

func TestReserveUsageCountsOutputAtTheDearerRate(t *testing.T) {
	cheapReasoning := store.ModelPrice{InputPerMTok: 2, OutputPerMTok: 8, ReasoningPerMTok: 4}
	cases := []struct {
		name     string
		price    store.ModelPrice
		estimate ir.Usage
		want     int64
	}{
		// (100×2 + 1000×16) / 2: reasoning dearer than output
		{"reasoning dearer", tiered, ir.Usage{InputTokens: 100, OutputTokens: 1000}, 8100},
		// (100×2 + 1000×8) / 2: reasoning cheaper, output is the bound
		{"reasoning cheaper", cheapReasoning, ir.Usage{InputTokens: 100, OutputTokens: 1000}, 4100},
		// (1001×4 + 1000×16) / 2: the tier's output 12 is below the base reasoning 16
		{"tier reached by the estimate", tiered, ir.Usage{InputTokens: 1001, OutputTokens: 1000}, 10002},
		// (1000×2 + 1000×16) / 2
		{"threshold not exceeded", tiered, ir.Usage{InputTokens: 1000, OutputTokens: 1000}, 9000},
		// (6000×6 + 1000×20) / 2
		{"highest tier", tiered, ir.Usage{InputTokens: 6000, OutputTokens: 1000}, 28000},
		// an estimate's own reasoning figure is ignored: (100×2 + 10×8) / 2
		{"estimate reasoning ignored when cheaper", cheapReasoning, ir.Usage{InputTokens: 100, OutputTokens: 10, ReasoningTokens: 10}, 140},
		{"no reasoning price", store.ModelPrice{InputPerMTok: 2, OutputPerMTok: 8}, ir.Usage{InputTokens: 100, OutputTokens: 1000}, 4100},
		// reasoning priced but output free: (100×2 + 1000×16)/2
		{"only reasoning priced", store.ModelPrice{InputPerMTok: 2, ReasoningPerMTok: 16}, ir.Usage{InputTokens: 100, OutputTokens: 1000}, 8100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPrice(tc.price)
			got, err := Quota(p.TokenCost(p.ReserveUsage(tc.estimate)), testQuotaPerUSD, 1)
			if err != nil || got != tc.want {
				t.Fatalf("quota = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestReservationCoversEveryReasoningSplit checks the bound against bills
// whose input is the estimated one and whose output is at most the
// estimated output, however much of it is reasoning.
func TestReservationCoversEveryReasoningSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 10))
	prices := []store.ModelPrice{tiered, {InputPerMTok: 2, OutputPerMTok: 8, ReasoningPerMTok: 4,
		Tiers: []store.PriceTier{{AboveInputTokens: 500, ReasoningPerMTok: 30}, {AboveInputTokens: 3000, OutputPerMTok: 40}}}}
	for _, sp := range prices {
		p := NewPrice(sp)
		for range 2000 {
			in, out := rng.IntN(8000), rng.IntN(5000)
			hold, err := Quota(p.TokenCost(p.ReserveUsage(ir.Usage{InputTokens: in, OutputTokens: out})), testQuotaPerUSD, 1)
			if err != nil {
				t.Fatal(err)
			}
			realOut := rng.IntN(out + 1)
			bill := ir.Usage{InputTokens: in, OutputTokens: realOut, ReasoningTokens: rng.IntN(realOut + 2)}
			charge, err := Quota(p.TokenCost(bill), testQuotaPerUSD, 1)
			if err != nil {
				t.Fatal(err)
			}
			if charge > hold {
				t.Fatalf("%+v: charge %d above hold %d for estimate in=%d out=%d", bill, charge, hold, in, out)
			}
		}
	}
}

func TestHasTokenPriceSeesTiers(t *testing.T) {
	if NewPrice(store.ModelPrice{PerCall: 1}).HasTokenPrice() {
		t.Error("per-call price reported a token price")
	}
	if !NewPrice(store.ModelPrice{PerCall: 1, Tiers: []store.PriceTier{{AboveInputTokens: 10, InputPerMTok: 1}}}).HasTokenPrice() {
		t.Error("tier input price not seen")
	}
}
