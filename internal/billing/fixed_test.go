package billing

import (
	"math/rand/v2"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// bigCharge is Charge by math/big only: the definition the fast path must
// agree with.
func bigCharge(s *Service, p *Price, u ir.Usage, group string) (int64, error) {
	return Quota(p.TokenCost(u), s.quotaPerUSD, s.Ratio(group))
}

func serviceWithGroups(quotaPerUSD int64, ratios map[string]float64) *Service {
	s := NewService(nil, nil, quotaPerUSD)
	t := &priceTable{prices: map[string][]*Price{}, ratios: ratios, millionths: map[string]uint64{}}
	for g, r := range ratios {
		if m, ok := ratioMillionths(r); ok {
			t.millionths[g] = m
		}
	}
	s.table.Store(t)
	return s
}

func TestIntegerChargesEqualTheExactDefinition(t *testing.T) {
	rates := []float64{0, 0.02, 0.075, 0.15, 0.6, 1.25, 2.5, 3, 15, 75, 0.000001, 0.0000003, 1234.567891, 1e-9}
	ratios := map[string]float64{"one": 1, "half": 0.5, "vip": 0.85, "odd": 1.0000005, "third": 0.333333333, "zero": 0, "big": 1000}
	groups := []string{"one", "half", "vip", "odd", "third", "zero", "big", "unknown"}
	// The race pass (-short) checks the first tenth of the cases the plain
	// pass checks (each quota unit draws from its own seed, so the shorter
	// run is a prefix of the longer): one goroutine doing arithmetic gives
	// the detector nothing to find, and the instrumented math/big took most
	// of a minute of the pass (docs/PERFORMANCE.md, "CI time", Round 4).
	draws := 20_000
	if testing.Short() {
		draws = 2_000
	}
	for _, qpu := range []int64{500_000, 1, 1_000_000_000} {
		rng := rand.New(rand.NewPCG(1, uint64(qpu)))
		s := serviceWithGroups(qpu, ratios)
		for i := 0; i < draws; i++ {
			pick := func() float64 { return rates[rng.IntN(len(rates))] }
			mp := store.ModelPrice{InputPerMTok: pick(), OutputPerMTok: pick(), CacheReadPerMTok: pick(), CacheWritePerMTok: pick(), ReasoningPerMTok: pick()}
			if rng.IntN(3) == 0 {
				mp.Tiers = []store.PriceTier{{AboveInputTokens: int64(rng.IntN(5000)), InputPerMTok: pick(), OutputPerMTok: pick()}}
			}
			p := NewPrice(mp)
			tokens := func() int {
				switch rng.IntN(4) {
				case 0:
					return 0
				case 1:
					return rng.IntN(100)
				case 2:
					return rng.IntN(1 << 20)
				}
				return rng.IntN(1 << 40)
			}
			u := ir.Usage{InputTokens: tokens(), OutputTokens: tokens(), CacheReadTokens: tokens(), CacheWriteTokens: tokens(), ReasoningTokens: tokens()}
			g := groups[rng.IntN(len(groups))]
			got, gotErr := s.Charge(p, u, nil, g)
			want, wantErr := bigCharge(s, p, u, g)
			if got != want || (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("price %+v usage %+v group %s qpu %d: fast %d %v, exact %d %v", mp, u, g, qpu, got, gotErr, want, wantErr)
			}
		}
	}
}

func TestFixedQuotaRoundsHalfUp(t *testing.T) {
	cases := []struct {
		pico, millionths uint64
		qpu              int64
		want             int64
	}{
		{pico: 1_000_000, qpu: 500_000, millionths: 1_000_000, want: 1}, // 1e-6 USD × 5e5 = 0.5 → 1
		{pico: 999_999, qpu: 500_000, millionths: 1_000_000, want: 0},   // 0.4999995 → 0
		{pico: 3_000_000, qpu: 500_000, millionths: 500_000, want: 1},   // 0.75 → 1
		{pico: 2_000_000_000_000, qpu: 500_000, millionths: 1_000_000, want: 1_000_000},
	}
	for _, tc := range cases {
		got, ok := fixedQuota(tc.pico, tc.qpu, tc.millionths)
		if !ok || got != tc.want {
			t.Errorf("fixedQuota(%d, %d, %d) = %d, %v; want %d", tc.pico, tc.qpu, tc.millionths, got, ok, tc.want)
		}
	}
}

func BenchmarkChargeChatCall(b *testing.B) {
	s := serviceWithGroups(500_000, map[string]float64{"default": 1})
	p := NewPrice(store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.6})
	u := ir.Usage{InputTokens: 1234, OutputTokens: 567}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Charge(p, u, nil, "default"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChargeChatCallExactPath(b *testing.B) {
	s := serviceWithGroups(500_000, map[string]float64{"default": 1})
	p := NewPrice(store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.6})
	u := ir.Usage{InputTokens: 1234, OutputTokens: 567}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bigCharge(s, p, u, "default"); err != nil {
			b.Fatal(err)
		}
	}
}
