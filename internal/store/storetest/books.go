package storetest

import (
	"reflect"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// booksTests cover what the operator's books read: a channel's upstream
// cost, the ledger and the usage rows over a window.
var booksTests = []namedTest{
	{"a channel's cost round-trips and can be removed", func(t *testing.T, s store.Store) {
		c := sampleChannel("costly")
		d := 0.8
		c.Cost = &store.ChannelCost{Discount: &d, Prices: map[string]store.CostPrice{
			"gpt-a": {InputPerMTok: 1.5, OutputPerMTok: 6, Tiers: []store.PriceTier{{AboveInputTokens: 1000, InputPerMTok: 3}}}}}
		must(t, s.Channels().Create(ctx(t), c), "create")
		got, err := s.Channels().Get(ctx(t), c.ID)
		must(t, err, "get")
		if !reflect.DeepEqual(got.Cost, c.Cost) {
			t.Fatalf("cost = %+v, want %+v", got.Cost, c.Cost)
		}
		got.Cost = nil
		must(t, s.Channels().Update(ctx(t), got), "update")
		all, err := s.Channels().All(ctx(t))
		must(t, err, "all")
		if len(all) != 1 || all[0].Cost != nil {
			t.Fatalf("cost after removal = %+v", all[0].Cost)
		}
	}},
}
