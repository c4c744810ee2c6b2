package store

import (
	"encoding/json"
	"time"
)

// Sources of a price version.
const (
	PriceSourceAPI       = "api"
	PriceSourceSeed      = "seed"
	PriceSourceCatalogue = "catalogue"
)

// PriceVersion is one price a model had or will have: every price field of
// ModelPrice, numbered per model from 1, in effect from EffectiveFrom until
// a later version takes effect. Versions are only ever added, so the price
// a past call was charged at can always be shown.
type PriceVersion struct {
	Model              string          `json:"model"`
	Version            int64           `json:"version"`
	EffectiveFrom      time.Time       `json:"effective_from"`
	InputPerMTok       float64         `json:"input_per_mtok"`
	OutputPerMTok      float64         `json:"output_per_mtok"`
	CacheReadPerMTok   float64         `json:"cache_read_per_mtok"`
	CacheWritePerMTok  float64         `json:"cache_write_per_mtok"`
	ReasoningPerMTok   float64         `json:"reasoning_per_mtok"`
	BatchInputPerMTok  float64         `json:"batch_input_per_mtok"`
	BatchOutputPerMTok float64         `json:"batch_output_per_mtok"`
	PerCall            float64         `json:"per_call"`
	Tiers              []PriceTier     `json:"tiers"`
	Free               bool            `json:"free"`
	Extra              json.RawMessage `json:"extra,omitempty"`
	Source             string          `json:"source"`
	Actor              string          `json:"actor"`
	CreatedAt          time.Time       `json:"created_at"`
}

// VersionOf is p's price fields as a version (numbered and timed by the
// store).
func VersionOf(p ModelPrice) PriceVersion {
	return PriceVersion{Model: p.Name, Version: p.Version, EffectiveFrom: p.EffectiveFrom,
		InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok, CacheReadPerMTok: p.CacheReadPerMTok,
		CacheWritePerMTok: p.CacheWritePerMTok, ReasoningPerMTok: p.ReasoningPerMTok,
		BatchInputPerMTok: p.BatchInputPerMTok, BatchOutputPerMTok: p.BatchOutputPerMTok, PerCall: p.PerCall,
		Tiers: p.Tiers, Free: p.Free, Extra: p.Extra, Source: p.Source, Actor: p.Actor}
}

// On is p with v's price fields and version description; what is not a
// price (fallbacks, the row's updated_at) stays p's.
func (v PriceVersion) On(p ModelPrice) ModelPrice {
	p.InputPerMTok, p.OutputPerMTok = v.InputPerMTok, v.OutputPerMTok
	p.CacheReadPerMTok, p.CacheWritePerMTok, p.ReasoningPerMTok = v.CacheReadPerMTok, v.CacheWritePerMTok, v.ReasoningPerMTok
	p.BatchInputPerMTok, p.BatchOutputPerMTok, p.PerCall = v.BatchInputPerMTok, v.BatchOutputPerMTok, v.PerCall
	p.Tiers, p.Free, p.Extra = v.Tiers, v.Free, v.Extra
	p.Version, p.EffectiveFrom, p.Source, p.Actor = v.Version, v.EffectiveFrom, v.Source, v.Actor
	return p
}

// InEffect is the version of vs (one model's) in effect at at: of those
// whose EffectiveFrom is not after at, the latest to take effect, and of
// several taking effect together the highest numbered. ok is false when
// none has taken effect yet.
func InEffect(vs []PriceVersion, at time.Time) (v PriceVersion, ok bool) {
	for _, c := range vs {
		if c.EffectiveFrom.After(at) {
			continue
		}
		if !ok || c.EffectiveFrom.After(v.EffectiveFrom) || (c.EffectiveFrom.Equal(v.EffectiveFrom) && c.Version > v.Version) {
			v, ok = c, true
		}
	}
	return v, ok
}
