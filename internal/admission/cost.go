package admission

import (
	"bytes"
	"math/big"
	"strconv"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// UpstreamCost is what a call cost the operator at its channel, in exact
// US dollars: the same usage and non-token parts (usd, may be nil) the
// charge was priced from, at the channel's own price for the model (looked
// up under the gateway's name, then the upstream's) or at the list price
// times the channel's discount; the group ratio never applies. A nil cost
// pays the list price.
//
// The non-token parts (per call, per image, per minute, task units) were
// priced from the list price's rates; a channel price with its own per_call
// scales them by per_call's ratio, and otherwise they stay at list.
func UpstreamCost(list *billing.Price, cost *store.ChannelCost, model, upstreamModel string, u ir.Usage, usd *big.Rat) *big.Rat {
	if cost != nil {
		if own, ok := cost.Prices[model]; ok {
			return ownCost(list, own, model, u, usd)
		}
		if own, ok := cost.Prices[upstreamModel]; ok && upstreamModel != "" {
			return ownCost(list, own, model, u, usd)
		}
	}
	c := list.Cost(u, usd)
	if cost != nil && cost.Discount != nil {
		c.Mul(c, billing.Decimal(*cost.Discount))
	}
	return c
}

func ownCost(list *billing.Price, own store.CostPrice, model string, u ir.Usage, usd *big.Rat) *big.Rat {
	c := billing.NewPrice(own.ModelPrice(model)).TokenCost(u)
	if usd == nil || usd.Sign() == 0 {
		return c
	}
	part := new(big.Rat).Set(usd)
	if own.PerCall > 0 && list.Raw.PerCall > 0 {
		part.Mul(part, billing.Decimal(own.PerCall))
		part.Quo(part, billing.Decimal(list.Raw.PerCall))
	}
	return c.Add(c, part)
}

// UpstreamCostUSD is UpstreamCost as the row's decimal string. A call on a
// channel that pays list prices, charged by tokens alone, is the common
// case on every settle: it is priced in pico-dollars without math/big.
func UpstreamCostUSD(list *billing.Price, cost *store.ChannelCost, model, upstreamModel string, u ir.Usage, usd *big.Rat) string {
	if cost == nil && (usd == nil || usd.Sign() == 0) {
		if pico, ok := list.FixedTokenCost(u); ok {
			return picoUSD(pico)
		}
	}
	return USD(UpstreamCost(list, cost, model, upstreamModel, u, usd))
}

// picoUSD writes pico-dollars as USD writes the same amount.
func picoUSD(pico uint64) string {
	const unit = 1_000_000_000_000
	b := strconv.AppendUint(make([]byte, 0, 24), pico/unit, 10)
	frac := pico % unit
	if frac == 0 {
		return string(b)
	}
	digits := strconv.AppendUint(make([]byte, 0, 12), frac, 10)
	b = append(b, '.')
	for range usdDigits - len(digits) {
		b = append(b, '0')
	}
	return string(append(b, bytes.TrimRight(digits, "0")...))
}

// usdDigits is how many decimals a dollar figure in a usage row keeps: a
// millionth of a millionth of a dollar, far below one quota unit.
const usdDigits = 12

// USD writes an exact dollar amount as the decimal string usage rows carry
// (other.upstream_cost_usd): no exponent, no trailing zeros.
func USD(r *big.Rat) string {
	if r == nil {
		return "0"
	}
	s := r.FloatString(usdDigits)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// QuotaUSD is a quota amount charged at groupRatio back in list-price
// dollars (before the group ratio), for rows that carry only a quota (a
// task's reservation and its corrections).
func QuotaUSD(quota, quotaPerUSD int64, groupRatio float64) *big.Rat {
	r := big.NewRat(quota, quotaPerUSD)
	if groupRatio > 0 && groupRatio != 1 {
		r.Quo(r, billing.Decimal(groupRatio))
	}
	return r
}
