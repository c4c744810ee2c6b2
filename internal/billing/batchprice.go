package billing

import "github.com/turnpike-gw/turnpike/internal/store"

// BatchPrice is the price of a batch line of p's model: the model's batch
// token prices where set, else its live prices times factor (1 for lines
// the gateway runs itself, 0.5 for provider batches, whose providers
// discount them by half). Cache and reasoning prices, and the per-call
// part, follow the same factor; the long-context tiers do too.
func BatchPrice(p *Price, provider bool) *Price {
	if p == nil || p.Free {
		return p
	}
	raw := p.Raw
	f := 1.0
	if provider {
		f = 0.5
	}
	scale := func(v float64) float64 { return v * f }
	in, out := scale(raw.InputPerMTok), scale(raw.OutputPerMTok)
	if raw.BatchInputPerMTok > 0 {
		in = raw.BatchInputPerMTok
	}
	if raw.BatchOutputPerMTok > 0 {
		out = raw.BatchOutputPerMTok
	}
	if !provider && raw.BatchInputPerMTok == 0 && raw.BatchOutputPerMTok == 0 {
		return p
	}
	b := raw
	b.InputPerMTok, b.OutputPerMTok = in, out
	b.CacheReadPerMTok, b.CacheWritePerMTok = scale(raw.CacheReadPerMTok), scale(raw.CacheWritePerMTok)
	b.ReasoningPerMTok, b.PerCall = scale(raw.ReasoningPerMTok), scale(raw.PerCall)
	b.Tiers = make([]store.PriceTier, len(raw.Tiers))
	for i, t := range raw.Tiers {
		t.InputPerMTok, t.OutputPerMTok = scale(t.InputPerMTok), scale(t.OutputPerMTok)
		t.CacheReadPerMTok, t.CacheWritePerMTok = scale(t.CacheReadPerMTok), scale(t.CacheWritePerMTok)
		t.ReasoningPerMTok = scale(t.ReasoningPerMTok)
		b.Tiers[i] = t
	}
	return NewPrice(b)
}
