// Package catalogue reads price catalogues and compares them with the
// gateway's prices: the widely used model_prices_and_context_window.json
// shape (US dollars per token) and the gateway's own export (per million
// tokens). It decides which differences are suspicious; applying them is
// the caller's, as new price versions.
package catalogue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Fields are the price fields a catalogue may set, by the gateway's names,
// in the order changes are listed.
var Fields = []string{"input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok",
	"reasoning_per_mtok", "batch_input_per_mtok", "batch_output_per_mtok", "per_call"}

// perToken maps the per-token catalogue fields onto the gateway's.
var perToken = map[string]string{
	"input_cost_per_token":            "input_per_mtok",
	"output_cost_per_token":           "output_per_mtok",
	"cache_read_input_token_cost":     "cache_read_per_mtok",
	"cache_creation_input_token_cost": "cache_write_per_mtok",
	"output_cost_per_reasoning_token": "reasoning_per_mtok",
	"input_cost_per_token_batches":    "batch_input_per_mtok",
	"output_cost_per_token_batches":   "batch_output_per_mtok",
}

// Format is the marker of the gateway's own export.
const Format = "turnpike"

// Prices are one model's catalogue prices by field: USD per million
// tokens, per_call in USD per call.
type Prices map[string]float64

// Catalogue is every model's prices.
type Catalogue map[string]Prices

// Export is the gateway's own catalogue: its prices, readable back.
type Export struct {
	Format string    `json:"format"`
	Models Catalogue `json:"models"`
}

// ExportOf is the catalogue of prices: every field that is set.
func ExportOf(prices []store.ModelPrice) Export {
	out := Export{Format: Format, Models: Catalogue{}}
	for i := range prices {
		p := Prices{}
		for _, f := range Fields {
			if v := *field(&prices[i], f); v != 0 {
				p[f] = v
			}
		}
		out.Models[prices[i].Name] = p
	}
	return out
}

// ErrInvalid is a catalogue that cannot be read.
var ErrInvalid = errors.New("invalid catalogue")

// Parse reads a catalogue in either shape. An entry that is not an object,
// or sets none of the known fields, is skipped (the per-token file has a
// sample_spec entry and entries for other kinds of model); a known field
// that is not a non-negative number is an error naming it.
func Parse(raw []byte) (Catalogue, error) {
	var top map[string]json.RawMessage
	if err := decode(raw, &top); err != nil || top == nil {
		return nil, fmt.Errorf("%w: it must be a JSON object", ErrInvalid)
	}
	if models, ok := top["models"]; ok && isOwn(top) {
		var own map[string]map[string]json.RawMessage
		if err := decode(models, &own); err != nil {
			return nil, fmt.Errorf("%w: models must map model names to objects", ErrInvalid)
		}
		return read(own, func(k string) (string, bool) {
			for _, f := range Fields {
				if f == k {
					return f, true
				}
			}
			return "", false
		}, big.NewRat(1, 1))
	}
	entries := map[string]map[string]json.RawMessage{}
	for name, v := range top {
		var obj map[string]json.RawMessage
		if decode(v, &obj) == nil && obj != nil {
			entries[name] = obj
		}
	}
	return read(entries, func(k string) (string, bool) { f, ok := perToken[k]; return f, ok }, big.NewRat(1_000_000, 1))
}

// isOwn tells the gateway's export (format marker, or a models object
// beside nothing priced per token) from the per-token shape.
func isOwn(top map[string]json.RawMessage) bool {
	var format string
	if json.Unmarshal(top["format"], &format) == nil && format == Format {
		return true
	}
	return len(top) <= 2
}

func read(entries map[string]map[string]json.RawMessage, name func(string) (string, bool), scale *big.Rat) (Catalogue, error) {
	out := Catalogue{}
	for model, obj := range entries {
		p := Prices{}
		for k, raw := range obj {
			f, ok := name(k)
			if !ok || string(raw) == "null" {
				continue
			}
			v, err := number(raw, scale)
			if err != nil {
				return nil, fmt.Errorf("%w: %s.%s %v", ErrInvalid, model, k, err)
			}
			p[f] = v
		}
		if len(p) > 0 {
			out[model] = p
		}
	}
	return out, nil
}

// number reads a JSON number exactly and scales it (per token to per
// million): 1.5e-07 becomes 0.15, not 0.15000000000000002.
func number(raw json.RawMessage, scale *big.Rat) (float64, error) {
	var n json.Number
	if len(raw) == 0 || raw[0] == '"' || decode(raw, &n) != nil {
		return 0, errors.New("must be a number")
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || r.Sign() < 0 {
		return 0, errors.New("must be a non-negative number")
	}
	v, _ := r.Mul(r, scale).Float64()
	if math.IsInf(v, 0) {
		return 0, errors.New("is too large")
	}
	return v, nil
}

func decode(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

// field is p's price field named f.
func field(p *store.ModelPrice, f string) *float64 {
	switch f {
	case "input_per_mtok":
		return &p.InputPerMTok
	case "output_per_mtok":
		return &p.OutputPerMTok
	case "cache_read_per_mtok":
		return &p.CacheReadPerMTok
	case "cache_write_per_mtok":
		return &p.CacheWritePerMTok
	case "reasoning_per_mtok":
		return &p.ReasoningPerMTok
	case "batch_input_per_mtok":
		return &p.BatchInputPerMTok
	case "batch_output_per_mtok":
		return &p.BatchOutputPerMTok
	case "per_call":
		return &p.PerCall
	}
	panic("catalogue: unknown field " + f)
}

// sortedNames is m's keys in order.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
