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
			got, err := Quota(tc.price.TokenCost(tc.usage), 500000, tc.ratio)
			if err != nil || got != tc.want {
				t.Fatalf("quota = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPerCallCostScalesWithCount(t *testing.T) {
	p := NewPrice(store.ModelPrice{PerCall: 0.04})
	if got, err := Quota(p.CallCost(3), 500000, 1); err != nil || got != 60000 {
		t.Fatalf("got %d", got)
	}
}

func TestChargeRoundsOnceOverTokensAndPerCallParts(t *testing.T) {
	s := NewService(nil, nil, 500000)
	// 0.4 units of tokens + 0.4 units per call: rounding each part would
	// charge 0, rounding the sum once charges 1.
	p := NewPrice(store.ModelPrice{InputPerMTok: 0.8, PerCall: 0.0000008})
	got, err := s.Charge(p, ir.Usage{InputTokens: 1}, p.CallCost(1), "default")
	if err != nil || got != 1 {
		t.Fatalf("charge = %d, %v; want 1", got, err)
	}
}

func TestChargeThatWouldOverflowIsAnErrorNotAWrap(t *testing.T) {
	s := NewService(nil, nil, 500000)
	p := NewPrice(store.ModelPrice{OutputPerMTok: 1e6})
	cases := []struct {
		name   string
		tokens int
	}{
		{"past the per-request bound", 1 << 40},
		{"past int64 after pricing", 1<<62 + 12345},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Charge(p, ir.Usage{OutputTokens: tc.tokens}, nil, "default")
			if err != ErrChargeTooLarge {
				t.Fatalf("charge = %d, %v; want ErrChargeTooLarge", got, err)
			}
		})
	}
}
