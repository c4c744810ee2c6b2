// Package billing prices calls and moves quota: it reserves an estimate
// before the upstream call, settles to the real usage afterwards or refunds
// on failure, and records every movement in the ledger. Charges are integer
// quota units computed with exact decimal arithmetic, so the figure a user
// can recompute by hand is the figure charged.
package billing

import (
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Price is a model price prepared for exact arithmetic.
type Price struct {
	Name string
	Free bool
	// Version is the price version this is (0 for a price stored before
	// versions existed), in effect from EffectiveFrom.
	Version       int64
	EffectiveFrom time.Time
	base          rates
	tiers         []tier // ascending by threshold
	perCall       *big.Rat
	Raw           store.ModelPrice
}

// rates are the per-million-token prices that apply to one request. A nil
// rate is unset: cache tokens then cost the input rate, reasoning tokens
// the output rate, and input or output tokens nothing.
type rates struct {
	input, output, cacheRead, cacheWrite, reasoning *big.Rat
	// fixed is the same rates in integers, for Charge's fast path.
	fixed fixedRates
}

// tier holds the rates of requests whose input exceeds above, already
// merged with the base rates for every price the tier leaves out.
type tier struct {
	above int64
	rates
}

// exactRat turns a float price into the decimal the administrator typed:
// 0.15 becomes 3/20, not the nearest binary fraction.
func exactRat(f float64) *big.Rat {
	if f == 0 {
		return nil
	}
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	return r
}

// NewPrice prepares a stored price.
func NewPrice(p store.ModelPrice) *Price {
	out := &Price{
		Name: p.Name, Free: p.Free, Raw: p, Version: p.Version, EffectiveFrom: p.EffectiveFrom,
		base: rates{input: exactRat(p.InputPerMTok), output: exactRat(p.OutputPerMTok),
			cacheRead: exactRat(p.CacheReadPerMTok), cacheWrite: exactRat(p.CacheWritePerMTok),
			reasoning: exactRat(p.ReasoningPerMTok)},
		perCall: exactRat(p.PerCall),
	}
	for _, t := range p.Tiers {
		out.tiers = append(out.tiers, tier{above: t.AboveInputTokens, rates: rates{
			input: orRat(exactRat(t.InputPerMTok), out.base.input), output: orRat(exactRat(t.OutputPerMTok), out.base.output),
			cacheRead:  orRat(exactRat(t.CacheReadPerMTok), out.base.cacheRead),
			cacheWrite: orRat(exactRat(t.CacheWritePerMTok), out.base.cacheWrite),
			reasoning:  orRat(exactRat(t.ReasoningPerMTok), out.base.reasoning),
		}})
	}
	// The API and the seed store tiers sorted; a row written otherwise
	// must still pick the highest threshold exceeded.
	sort.SliceStable(out.tiers, func(i, j int) bool { return out.tiers[i].above < out.tiers[j].above })
	out.base.fixed = out.base.toFixed()
	for i := range out.tiers {
		out.tiers[i].fixed = out.tiers[i].rates.toFixed()
	}
	return out
}

// ratesFor is the rates of a request with this many input tokens: those of
// the tier with the highest threshold it exceeds, else the base rates.
// Exactly at a threshold is still below the tier.
func (p *Price) ratesFor(inputTokens int) rates {
	for i := len(p.tiers) - 1; i >= 0; i-- {
		if int64(inputTokens) > p.tiers[i].above {
			return p.tiers[i].rates
		}
	}
	return p.base
}

// TokenCost is the exact US-dollar cost of usage at this price, before
// the group ratio. The request's input tokens (cache tokens included)
// choose the tier whose rates price every token of it. Cached tokens are
// charged at their own price when one is set and at the input price
// otherwise. Reasoning tokens are part of the output tokens: with a
// reasoning price set, up to the output tokens of them are charged at it
// and the rest of the output at the output price.
func (p *Price) TokenCost(u ir.Usage) *big.Rat {
	cost := new(big.Rat)
	if p.Free {
		return cost
	}
	r := p.ratesFor(u.InputTokens)
	plain := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
	if plain < 0 {
		plain = 0
	}
	addTokens(cost, plain, r.input)
	addTokens(cost, u.CacheReadTokens, orRat(r.cacheRead, r.input))
	addTokens(cost, u.CacheWriteTokens, orRat(r.cacheWrite, r.input))
	reasoning := 0
	if r.reasoning != nil {
		reasoning = max(min(u.ReasoningTokens, u.OutputTokens), 0)
	}
	addTokens(cost, u.OutputTokens-reasoning, r.output)
	addTokens(cost, reasoning, r.reasoning)
	cost.Quo(cost, big.NewRat(1_000_000, 1))
	return cost
}

// ReserveUsage is the usage a reservation for estimate u should price so
// that it never falls short of the bill: every output token is counted at
// the dearer of the output and reasoning rates of the tier u's input
// tokens reach, since the split between them is only known afterwards.
func (p *Price) ReserveUsage(u ir.Usage) ir.Usage {
	r := p.ratesFor(u.InputTokens)
	u.ReasoningTokens = 0
	if r.reasoning != nil && (r.output == nil || r.reasoning.Cmp(r.output) > 0) {
		u.ReasoningTokens = u.OutputTokens
	}
	return u
}

// CallCost is the exact per-call cost times n calls.
func (p *Price) CallCost(n int) *big.Rat {
	cost := new(big.Rat)
	if p.Free || p.perCall == nil || n <= 0 {
		return cost
	}
	return cost.Mul(p.perCall, big.NewRat(int64(n), 1))
}

// OneCallCost is CallCost(1), or nil when the price has no per-call part:
// every pricing function takes a nil part as zero, and the zero CallCost
// makes is an allocation a chat call paid twice (estimate and settle).
func (p *Price) OneCallCost() *big.Rat {
	if p.Free || p.perCall == nil {
		return nil
	}
	return p.CallCost(1)
}

// HasTokenPrice reports whether the price charges for tokens, at its base
// rates or at a tier's.
func (p *Price) HasTokenPrice() bool {
	if p.base.input != nil || p.base.output != nil {
		return true
	}
	for _, t := range p.tiers {
		if t.input != nil || t.output != nil {
			return true
		}
	}
	return false
}

func orRat(a, b *big.Rat) *big.Rat {
	if a != nil {
		return a
	}
	return b
}

func addTokens(sum *big.Rat, tokens int, perMTok *big.Rat) {
	if tokens <= 0 || perMTok == nil {
		return
	}
	t := new(big.Rat).SetInt64(int64(tokens))
	sum.Add(sum, t.Mul(t, perMTok))
}

// MaxQuota bounds one request's charge. Far above any real bill (2^53 units
// is about 18 billion dollars at the default rate), it keeps every balance
// sum exact in JSON numbers and far from int64 overflow.
const MaxQuota = 1 << 53

// ErrChargeTooLarge refuses a request whose quantities would cost more
// than one request may: a wrapped or clamped figure would be wrong money.
var ErrChargeTooLarge = &ir.Error{Status: 400, Kind: ir.KindInvalidRequest, Code: "charge_too_large",
	Message: "the request's quantities would cost more than one request may be charged"}

// Quota converts a dollar cost to quota units: round half up of
// cost × quotaPerUSD × groupRatio, once per request. A result past
// MaxQuota is an error, never a wrapped number.
func Quota(costUSD *big.Rat, quotaPerUSD int64, groupRatio float64) (int64, error) {
	if costUSD.Sign() == 0 {
		return 0, nil
	}
	v := new(big.Rat).Mul(costUSD, big.NewRat(quotaPerUSD, 1))
	if groupRatio != 1 {
		r := exactRat(groupRatio)
		if r == nil {
			return 0, nil
		}
		v.Mul(v, r)
	}
	return roundHalfUp(v)
}

func roundHalfUp(v *big.Rat) (int64, error) {
	half := new(big.Rat).Add(v, big.NewRat(1, 2))
	q := new(big.Int).Quo(half.Num(), half.Denom())
	if half.Sign() < 0 && new(big.Int).Mul(q, half.Denom()).Cmp(half.Num()) != 0 {
		q.Sub(q, big.NewInt(1))
	}
	if !q.IsInt64() || q.Int64() > MaxQuota || q.Int64() < -MaxQuota {
		return 0, ErrChargeTooLarge
	}
	return q.Int64(), nil
}

// Cost is the exact US-dollar cost of usage plus the non-token parts usd
// (may be nil), before the group ratio: what Charge rounds into quota.
func (p *Price) Cost(u ir.Usage, usd *big.Rat) *big.Rat {
	if p.Free {
		return new(big.Rat)
	}
	cost := p.TokenCost(u)
	if usd != nil {
		cost.Add(cost, usd)
	}
	return cost
}

// Decimal is f as the decimal it was typed as (see exactRat); zero for 0.
func Decimal(f float64) *big.Rat {
	if r := exactRat(f); r != nil {
		return r
	}
	return new(big.Rat)
}
