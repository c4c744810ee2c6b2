package billing

import (
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestThePriceInEffectIsChosenByTheMomentOfAdmission(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rows := []store.ModelPrice{{Name: "m", Fallbacks: []string{"f"}}, {Name: "old"}, {Name: "later"}}
	versions := []store.PriceVersion{
		// Out of order on purpose: the snapshot orders by effective time.
		{Model: "m", Version: 3, EffectiveFrom: t0.Add(time.Hour), InputPerMTok: 3},
		{Model: "m", Version: 1, EffectiveFrom: t0, InputPerMTok: 1},
		{Model: "m", Version: 2, EffectiveFrom: t0.Add(time.Minute), InputPerMTok: 2},
		// Two versions taking effect together: the higher number wins.
		{Model: "m", Version: 4, EffectiveFrom: t0.Add(2 * time.Hour), InputPerMTok: 4},
		{Model: "m", Version: 5, EffectiveFrom: t0.Add(2 * time.Hour), InputPerMTok: 5},
		{Model: "later", Version: 1, EffectiveFrom: t0.Add(time.Hour), InputPerMTok: 9},
		{Model: "deleted", Version: 1, EffectiveFrom: t0, InputPerMTok: 7},
	}
	s := NewService(nil, nil, 500000)
	s.table.Store(&priceTable{prices: priceLines(rows, versions), ratios: map[string]float64{}})
	cases := []struct {
		name    string
		model   string
		at      time.Time
		version int64 // -1: no price
	}{
		{"before the first version the model is not priced", "m", t0.Add(-time.Second), -1},
		{"at the first version's time", "m", t0, 1},
		{"between two versions", "m", t0.Add(30 * time.Minute), 2},
		{"a second before a switch", "m", t0.Add(time.Hour - time.Second), 2},
		{"at the switch", "m", t0.Add(time.Hour), 3},
		{"two versions at once: the later written", "m", t0.Add(3 * time.Hour), 5},
		{"a price stored before versions is always in effect", "old", t0.Add(-24 * time.Hour), 0},
		{"a model priced only from later", "later", t0, -1},
		{"a model priced only from later, then", "later", t0.Add(time.Hour), 1},
		{"a deleted model's versions price nothing", "deleted", t0.Add(time.Hour), -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.PriceAt(tc.model, tc.at)
			if tc.version < 0 {
				if err == nil {
					t.Fatalf("priced at version %d, want model_price_error", p.Version)
				}
				return
			}
			if err != nil || p.Version != tc.version {
				t.Fatalf("PriceAt = %+v, %v; want version %d", p, err, tc.version)
			}
			if tc.model == "m" && (p.Raw.InputPerMTok != float64(tc.version) || len(p.Raw.Fallbacks) != 1) {
				t.Fatalf("version %d carries input %v fallbacks %v", p.Version, p.Raw.InputPerMTok, p.Raw.Fallbacks)
			}
		})
	}
}
