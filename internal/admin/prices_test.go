package admin

import (
	"testing"
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
