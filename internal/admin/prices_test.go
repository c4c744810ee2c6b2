package admin

import (
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/ir"
)

func TestPriceScenarios(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "a user cannot set prices", who: "alice", method: "PUT", path: "/api/models/gpt-4o-mini", body: `{"input_per_mtok":1}`, status: 403},
		{name: "an admin sets a token price", who: "admin", method: "PUT", path: "/api/models/gpt-4o-mini",
			body: `{"input_per_mtok":0.15,"output_per_mtok":0.6}`, status: 200,
			want: map[string]any{"name": "gpt-4o-mini", "input_per_mtok": 0.15, "output_per_mtok": 0.6}},
		{name: "a per-call price with extra", who: "admin", method: "PUT", path: "/api/models/dall-e-3",
			body: `{"per_call":0.04,"extra":{"sizes":{"1024x1792":2}}}`, status: 200,
			want: map[string]any{"per_call": 0.04, "extra": map[string]any{"sizes": map[string]any{"1024x1792": 2}}}},
		{name: "a model name with a slash", who: "admin", method: "PUT", path: "/api/models/meta/llama-3", body: `{"free":true}`, status: 200,
			want: map[string]any{"name": "meta/llama-3", "free": true}},
		{name: "reading a model with a slash", who: "admin", method: "GET", path: "/api/models/meta/llama-3", status: 200,
			want: map[string]any{"free": true}},
		{name: "a negative price is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"input_per_mtok":-1}`, status: 400},
		{name: "a string price is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"per_call":"0.1"}`, status: 400,
			want: map[string]any{"error.message": "per_call must be a number"}},
		{name: "extra must be an object", who: "admin", method: "PUT", path: "/api/models/x", body: `{"extra":[1]}`, status: 400},
		{name: "a body name that differs from the path is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"name":"y"}`, status: 400},
		{name: "an unknown price member is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"ratio":2}`, status: 400},
		{name: "prices are listed by name", who: "admin", method: "GET", path: "/api/models", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				list := items(t, r)
				if len(list) != 3 || list[0]["name"] != "dall-e-3" || r.body["total"] != float64(3) {
					t.Fatalf("list %s", r.raw)
				}
			}},
		{name: "a page of prices", who: "admin", method: "GET", path: "/api/models?page=2&page_size=2", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if len(items(t, r)) != 1 || r.body["total"] != float64(3) {
					t.Fatalf("page %s", r.raw)
				}
			}},
		{name: "a user cannot list prices", who: "alice", method: "GET", path: "/api/models", status: 403},
		{name: "billing sees a new price at once", who: "admin", method: "PUT", path: "/api/models/fresh", body: `{"per_call":1}`, status: 200,
			check: func(t *testing.T, e *env, _ response) {
				if _, err := e.d.Billing.Price("fresh"); err != nil {
					t.Fatalf("billing does not know the new price: %v", err)
				}
			}},
		{name: "an admin deletes a price", who: "admin", method: "DELETE", path: "/api/models/fresh", status: 200,
			check: func(t *testing.T, e *env, _ response) {
				if _, err := e.d.Billing.Price("fresh"); err == nil {
					t.Fatal("billing still prices a deleted model")
				}
			}},
		{name: "deleting a missing price is 404", who: "admin", method: "DELETE", path: "/api/models/fresh", status: 404},
		{name: "reading a missing price is 404", who: "admin", method: "GET", path: "/api/models/none", status: 404},
	})
}

func TestGroupScenarios(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "an admin sets a ratio", who: "admin", method: "PUT", path: "/api/groups/vip", body: `{"ratio":0.5}`, status: 200,
			want: map[string]any{"name": "vip", "ratio": 0.5}},
		{name: "billing applies the ratio", who: "admin", method: "GET", path: "/api/groups/vip", status: 200,
			check: func(t *testing.T, e *env, _ response) {
				if r := e.d.Billing.Ratio("vip"); r != 0.5 {
					t.Fatalf("billing ratio %v", r)
				}
			}},
		{name: "groups are listed", who: "admin", method: "GET", path: "/api/groups", status: 200, check: wantTotal(1)},
		{name: "a user cannot list groups", who: "alice", method: "GET", path: "/api/groups", status: 403},
		{name: "a missing ratio is 400", who: "admin", method: "PUT", path: "/api/groups/x", body: `{}`, status: 400},
		{name: "a negative ratio is 400", who: "admin", method: "PUT", path: "/api/groups/x", body: `{"ratio":-1}`, status: 400},
		{name: "a missing group is 404", who: "admin", method: "GET", path: "/api/groups/none", status: 404},
		{name: "an admin deletes a group", who: "admin", method: "DELETE", path: "/api/groups/vip", status: 200},
		{name: "deleting a missing group is 404", who: "admin", method: "DELETE", path: "/api/groups/vip", status: 404},
	})
}

func TestPriceReasoningAndTierScenarios(t *testing.T) {
	e := newEnv(t)
	put := func(name, body string, status int, want map[string]any) scenario {
		return scenario{name: name, who: "admin", method: "PUT", path: "/api/models/gemini-x", body: body, status: status, want: want}
	}
	bad := func(name, body, message string) scenario {
		return put(name, body, 400, map[string]any{"error.code": "invalid_field", "error.message": message})
	}
	sortedTiers := []any{
		map[string]any{"above_input_tokens": 200000, "input_per_mtok": 2.5, "output_per_mtok": 15},
		map[string]any{"above_input_tokens": 1000000, "cache_read_per_mtok": 0.5, "reasoning_per_mtok": 20},
	}
	e.run([]scenario{
		put("tiers sent out of order are stored sorted",
			`{"input_per_mtok":1.25,"output_per_mtok":10,"reasoning_per_mtok":12,"tiers":[`+
				`{"above_input_tokens":1000000,"cache_read_per_mtok":0.5,"reasoning_per_mtok":20},`+
				`{"above_input_tokens":200000,"input_per_mtok":2.5,"output_per_mtok":15}]}`,
			200, map[string]any{"reasoning_per_mtok": 12, "tiers": sortedTiers}),
		{name: "reading returns reasoning and tiers", who: "admin", method: "GET", path: "/api/models/gemini-x", status: 200,
			want: map[string]any{"input_per_mtok": 1.25, "reasoning_per_mtok": 12, "tiers": sortedTiers}},
		{name: "billing prices with the saved tiers", who: "admin", method: "GET", path: "/api/models/gemini-x", status: 200,
			check: func(t *testing.T, e *env, _ response) {
				p, err := e.d.Billing.Price("gemini-x")
				if err != nil {
					t.Fatal(err)
				}
				// 200,001 input at 2.5 + 100 output at 15 = $0.5015025 → 250,751.25 units at 500,000/$
				got, err := e.d.Billing.Charge(p, ir.Usage{InputTokens: 200_001, OutputTokens: 100}, nil, "default")
				if err != nil || got != 250751 {
					t.Fatalf("charge = %d, %v; want 250751", got, err)
				}
			}},
		put("a PUT without tiers clears them", `{"input_per_mtok":1}`, 200, map[string]any{"tiers": nil, "reasoning_per_mtok": nil}),
		put("null tiers are none", `{"input_per_mtok":1,"tiers":null}`, 200, map[string]any{"tiers": nil}),
		put("an empty list is none", `{"input_per_mtok":1,"tiers":[]}`, 200, map[string]any{"tiers": nil}),
		bad("a negative reasoning price", `{"reasoning_per_mtok":-1}`, "reasoning_per_mtok must be a non-negative number of US dollars"),
		bad("tiers that are not a list", `{"tiers":{"above_input_tokens":1}}`, "tiers must be a list of objects"),
		bad("a tier that is not an object", `{"tiers":[{"above_input_tokens":1,"input_per_mtok":1},3]}`, "tiers[1] must be an object"),
		bad("a tier without a threshold", `{"tiers":[{"input_per_mtok":1}]}`, "tiers[0].above_input_tokens is required"),
		bad("a null threshold", `{"tiers":[{"above_input_tokens":null,"input_per_mtok":1}]}`, "tiers[0].above_input_tokens must not be null"),
		bad("a zero threshold", `{"tiers":[{"above_input_tokens":10,"input_per_mtok":1},{"above_input_tokens":0,"input_per_mtok":1}]}`,
			"tiers[1].above_input_tokens must be a positive integer of at most 9007199254740991"),
		bad("a negative threshold", `{"tiers":[{"above_input_tokens":-5,"input_per_mtok":1}]}`,
			"tiers[0].above_input_tokens must be a positive integer of at most 9007199254740991"),
		bad("a threshold past 2^53", `{"tiers":[{"above_input_tokens":9007199254740992,"input_per_mtok":1}]}`,
			"tiers[0].above_input_tokens must be a positive integer of at most 9007199254740991"),
		bad("a fractional threshold", `{"tiers":[{"above_input_tokens":1.5,"input_per_mtok":1}]}`, "tiers[0].above_input_tokens must be an integer"),
		bad("a string threshold", `{"tiers":[{"above_input_tokens":"1000","input_per_mtok":1}]}`, "tiers[0].above_input_tokens must be an integer"),
		bad("a repeated threshold names the later tier", `{"tiers":[{"above_input_tokens":500,"input_per_mtok":1},`+
			`{"above_input_tokens":100,"input_per_mtok":2},{"above_input_tokens":500,"output_per_mtok":3}]}`,
			"tiers[2].above_input_tokens repeats the threshold of tiers[0]"),
		bad("a negative tier price", `{"tiers":[{"above_input_tokens":10,"input_per_mtok":1},{"above_input_tokens":20,"output_per_mtok":-2}]}`,
			"tiers[1].output_per_mtok must be a non-negative number of US dollars"),
		bad("a string tier price", `{"tiers":[{"above_input_tokens":10,"cache_write_per_mtok":"1"}]}`, "tiers[0].cache_write_per_mtok must be a number"),
		bad("an unknown tier member", `{"tiers":[{"above_input_tokens":10,"input_per_mtok":1,"per_call":1,"free":true}]}`,
			"tiers[0] has unknown field free, per_call; allowed fields are above_input_tokens, input_per_mtok, output_per_mtok, "+
				"cache_read_per_mtok, cache_write_per_mtok, reasoning_per_mtok"),
		bad("a tier without a price", `{"tiers":[{"above_input_tokens":10,"input_per_mtok":0}]}`,
			"tiers[0] must set at least one price above zero; a price left out is the base price"),
		bad("too many tiers", `{"tiers":[`+strings.Repeat(`{"above_input_tokens":1,"input_per_mtok":1},`, 16)+`{"above_input_tokens":1,"input_per_mtok":1}]}`,
			"tiers must hold at most 16 tiers"),
		{name: "a refused PUT leaves the saved price", who: "admin", method: "GET", path: "/api/models/gemini-x", status: 200,
			want: map[string]any{"input_per_mtok": 1, "tiers": nil}},
	})
}

func TestPriceAffinityAndRoutingScenarios(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "affinity and strategy are stored and shown as sent", who: "admin", method: "PUT", path: "/api/models/claude-x",
			body: `{"input_per_mtok":3,"affinity":{"enabled":true,"ttl_seconds":3600},"routing":{"strategy":"latency"}}`, status: 200,
			want: map[string]any{"affinity.enabled": true, "affinity.ttl_seconds": 3600, "routing.strategy": "latency"}},
		{name: "a member left out of affinity takes its default", who: "admin", method: "PUT", path: "/api/models/claude-y",
			body: `{"input_per_mtok":3,"affinity":{"enabled":false}}`, status: 200,
			want: map[string]any{"affinity.enabled": false, "affinity.ttl_seconds": 300}},
		{name: "a price without them shows none (the defaults)", who: "admin", method: "PUT", path: "/api/models/claude-z",
			body: `{"input_per_mtok":3}`, status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if _, ok := r.body["affinity"]; ok {
					t.Fatalf("affinity shown: %s", r.raw)
				}
				if _, ok := r.body["routing"]; ok {
					t.Fatalf("routing shown: %s", r.raw)
				}
			}},
		{name: "an unknown strategy is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"routing":{"strategy":"fastest"}}`, status: 400,
			want: map[string]any{"error.message": "routing.strategy must be one of weighted, least_busy, latency, cost"}},
		{name: "a ttl of zero is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"affinity":{"ttl_seconds":0}}`, status: 400},
		{name: "a fractional ttl is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"affinity":{"ttl_seconds":1.5}}`, status: 400},
		{name: "a ttl over a day is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"affinity":{"ttl_seconds":90000}}`, status: 400},
		{name: "enabled must be a boolean", who: "admin", method: "PUT", path: "/api/models/x", body: `{"affinity":{"enabled":"yes"}}`, status: 400},
		{name: "an unknown affinity member is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"affinity":{"per_key":true}}`, status: 400},
		{name: "affinity must be an object", who: "admin", method: "PUT", path: "/api/models/x", body: `{"affinity":true}`, status: 400},
		{name: "routing must be an object", who: "admin", method: "PUT", path: "/api/models/x", body: `{"routing":"cost"}`, status: 400},
	})
}
