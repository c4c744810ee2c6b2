package billing

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestBatchPricePricesLinesAtTheBatchRates(t *testing.T) {
	s := NewService(nil, nil, 500000)
	u := ir.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	tests := []struct {
		name     string
		price    store.ModelPrice
		provider bool
		want     int64
	}{
		{"gateway-run lines pay the live price", store.ModelPrice{InputPerMTok: 1, OutputPerMTok: 3}, false, 2_000_000},
		{"provider batches pay half the live price", store.ModelPrice{InputPerMTok: 1, OutputPerMTok: 3}, true, 1_000_000},
		{"a set batch price wins on either side", store.ModelPrice{InputPerMTok: 1, OutputPerMTok: 3, BatchInputPerMTok: 0.2, BatchOutputPerMTok: 0.4}, false, 300_000},
		{"a set batch input price with half the live output", store.ModelPrice{InputPerMTok: 1, OutputPerMTok: 3, BatchInputPerMTok: 0.2}, true, 850_000},
		{"a per-call part is halved for provider batches", store.ModelPrice{PerCall: 0.02}, true, 5_000},
		{"a free model stays free", store.ModelPrice{Free: true, InputPerMTok: 1}, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.price.Name = "m"
			p := BatchPrice(NewPrice(tc.price), tc.provider)
			got, err := s.Charge(p, u, p.CallCost(1), "")
			if err != nil || got != tc.want {
				t.Fatalf("charge = %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}
