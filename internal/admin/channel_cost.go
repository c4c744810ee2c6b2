package admin

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// maxDiscount bounds cost.discount: a provider that charges more than ten
// times the list price is a typo far more often than a contract.
const maxDiscount = 10

// getCost decodes a channel's cost member strictly, so a misspelt field
// (discont) is an error rather than a silent list price; null removes it.
func getCost(f fields, c *store.Channel) error {
	raw, ok := f["cost"]
	if !ok {
		return nil
	}
	if f.isNull("cost") {
		c.Cost = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var cost store.ChannelCost
	if err := dec.Decode(&cost); err != nil {
		return badField("cost", "must be {\"discount\": 0.8} or {\"prices\": {\"<model>\": {\"input_per_mtok\": …}}}: %s", jsonProblem(err))
	}
	if err := checkCost(&cost); err != nil {
		return err
	}
	c.Cost = normalCost(&cost)
	return nil
}

// jsonProblem is a decoding error without the Go type names it carries.
func jsonProblem(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return te.Field + " has the wrong type"
	}
	return err.Error()
}

// checkCost applies the price rules of the admin API to a channel's cost.
func checkCost(cost *store.ChannelCost) error {
	if d := cost.Discount; d != nil && (math.IsNaN(*d) || *d < 0 || *d > maxDiscount) {
		return badField("cost.discount", "must be between 0 and %d (the fraction of the list price the channel pays)", maxDiscount)
	}
	names := make([]string, 0, len(cost.Prices))
	for name := range cost.Prices {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "" {
			return badField("cost.prices", "must not name an empty model")
		}
		p := cost.Prices[name]
		field := "cost.prices." + name
		for _, v := range []float64{p.InputPerMTok, p.OutputPerMTok, p.CacheReadPerMTok, p.CacheWritePerMTok, p.ReasoningPerMTok, p.PerCall} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return badField(field, "prices must be finite and not negative")
			}
		}
		for _, t := range p.Tiers {
			if t.AboveInputTokens <= 0 {
				return badField(field+".tiers", "above_input_tokens must be positive")
			}
			for _, v := range []float64{t.InputPerMTok, t.OutputPerMTok, t.CacheReadPerMTok, t.CacheWritePerMTok, t.ReasoningPerMTok} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					return badField(field+".tiers", "prices must be finite and not negative")
				}
			}
		}
		slices.SortStableFunc(p.Tiers, func(a, b store.PriceTier) int {
			return int(a.AboveInputTokens - b.AboveInputTokens)
		})
	}
	return nil
}

// normalCost is nil for a cost that says nothing, so `cost: {}` and no
// cost read back the same.
func normalCost(cost *store.ChannelCost) *store.ChannelCost {
	if cost == nil || (cost.Discount == nil && len(cost.Prices) == 0) {
		return nil
	}
	if len(cost.Prices) == 0 {
		cost.Prices = nil
	}
	return cost
}
