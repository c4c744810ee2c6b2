package relay

import (
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// Keys of a model price's extra JSON (see docs/PRICING.md).
const (
	extraImageFactors   = "image_factors"
	extraPerMinute      = "per_minute"
	extraPerMillionChar = "per_million_chars"
)

// extraRat reads a number from the price's extra JSON exactly as typed
// ("0.006" is 3/500, not the nearest binary fraction); nil when absent or
// not a non-negative number.
func extraRat(p *billing.Price, path string) *big.Rat {
	v := gjson.GetBytes(p.Raw.Extra, path)
	if v.Type != gjson.Number && v.Type != gjson.String {
		return nil
	}
	s := strings.TrimSpace(v.String())
	if v.Type == gjson.Number {
		s = v.Raw
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 {
		return nil
	}
	return r
}

// imageFactor is the multiplier for one request value (a size such as
// "1792x1024" or a quality such as "hd"); 1 when none is set.
func imageFactor(p *billing.Price, value string) *big.Rat {
	if value == "" {
		return big.NewRat(1, 1)
	}
	if r := extraRat(p, extraImageFactors+"."+gjsonEscape(value)); r != nil {
		return r
	}
	return big.NewRat(1, 1)
}

// gjsonEscape escapes the path characters gjson would interpret, so a
// client's size string is only ever a key.
func gjsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '.', '*', '?', '|', '#', '@', '\\', '!', '=', '<', '>', '%':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// imageCost is per_call × size factor × quality factor × n images.
func imageCost(p *billing.Price, n int, size, quality string) *big.Rat {
	cost := p.CallCost(n)
	cost.Mul(cost, imageFactor(p, size))
	return cost.Mul(cost, imageFactor(p, quality))
}

// perMinuteCost prices seconds of audio at extra.per_minute; ok is false when
// the model has no per-minute price or the duration is unknown.
func perMinuteCost(p *billing.Price, seconds *big.Rat) (*big.Rat, bool) {
	rate := extraRat(p, extraPerMinute)
	if rate == nil || seconds == nil || seconds.Sign() <= 0 {
		return nil, false
	}
	cost := new(big.Rat).Mul(rate, seconds)
	return cost.Quo(cost, big.NewRat(60, 1)), true
}

// speechCharge prices text to speech by characters when the model has
// extra.per_million_chars, else by counted input tokens; per_call is added.
func speechCharge(p *billing.Price, model, text string) charge {
	chars := utf8.RuneCountInString(text)
	ch := charge{usd: p.CallCost(1), detail: map[string]any{"characters": chars}}
	if rate := extraRat(p, extraPerMillionChar); rate != nil {
		cost := new(big.Rat).Mul(rate, big.NewRat(int64(chars), 1_000_000))
		ch.usd.Add(ch.usd, cost)
		return ch
	}
	ch.usage = ir.Usage{InputTokens: tokenize.Count(model, text)}
	return ch
}

// tokensPlusCall is the charge of token-priced endpoints: the usage at the
// token prices plus per_call once.
func tokensPlusCall(p *billing.Price, u ir.Usage) charge {
	return charge{usage: u, usd: p.CallCost(1)}
}

// exactSeconds reads a duration from a JSON number without float rounding.
func exactSeconds(v gjson.Result) *big.Rat {
	if v.Type != gjson.Number {
		return nil
	}
	r, ok := new(big.Rat).SetString(v.Raw)
	if !ok || r.Sign() <= 0 {
		return nil
	}
	return r
}

// answerUsage reads token usage in either spelling the OpenAI API uses
// (prompt/completion for text, input/output for images and audio).
func answerUsage(body []byte) (ir.Usage, bool) {
	u := gjson.GetBytes(body, "usage")
	if !u.IsObject() {
		return ir.Usage{}, false
	}
	in := firstInt(u, "prompt_tokens", "input_tokens")
	out := firstInt(u, "completion_tokens", "output_tokens")
	if in == 0 && out == 0 {
		in = firstInt(u, "total_tokens")
	}
	if in == 0 && out == 0 {
		return ir.Usage{}, false
	}
	return ir.Usage{InputTokens: in, OutputTokens: out}, true
}

// firstInt returns the first positive integer among the fields; negative
// or absurd counts are ignored so a broken upstream cannot refund itself.
func firstInt(obj gjson.Result, fields ...string) int {
	for _, f := range fields {
		if v := obj.Get(f); v.Type == gjson.Number && v.Num > 0 && v.Num < 1<<40 {
			return int(v.Int())
		}
	}
	return 0
}

// countTexts counts tokens of every string in a JSON value (a string, or an
// array of strings or of objects with text), and token-id arrays by length.
func countTexts(model string, v gjson.Result) int {
	switch {
	case v.Type == gjson.String:
		return tokenize.Count(model, v.Str)
	case v.IsArray():
		n := 0
		for _, e := range v.Array() {
			if e.Type == gjson.Number {
				n++
				continue
			}
			n += countTexts(model, e)
		}
		return n
	case v.IsObject():
		return countTexts(model, v.Get("text"))
	}
	return 0
}
