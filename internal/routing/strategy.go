package routing

import (
	"math/rand/v2"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Strategies choose among the healthy channels of the highest priority
// that serve a model (CONTRACT §14). Weighted is the default.
const (
	StrategyWeighted  = "weighted"
	StrategyLeastBusy = "least_busy"
	StrategyLatency   = "latency"
	StrategyCost      = "cost"
)

// Strategies are the strategy names a model entry may take.
var Strategies = []string{StrategyWeighted, StrategyLeastBusy, StrategyLatency, StrategyCost}

// exploreShare is the share of latency-routed calls that go to another
// channel than the fastest first, so a channel that recovered (or was never
// measured under load) is noticed.
const exploreShare = 0.05

// PlanOptions is one call's routing question.
type PlanOptions struct {
	Group, Model string
	// Max is how many channels the plan holds at most.
	Max int
	// Filter, when given, drops channels that cannot serve this kind of
	// call.
	Filter func(*Channel) bool
	// Strategy orders each priority tier; empty is weighted.
	Strategy string
	// Cost is the upstream cost of the call on a channel, for the cost
	// strategy (any unit, lower is cheaper); nil ranks every channel equal.
	Cost func(*Channel) float64
}

// PlanWith is Plan under a strategy: the highest priority tier first, each
// tier ordered by the strategy, channels without a usable key left out.
func (t *Table) PlanWith(h *Health, o PlanOptions) []*Channel {
	tiers := t.index[o.Group][o.Model]
	plan := make([]*Channel, 0, o.Max)
	var pool []*Channel
	for _, tr := range tiers {
		pool = pool[:0]
		for _, c := range tr.channels {
			if !c.Routable(h) || (o.Filter != nil && !o.Filter(c)) {
				continue
			}
			pool = append(pool, c)
		}
		switch o.Strategy {
		case StrategyLeastBusy:
			plan = orderBy(plan, pool, o.Max, false, func(c *Channel) float64 { return float64(c.InFlight()) })
		case StrategyLatency:
			plan = orderBy(plan, pool, o.Max, true, func(c *Channel) float64 { return float64(c.FirstByte()) })
		case StrategyCost:
			cost := o.Cost
			if cost == nil {
				cost = func(*Channel) float64 { return 0 }
			}
			plan = orderBy(plan, pool, o.Max, false, cost)
		default:
			for len(pool) > 0 && len(plan) < o.Max {
				i := pickWeighted(pool)
				plan = append(plan, pool[i])
				pool = append(pool[:i], pool[i+1:]...)
			}
		}
		if len(plan) >= o.Max {
			break
		}
	}
	return plan
}

// orderBy appends pool to plan lowest score first, up to max. Channels
// with equal scores are drawn by weight, so an idle pool (every count 0)
// or equal prices split as weighted routing would. With explore, about one
// call in twenty starts with a channel other than the best, drawn by
// weight, and the rest follow in order.
func orderBy(plan, pool []*Channel, max int, explore bool, score func(*Channel) float64) []*Channel {
	if len(pool) == 0 {
		return plan
	}
	if explore && len(pool) > 1 && rand.Float64() < exploreShare {
		best := bestIndex(pool, score)
		pool[best], pool[len(pool)-1] = pool[len(pool)-1], pool[best]
		i := pickWeighted(pool[:len(pool)-1])
		plan = append(plan, pool[i])
		pool = append(pool[:i], pool[i+1:]...)
	}
	for len(pool) > 0 && len(plan) < max {
		i := bestIndex(pool, score)
		plan = append(plan, pool[i])
		pool = append(pool[:i], pool[i+1:]...)
	}
	return plan
}

// bestIndex is the index of the lowest score, ties drawn by weight. Scores
// are read once per channel, since counters move while the plan is made.
func bestIndex(pool []*Channel, score func(*Channel) float64) int {
	best, bestScore, ties, tieWeight := 0, score(pool[0]), 1, max(pool[0].Weight, 0)
	for i := 1; i < len(pool); i++ {
		s := score(pool[i])
		switch {
		case s < bestScore:
			best, bestScore, ties, tieWeight = i, s, 1, max(pool[i].Weight, 0)
		case s == bestScore:
			ties++
			// Weighted reservoir draw among the ties seen so far.
			w := max(pool[i].Weight, 0)
			tieWeight += w
			if tieWeight > 0 && w > 0 && rand.IntN(tieWeight) < w {
				best = i
			} else if tieWeight == 0 && rand.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return best
}

// OptionsFor is the routing question for a call of o.Model under its
// model entry list (nil: none): the entry's strategy, and for the cost
// strategy the upstream cost on each channel. Every sender plans with it,
// live calls, task submits and provider batches alike.
func OptionsFor(o PlanOptions, list *store.ModelPrice) PlanOptions {
	o.Strategy = StrategyOf(list)
	if o.Strategy == StrategyCost && list != nil {
		o.Cost = UpstreamRate(o.Model, list)
	}
	return o
}

// UpstreamRate ranks channels for the cost strategy by what a call of
// model costs the operator there (CONTRACT §13 "What a call costs us"):
// the channel's own price for the model (under the gateway's name, then
// the upstream's), else the list price times the channel's discount, else
// the list price. The rank is input plus output dollars per million
// tokens, a blend that orders channels as a typical call's cost does
// without pricing a call per channel.
func UpstreamRate(model string, list *store.ModelPrice) func(*Channel) float64 {
	listRate := list.InputPerMTok + list.OutputPerMTok
	return func(ch *Channel) float64 {
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
