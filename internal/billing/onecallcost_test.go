package billing

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestOneCallCostChargesWhatCallCostOfOneCharges(t *testing.T) {
	s := NewService(nil, nil, 500000)
	cases := []struct {
		name    string
		price   store.ModelPrice
		wantNil bool
	}{
		{"tokens only: no per-call part", store.ModelPrice{InputPerMTok: 0.8, OutputPerMTok: 2}, true},
		{"free model", store.ModelPrice{Free: true, PerCall: 0.04}, true},
		{"per call only", store.ModelPrice{PerCall: 0.04}, false},
		{"tokens and a per-call part that rounds with them", store.ModelPrice{InputPerMTok: 0.8, PerCall: 0.0000008}, false},
	}
	u := ir.Usage{InputTokens: 1, OutputTokens: 3}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPrice(tc.price)
			one := p.OneCallCost()
			if (one == nil) != tc.wantNil {
				t.Fatalf("OneCallCost() = %v, want nil %v", one, tc.wantNil)
			}
			if one != nil && one.Cmp(p.CallCost(1)) != 0 {
				t.Fatalf("OneCallCost() = %s, CallCost(1) = %s", one.RatString(), p.CallCost(1).RatString())
			}
			want, werr := s.Charge(p, u, p.CallCost(1), "default")
			got, gerr := s.Charge(p, u, one, "default")
			if got != want || (gerr == nil) != (werr == nil) {
				t.Fatalf("charge %d (%v) with OneCallCost, %d (%v) with CallCost(1)", got, gerr, want, werr)
			}
		})
	}
}
