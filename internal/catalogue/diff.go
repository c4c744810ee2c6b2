package catalogue

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// DefaultMaxChangeRatio is the factor (either way) above which a change is
// suspicious when none is given.
const DefaultMaxChangeRatio = 3

// Change is one price field's difference: Old and New in the gateway's
// units (Old 0 when the field was unset), Ratio New over the price in
// effect for the field: Old, or for an unset field the price that applied
// in its place (effective); null when nothing applied.
type Change struct {
	Model string   `json:"model"`
	Field string   `json:"field"`
	Old   float64  `json:"old"`
	New   float64  `json:"new"`
	Ratio *float64 `json:"ratio"`
}

// Added is a model the gateway does not price yet, named to be added, with
// its catalogue prices.
type Added struct {
	Model  string
	Prices Prices
}

// MarshalJSON writes an addition flat: {"model", "<field>": value, …}.
func (a Added) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(a.Prices)+1)
	for k, v := range a.Prices {
		m[k] = v
	}
	m["model"] = a.Model
	return json.Marshal(m)
}

// Diff is a catalogue against the gateway's prices. A suspicious change is
// listed only in Suspicious.
type Diff struct {
	Added      []Added  `json:"added"`
	Changed    []Change `json:"changed"`
	Unchanged  int      `json:"unchanged"`
	Suspicious []Change `json:"suspicious"`
	// Missing are considered models the catalogue does not list.
	Missing []string `json:"missing"`
}

// Compare is cat against prices, considering the models the gateway
// prices (except free ones, priced at nothing on purpose) and those named
// in models. A field the catalogue does not set is left alone. A change
// by a factor above maxRatio either way, or to zero, is suspicious; a
// field that was unset is measured against the price that applied in its
// place (CONTRACT §13), so a batch price set to a billionth of the live
// one is held back like any other jump. A maxRatio of 1 or less is
// DefaultMaxChangeRatio.
func Compare(prices []store.ModelPrice, cat Catalogue, models []string, maxRatio float64) Diff {
	if maxRatio <= 1 {
		maxRatio = DefaultMaxChangeRatio
	}
	d := Diff{Added: []Added{}, Changed: []Change{}, Suspicious: []Change{}, Missing: []string{}}
	priced := make(map[string]*store.ModelPrice, len(prices))
	for i := range prices {
		priced[prices[i].Name] = &prices[i]
	}
	names := make([]string, 0, len(prices)+len(models))
	for i := range prices {
		if !prices[i].Free {
			names = append(names, prices[i].Name)
		}
	}
	for _, m := range models {
		if priced[m] == nil {
			names = append(names, m)
		}
	}
	sort.Strings(names)
	names = slices.Compact(names)
	for _, name := range names {
		c, listed := cat[name]
		p := priced[name]
		switch {
		case !listed:
			d.Missing = append(d.Missing, name)
		case p == nil:
			d.Added = append(d.Added, Added{Model: name, Prices: c})
		default:
			n := len(d.Changed) + len(d.Suspicious)
			for _, f := range Fields {
				v, set := c[f]
				if !set {
					continue
				}
				old := *field(p, f)
				if v == old {
					continue
				}
				ch := Change{Model: name, Field: f, Old: old, New: v}
				was := old
				if was == 0 {
					was = effective(p, f)
				}
				if was != 0 {
					r := v / was
					ch.Ratio = &r
				}
				if was != 0 && (v == 0 || v/was > maxRatio || was/v > maxRatio) {
					d.Suspicious = append(d.Suspicious, ch)
				} else {
					d.Changed = append(d.Changed, ch)
				}
			}
			if len(d.Changed)+len(d.Suspicious) == n {
				d.Unchanged++
			}
		}
	}
	return d
}

// effective is the price that applies in place of p's unset field f: a
// cache price is the input price, a reasoning price the output price, and
// a batch price half the live one (what a provider batch charges); 0 for
// a field nothing stands in for.
func effective(p *store.ModelPrice, f string) float64 {
	switch f {
	case "cache_read_per_mtok", "cache_write_per_mtok":
		return p.InputPerMTok
	case "reasoning_per_mtok":
		return p.OutputPerMTok
	case "batch_input_per_mtok":
		return p.InputPerMTok / 2
	case "batch_output_per_mtok":
		return p.OutputPerMTok / 2
	}
	return 0
}

// Updated is the models' new prices: each changed model's price (from
// prices) with its changes made, and each added model's, in model order.
// Suspicious changes are made only when acceptSuspicious is set.
func (d Diff) Updated(prices []store.ModelPrice, acceptSuspicious bool) []store.ModelPrice {
	byName := map[string]store.ModelPrice{}
	for _, p := range prices {
		byName[p.Name] = p
	}
	out := map[string]store.ModelPrice{}
	changes := d.Changed
	if acceptSuspicious {
		changes = append(slices.Clone(changes), d.Suspicious...)
	}
	for _, c := range changes {
		p, ok := out[c.Model]
		if !ok {
			p = byName[c.Model]
		}
		*field(&p, c.Field) = c.New
		out[c.Model] = p
	}
	for _, a := range d.Added {
		p := store.ModelPrice{Name: a.Model}
		for f, v := range a.Prices {
			*field(&p, f) = v
		}
		out[a.Model] = p
	}
	list := make([]store.ModelPrice, 0, len(out))
	for _, name := range sortedNames(out) {
		list = append(list, out[name])
	}
	return list
}
