package relay

import (
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// upstreamRate ranks channels for the cost strategy by what a call of
// model costs the operator there, as admission.UpstreamCost prices it
// (CONTRACT §13 "What a call costs us"): the channel's own price for the
// model (under the gateway's name, then the upstream's), else the list
// price times the channel's discount, else the list price. The rank is
// input plus output dollars per million tokens, a blend that orders
// channels as a typical call's cost does without pricing a call per
// channel.
func upstreamRate(model string, list *store.ModelPrice) func(*routing.Channel) float64 {
	listRate := list.InputPerMTok + list.OutputPerMTok
	return func(ch *routing.Channel) float64 {
		cost := ch.Cost
		if cost == nil {
			return listRate
		}
		if own, ok := cost.Prices[model]; ok {
			return own.InputPerMTok + own.OutputPerMTok
		}
		if own, ok := cost.Prices[ch.MapModel(model)]; ok {
			return own.InputPerMTok + own.OutputPerMTok
		}
		if cost.Discount != nil {
			return listRate * *cost.Discount
		}
		return listRate
	}
}
