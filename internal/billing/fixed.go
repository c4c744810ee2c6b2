package billing

import (
	"math/big"
	"math/bits"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

// Chat calls are charged twice (the hold and the bill) and math/big costs
// about forty allocations a charge. Prices typed with up to six decimals
// per million tokens are whole pico-dollars per token, and group ratios
// with up to six decimals are whole millionths, so the same exact charge
// fits in 128-bit integer arithmetic. fixedRates holds a rate set in that
// form; anything that does not fit takes the math/big path, which stays
// the definition (Charge's test compares the two).

// picoPerMicroUSD: a rate of 1 USD per million tokens is 10^6 pico-dollars
// per token.
const picoPerMicroUSD = 1_000_000

// maxPico bounds a rate (about 1.1 USD per token) so that a token count
// times a rate stays far from overflow checks in the common case.
const maxPico = 1 << 40

// fixedRates are rates in pico-dollars per token; ok is false when one of
// them is not a whole number of pico-dollars (the math/big path prices
// those).
type fixedRates struct {
	ok                                   bool
	hasReasoning                         bool
	input, output, cacheRead, cacheWrite uint64
	reasoning                            uint64
}

func (r rates) toFixed() fixedRates {
	f := fixedRates{ok: true}
	conv := func(x *big.Rat) uint64 {
		v, ok := picoPerToken(x)
		f.ok = f.ok && ok
		return v
	}
	f.input = conv(r.input)
	f.output = conv(r.output)
	f.cacheRead = conv(orRat(r.cacheRead, r.input))
	f.cacheWrite = conv(orRat(r.cacheWrite, r.input))
	if r.reasoning != nil {
		f.hasReasoning, f.reasoning = true, conv(r.reasoning)
	}
	return f
}

// picoPerToken is a per-million-token rate in pico-dollars per token; nil
// is no rate (zero).
func picoPerToken(x *big.Rat) (uint64, bool) {
	if x == nil {
		return 0, true
	}
	return wholeTimes(x, picoPerMicroUSD)
}

// wholeTimes is x × scale when that is a whole number in [0, maxPico).
func wholeTimes(x *big.Rat, scale int64) (uint64, bool) {
	v := new(big.Rat).Mul(x, big.NewRat(scale, 1))
	if !v.IsInt() || v.Sign() < 0 || !v.Num().IsUint64() || v.Num().Uint64() >= maxPico {
		return 0, false
	}
	return v.Num().Uint64(), true
}

// ratioMillionths is a group ratio in millionths, when whole.
func ratioMillionths(ratio float64) (uint64, bool) {
	r := exactRat(ratio)
	if r == nil {
		return 0, true
	}
	return wholeTimes(r, 1_000_000)
}

// cost is TokenCost in pico-dollars; ok is false on overflow.
func (f *fixedRates) cost(u ir.Usage) (uint64, bool) {
	var sum uint64
	ok := true
	add := func(tokens int, pico uint64) {
		if tokens <= 0 || pico == 0 {
			return
		}
		hi, lo := bits.Mul64(uint64(tokens), pico)
		var carry uint64
		sum, carry = bits.Add64(sum, lo, 0)
		ok = ok && hi == 0 && carry == 0
	}
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	add(plain, f.input)
	add(u.CacheReadTokens, f.cacheRead)
	add(u.CacheWriteTokens, f.cacheWrite)
	reasoning := 0
	if f.hasReasoning {
		reasoning = max(min(u.ReasoningTokens, u.OutputTokens), 0)
	}
	add(u.OutputTokens-reasoning, f.output)
	add(reasoning, f.reasoning)
	return sum, ok
}

// fixedQuota is round_half_up(pico × quotaPerUSD × millionths / 10^18),
// the quota of a cost in pico-dollars at a ratio in millionths; ok is false
// when it does not fit (the math/big path then answers, or refuses).
func fixedQuota(pico uint64, quotaPerUSD int64, millionths uint64) (int64, bool) {
	const den = 1_000_000_000_000_000_000 // pico-dollars × millionths per dollar
	if quotaPerUSD <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(pico, uint64(quotaPerUSD))
	h1, l := bits.Mul64(lo, millionths)
	h2, l2 := bits.Mul64(hi, millionths)
	h, carry := bits.Add64(h1, l2, 0)
	if h2 != 0 || carry != 0 || h >= den {
		return 0, false
	}
	q, rem := bits.Div64(h, l, den)
	if rem >= den-rem {
		q++
	}
	if q > MaxQuota {
		return 0, false
	}
	return int64(q), true
}

// FixedTokenCost is TokenCost in pico-dollars without math/big, when the
// rates are whole in pico-dollars and the sum fits; ok is false otherwise
// (the caller then takes TokenCost).
func (p *Price) FixedTokenCost(u ir.Usage) (pico uint64, ok bool) {
	if p.Free {
		return 0, true
	}
	f := p.ratesFor(u.InputTokens).fixed
	if !f.ok {
		return 0, false
	}
	return f.cost(u)
}
