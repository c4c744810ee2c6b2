package relay

import (
	"encoding/json"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// upstreamRate ranks channels for the cost strategy by what a call of
// model costs the gateway there (CONTRACT §13 "What a call costs us"): the
// channel's own prices for the model when it has them, else the list price
// times the channel's discount, else the list price. The rank is input
// plus output dollars per million tokens, a blend that orders channels as
// a typical call's cost does.
//
// The channel's cost is read from its settings' "cost" member and read
// defensively: a value of the wrong shape counts as none.
func upstreamRate(model string, list *store.ModelPrice) func(*routing.Channel) float64 {
	listRate := list.InputPerMTok + list.OutputPerMTok
	return func(ch *routing.Channel) float64 {
		cost, _ := ch.Settings["cost"].(map[string]any)
		if cost == nil {
			return listRate
		}
		if prices, _ := cost["prices"].(map[string]any); prices != nil {
			if p, _ := prices[model].(map[string]any); p != nil {
				in, okIn := rate(p["input_per_mtok"])
				out, okOut := rate(p["output_per_mtok"])
				if okIn || okOut {
					return in + out
				}
			}
		}
		if d, ok := rate(cost["discount"]); ok {
			return listRate * d
		}
		return listRate
	}
}

// rate reads a non-negative number from decoded JSON or YAML.
func rate(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, f >= 0
}
