package catalogue

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestParseConvertsEachPerTokenFieldToPerMillion(t *testing.T) {
	cases := []struct {
		catalogueField, field string
		perToken              string
		want                  float64
	}{
		{"input_cost_per_token", "input_per_mtok", "1.5e-07", 0.15},
		{"output_cost_per_token", "output_per_mtok", "6e-07", 0.6},
		{"cache_read_input_token_cost", "cache_read_per_mtok", "7.5e-08", 0.075},
		{"cache_creation_input_token_cost", "cache_write_per_mtok", "3.75e-06", 3.75},
		{"output_cost_per_reasoning_token", "reasoning_per_mtok", "0.000012", 12},
		{"input_cost_per_token_batches", "batch_input_per_mtok", "7.5e-08", 0.075},
		{"output_cost_per_token_batches", "batch_output_per_mtok", "3e-7", 0.3},
	}
	for _, tc := range cases {
		t.Run(tc.catalogueField, func(t *testing.T) {
			raw := `{"sample_spec":{"max_tokens":"set to max"},"m":{"litellm_provider":"openai","` + tc.catalogueField + `":` + tc.perToken + `}}`
			cat, err := Parse([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			want := Catalogue{"m": Prices{tc.field: tc.want}}
			if !reflect.DeepEqual(cat, want) {
				t.Fatalf("got %v, want %v", cat, want)
			}
		})
	}
}

func TestParseReadsTheOwnExportBack(t *testing.T) {
	prices := []store.ModelPrice{
		{Name: "a", InputPerMTok: 0.15, OutputPerMTok: 0.6, BatchInputPerMTok: 0.075, PerCall: 0.01},
		{Name: "vendor/b", CacheReadPerMTok: 1.25, ReasoningPerMTok: 10},
	}
	raw, err := json.Marshal(ExportOf(prices))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := Catalogue{"a": {"input_per_mtok": 0.15, "output_per_mtok": 0.6, "batch_input_per_mtok": 0.075, "per_call": 0.01},
		"vendor/b": {"cache_read_per_mtok": 1.25, "reasoning_per_mtok": 10}}
	if !reflect.DeepEqual(cat, want) {
		t.Fatalf("got %v, want %v", cat, want)
	}
	if d := Compare(prices, cat, nil, 0); len(d.Changed)+len(d.Suspicious)+len(d.Added) != 0 || d.Unchanged != 2 {
		t.Fatalf("the export differs from what it was made of: %+v", d)
	}
}

func TestParseRefusesWhatIsNotACatalogue(t *testing.T) {
	for _, raw := range []string{`[1]`, `"x"`, `{"m":{"input_cost_per_token":"0.1"}}`, `{"m":{"input_cost_per_token":-1}}`,
		`{"format":"turnpike","models":[1]}`} {
		if _, err := Parse([]byte(raw)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%s) = %v, want ErrInvalid", raw, err)
		}
	}
}

func ratio(v float64) *float64 { return &v }

func TestCompareHoldsBackSuspiciousChanges(t *testing.T) {
	prices := []store.ModelPrice{
		{Name: "steady", InputPerMTok: 1, OutputPerMTok: 2},
		{Name: "cheaper", InputPerMTok: 1, OutputPerMTok: 4},
		{Name: "jump", InputPerMTok: 1, OutputPerMTok: 1, CacheReadPerMTok: 1},
		{Name: "unlisted", InputPerMTok: 1},
		{Name: "gift", Free: true},
	}
	cat := Catalogue{
		"steady":  {"input_per_mtok": 1, "output_per_mtok": 2},
		"cheaper": {"input_per_mtok": 0.5, "output_per_mtok": 4.0 / 3, "cache_read_per_mtok": 0.5},
		"jump":    {"input_per_mtok": 3.5, "output_per_mtok": 0, "cache_read_per_mtok": 0.25},
		"gift":    {"input_per_mtok": 1},
		"wanted":  {"input_per_mtok": 2},
		"other":   {"input_per_mtok": 9},
	}
	d := Compare(prices, cat, []string{"wanted", "absent"}, 0)
	wantChanged := []Change{
		{Model: "cheaper", Field: "input_per_mtok", Old: 1, New: 0.5, Ratio: ratio(0.5)},
		{Model: "cheaper", Field: "output_per_mtok", Old: 4, New: 4.0 / 3, Ratio: ratio(1.0 / 3)},
		{Model: "cheaper", Field: "cache_read_per_mtok", Old: 0, New: 0.5, Ratio: ratio(0.5)},
	}
	wantSuspicious := []Change{
		{Model: "jump", Field: "input_per_mtok", Old: 1, New: 3.5, Ratio: ratio(3.5)},
		{Model: "jump", Field: "output_per_mtok", Old: 1, New: 0, Ratio: ratio(0)},
		{Model: "jump", Field: "cache_read_per_mtok", Old: 1, New: 0.25, Ratio: ratio(0.25)},
	}
	if !reflect.DeepEqual(d.Changed, wantChanged) {
		t.Errorf("changed %s\nwant    %s", show(d.Changed), show(wantChanged))
	}
	if !reflect.DeepEqual(d.Suspicious, wantSuspicious) {
		t.Errorf("suspicious %s\nwant       %s", show(d.Suspicious), show(wantSuspicious))
	}
	if d.Unchanged != 1 || !reflect.DeepEqual(d.Missing, []string{"absent", "unlisted"}) ||
		len(d.Added) != 1 || d.Added[0].Model != "wanted" {
		t.Errorf("unchanged %d missing %v added %v", d.Unchanged, d.Missing, d.Added)
	}

	// cache_read 1 → 0.25 is a factor 4: suspicious at the default 3, not at 5.
	if d5 := Compare(prices, cat, nil, 5); len(d5.Suspicious) != 1 || d5.Suspicious[0].Field != "output_per_mtok" {
		t.Errorf("at max ratio 5 suspicious %s, want only the change to zero", show(d5.Suspicious))
	}
	// At the ratio exactly is not above it.
	if d := Compare([]store.ModelPrice{{Name: "x", InputPerMTok: 1}}, Catalogue{"x": {"input_per_mtok": 3}}, nil, 3); len(d.Suspicious) != 0 {
		t.Errorf("a change by exactly the ratio is suspicious: %s", show(d.Suspicious))
	}
}

// A field that was unset is measured against the price that applied in
// its place (CONTRACT §13): setting it far from that is suspicious.
func TestSettingAnUnsetFieldFarFromItsEffectivePriceIsSuspicious(t *testing.T) {
	live := store.ModelPrice{Name: "m", InputPerMTok: 2, OutputPerMTok: 8}
	cases := []struct {
		field      string
		value      float64
		suspicious bool
		ratio      float64
	}{
		{"batch_input_per_mtok", 1e-9, true, 1e-9},     // half of 2 applied
		{"batch_input_per_mtok", 1, false, 1},          // exactly half the live price
		{"batch_output_per_mtok", 4000, true, 1000},    // half of 8 applied
		{"batch_output_per_mtok", 3, false, 0.75},      // near half the live price
		{"cache_read_per_mtok", 1e-9, true, 5e-10},     // the input price applied
		{"cache_read_per_mtok", 1, false, 0.5},         // half the input price
		{"cache_write_per_mtok", 2.5, false, 1.25},     // near the input price
		{"cache_write_per_mtok", 100, true, 50},        // far above it
		{"reasoning_per_mtok", 0.001, true, 0.001 / 8}, // the output price applied
		{"per_call", 0.01, false, 0},                   // nothing applied in its place
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s=%g", tc.field, tc.value), func(t *testing.T) {
			d := Compare([]store.ModelPrice{live}, Catalogue{"m": {tc.field: tc.value}}, nil, 3)
			list := d.Changed
			if tc.suspicious {
				list = d.Suspicious
			}
			if len(list) != 1 || len(d.Changed)+len(d.Suspicious) != 1 {
				t.Fatalf("changed %s suspicious %s; want it suspicious: %v", show(d.Changed), show(d.Suspicious), tc.suspicious)
			}
			c := list[0]
			if c.Old != 0 || c.New != tc.value {
				t.Fatalf("change %+v", c)
			}
			if (tc.ratio == 0) != (c.Ratio == nil) || (c.Ratio != nil && math.Abs(*c.Ratio-tc.ratio) > 1e-12*tc.ratio) {
				t.Fatalf("ratio %v, want %v", c.Ratio, tc.ratio)
			}
		})
	}
}

func TestUpdatedMakesOnlyAcceptedChangesAndKeepsTheRest(t *testing.T) {
	prices := []store.ModelPrice{{Name: "jump", InputPerMTok: 1, OutputPerMTok: 1, CacheReadPerMTok: 1, Fallbacks: []string{"b"},
		Tiers: []store.PriceTier{{AboveInputTokens: 10, InputPerMTok: 2}}}}
	cat := Catalogue{"jump": {"input_per_mtok": 10, "cache_read_per_mtok": 0.5}, "new": {"output_per_mtok": 2}}
	d := Compare(prices, cat, []string{"new"}, 0)
	held := d.Updated(prices, false)
	want := []store.ModelPrice{
		{Name: "jump", InputPerMTok: 1, OutputPerMTok: 1, CacheReadPerMTok: 0.5, Fallbacks: []string{"b"}, Tiers: prices[0].Tiers},
		{Name: "new", OutputPerMTok: 2},
	}
	if !reflect.DeepEqual(held, want) {
		t.Errorf("without accepting: %+v\nwant %+v", held, want)
	}
	want[0].InputPerMTok = 10
	if got := d.Updated(prices, true); !reflect.DeepEqual(got, want) {
		t.Errorf("accepting: %+v\nwant %+v", got, want)
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
