package admin

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
)

func TestChannelCostScenarios(t *testing.T) {
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", `{"name":"cheap","type":"openai","base_url":"http://127.0.0.1:9101","cost":{"discount":0.8}}`)
	if r.status != 200 {
		t.Fatalf("create channel: %d %s", r.status, r.raw)
	}
	e.ids["ch"] = int64(r.body["id"].(float64))
	e.run([]scenario{
		{name: "the discount reads back", who: "admin", method: "GET", path: "/api/channels/{ch}", status: 200,
			want: map[string]any{"cost.discount": 0.8}},
		{name: "own prices replace the cost", who: "admin", method: "PATCH", path: "/api/channels/{ch}",
			body: `{"cost":{"prices":{"gpt-4o":{"input_per_mtok":2,"output_per_mtok":8,"tiers":[{"above_input_tokens":200000,"input_per_mtok":4}]}}}}`, status: 200,
			want: map[string]any{"cost.prices.gpt-4o.input_per_mtok": 2, "cost.prices.gpt-4o.output_per_mtok": 8, "cost.discount": nil}},
		{name: "other fields leave the cost alone", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"priority":2}`, status: 200,
			want: map[string]any{"cost.prices.gpt-4o.input_per_mtok": 2}},
		{name: "null removes the cost", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"cost":null}`, status: 200,
			want: map[string]any{"cost": nil}},
		{name: "an empty cost is no cost", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"cost":{}}`, status: 200,
			want: map[string]any{"cost": nil}},
		{name: "a misspelt member is 400", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"cost":{"discont":0.8}}`, status: 400},
		{name: "a negative discount is 400 naming the field", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"cost":{"discount":-1}}`, status: 400,
			want: map[string]any{"error.code": "invalid_field"}},
		{name: "a negative own price is 400", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"cost":{"prices":{"m":{"input_per_mtok":-2}}}}`, status: 400},
		{name: "a price of the wrong kind is 400", who: "admin", method: "PATCH", path: "/api/channels/{ch}", body: `{"cost":{"prices":{"m":{"input_per_mtok":"2"}}}}`, status: 400},
		{name: "a user cannot set a cost", who: "alice", method: "PATCH", path: "/api/channels/{ch}", body: `{"cost":{"discount":0.1}}`, status: 403},
	})
}

func TestSeedChannelCostIsCheckedLikeTheAPIs(t *testing.T) {
	tests := []struct {
		name    string
		cost    map[string]any
		wantErr bool
		want    float64
	}{
		{"a discount", map[string]any{"discount": 0.7}, false, 0.7},
		{"own prices", map[string]any{"prices": map[string]any{"m": map[string]any{"input_per_mtok": 1}}}, false, 0},
		{"an unknown member", map[string]any{"rebate": 0.7}, true, 0},
		{"a discount above ten", map[string]any{"discount": 11}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := channelFromSeed(config.SeedChannel{Name: "c", Type: "openai", Cost: tt.cost})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if c.Cost == nil {
				t.Fatal("cost dropped")
			}
			if tt.want != 0 && (c.Cost.Discount == nil || *c.Cost.Discount != tt.want) {
				t.Fatalf("discount = %v, want %v", c.Cost.Discount, tt.want)
			}
		})
	}
}
