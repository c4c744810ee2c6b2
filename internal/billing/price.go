// Package billing prices calls and moves quota: it reserves an estimate
// before the upstream call, settles to the real usage afterwards or refunds
// on failure, and records every movement in the ledger. Charges are integer
// quota units computed with exact decimal arithmetic, so the figure a user
// can recompute by hand is the figure charged.
package billing

import (
	"math/big"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Price is a model price prepared for exact arithmetic.
type Price struct {
	Name       string
	Free       bool
	input      *big.Rat
	output     *big.Rat
	cacheRead  *big.Rat
	cacheWrite *big.Rat
	perCall    *big.Rat
	Raw        store.ModelPrice
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
	return &Price{
		Name: p.Name, Free: p.Free, Raw: p,
		input: exactRat(p.InputPerMTok), output: exactRat(p.OutputPerMTok),
		cacheRead: exactRat(p.CacheReadPerMTok), cacheWrite: exactRat(p.CacheWritePerMTok),
		perCall: exactRat(p.PerCall),
	}
}

// TokenCost is the exact US-dollar cost of usage at this price, before
// the group ratio. Cached tokens are charged at their own price when one is
// set and at the input price otherwise.
func (p *Price) TokenCost(u ir.Usage) *big.Rat {
	cost := new(big.Rat)
	if p.Free {
		return cost
	}
	plain := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
	if plain < 0 {
		plain = 0
	}
	addTokens(cost, plain, p.input)
	addTokens(cost, u.CacheReadTokens, orRat(p.cacheRead, p.input))
	addTokens(cost, u.CacheWriteTokens, orRat(p.cacheWrite, p.input))
	addTokens(cost, u.OutputTokens, p.output)
	cost.Quo(cost, big.NewRat(1_000_000, 1))
	return cost
}

// CallCost is the exact per-call cost times n calls.
func (p *Price) CallCost(n int) *big.Rat {
	cost := new(big.Rat)
	if p.Free || p.perCall == nil || n <= 0 {
		return cost
	}
	return cost.Mul(p.perCall, big.NewRat(int64(n), 1))
}

// HasTokenPrice reports whether the price charges for tokens.
func (p *Price) HasTokenPrice() bool { return p.input != nil || p.output != nil }

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
