package catalogue

import (
	"math"
	"testing"
)

// A catalogue comes from a URL or an upload: reading one never panics, and
// what it accepts holds only finite, non-negative prices.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"gpt-4o":{"input_cost_per_token":2.5e-06,"output_cost_per_token":1e-05},"sample_spec":{"max_tokens":"set"}}`))
	f.Add([]byte(`{"models":{"m":{"input_per_mtok":1,"output_per_mtok":2}},"source":"turnpike"}`))
	f.Add([]byte(`{"m":{"input_cost_per_token":-1}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cat, err := Parse(raw)
		if err != nil {
			return
		}
		for model, prices := range cat {
			for field, v := range prices {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s.%s = %v accepted", model, field, v)
				}
			}
		}
	})
}
