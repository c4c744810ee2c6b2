package admin

import (
	"testing"
	"time"
)

func TestPriceHistoryScenarios(t *testing.T) {
	e := newEnv(t)
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	e.run([]scenario{
		{name: "the first price is version 1 by its actor", who: "admin", method: "PUT", path: "/api/models/vendor/m",
			body: `{"input_per_mtok":1,"output_per_mtok":2,"batch_input_per_mtok":0.5,"batch_output_per_mtok":1}`, status: 200,
			want: map[string]any{"version": 1, "source": "api", "actor": "admin", "batch_input_per_mtok": 0.5, "batch_output_per_mtok": 1}},
		{name: "a price from later answers the new version", who: "root", method: "PUT", path: "/api/models/vendor/m",
			body: `{"input_per_mtok":3,"output_per_mtok":4,"effective_from":"` + later + `"}`, status: 200,
			want: map[string]any{"version": 2, "input_per_mtok": 3, "effective_from": later, "actor": "root-token"}},
		{name: "until then the model reads at version 1 and billing charges it", who: "admin", method: "GET", path: "/api/models/vendor/m", status: 200,
			want: map[string]any{"version": 1, "input_per_mtok": 1},
			check: func(t *testing.T, e *env, _ response) {
				now, err := e.d.Billing.Price("vendor/m")
				if err != nil || now.Version != 1 {
					t.Fatalf("billing now: %+v %v, want version 1", now, err)
				}
				then, err := e.d.Billing.PriceAt("vendor/m", time.Now().Add(2*time.Hour))
				if err != nil || then.Version != 2 {
					t.Fatalf("billing in two hours: %+v %v, want version 2", then, err)
				}
			}},
		{name: "an effective_from in the past means now", who: "admin", method: "PUT", path: "/api/models/vendor/m",
			body: `{"input_per_mtok":5,"effective_from":"2020-01-01T00:00:00Z"}`, status: 200,
			check: func(t *testing.T, _ *env, r response) {
				from, err := time.Parse(time.RFC3339Nano, r.body["effective_from"].(string))
				if err != nil || time.Since(from) > time.Minute || r.body["version"] != float64(3) {
					t.Fatalf("answer %s: want version 3 effective now", r.raw)
				}
			}},
		{name: "history lists every version newest first with every price field", who: "admin", method: "GET",
			path: "/api/models/vendor/m/history", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				list := items(t, r)
				if len(list) != 3 || r.body["total"] != float64(3) {
					t.Fatalf("history %s", r.raw)
				}
				for i, want := range []float64{3, 2, 1} {
					if list[i]["version"] != want {
						t.Fatalf("item %d is version %v, want %v: %s", i, list[i]["version"], want, r.raw)
					}
				}
				for _, k := range []string{"version", "effective_from", "input_per_mtok", "output_per_mtok", "cache_read_per_mtok",
					"cache_write_per_mtok", "reasoning_per_mtok", "batch_input_per_mtok", "batch_output_per_mtok", "per_call",
					"tiers", "free", "source", "actor"} {
					if _, ok := list[2][k]; !ok {
						t.Errorf("history item lacks %s: %v", k, list[2])
					}
				}
				if list[2]["batch_output_per_mtok"] != float64(1) || list[1]["effective_from"] != later || list[2]["actor"] != "admin" {
					t.Errorf("history %s", r.raw)
				}
			}},
		{name: "a null effective_from means now", who: "admin", method: "PUT", path: "/api/models/other",
			body: `{"input_per_mtok":1,"effective_from":null}`, status: 200, want: map[string]any{"version": 1}},
		{name: "a bad effective_from is 400", who: "admin", method: "PUT", path: "/api/models/vendor/m",
			body: `{"input_per_mtok":1,"effective_from":"tomorrow"}`, status: 400, want: map[string]any{"error.code": "invalid_field"}},
		{name: "a user cannot read the history", who: "alice", method: "GET", path: "/api/models/vendor/m/history", status: 403},
		{name: "a deleted model keeps its history", who: "admin", method: "DELETE", path: "/api/models/vendor/m", status: 200,
			check: func(t *testing.T, e *env, _ response) {
				r := e.do("admin", "GET", "/api/models/vendor/m/history", "")
				if r.status != 200 || len(items(t, r)) != 3 {
					t.Fatalf("history after delete: %d %s", r.status, r.raw)
				}
			}},
		{name: "a model never priced has no history", who: "admin", method: "GET", path: "/api/models/none/history", status: 404},
	})
}
