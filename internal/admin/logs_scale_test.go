package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
)

func TestUsageReportExportAndCursorPages(t *testing.T) {
	e := newEnv(t)
	if _, err := e.d.Billing.Credit(context.Background(), billing.Credit{UserID: e.ids["bob"], Delta: 100, Note: "fixture"}); err != nil {
		t.Fatal(err)
	}
	e.settleCall("alice", 7, "gpt-4o-mini", 30)
	e.settleCall("alice", 8, "claude", 20)
	e.settleCall("bob", 7, "gpt-4o-mini", 10)
	e.run([]scenario{
		{name: "usage by model answers each model's calls and quota", who: "root", method: "GET",
			path: "/api/reports/usage?group_by=model&granularity=hour", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				got := map[string]float64{}
				for _, it := range items(t, r) {
					got[it["key"].(string)] += it["quota"].(float64)
					if _, ok := it["cache_hit_ratio"]; !ok {
						t.Fatalf("no cache_hit_ratio: %s", r.raw)
					}
				}
				if got["gpt-4o-mini"] != 40 || got["claude"] != 20 {
					t.Fatalf("usage by model: %s", r.raw)
				}
			}},
		{name: "an unknown grouping is 400", who: "root", method: "GET", path: "/api/reports/usage?group_by=planet", status: 400},
		{name: "an unknown granularity is 400", who: "root", method: "GET", path: "/api/reports/usage?granularity=week", status: 400},
		{name: "a plain user reads its own usage only, without the upstream cost", who: "alice", method: "GET",
			path: "/api/reports/usage?group_by=user", status: 200,
			check: func(t *testing.T, e *env, r response) {
				var quota float64
				for _, it := range items(t, r) {
					quota += it["quota"].(float64)
					if _, ok := it["upstream_cost_usd"]; ok || it["key"] != fmt.Sprint(e.ids["alice"]) {
						t.Fatalf("alice's usage report: %s", r.raw)
					}
				}
				if quota != 50 {
					t.Fatalf("alice's quota %v, want 50: %s", quota, r.raw)
				}
			}},
		{name: "a page names the next page's cursor", who: "root", method: "GET", path: "/api/logs?type=consume&page_size=2", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				var body struct {
					Items      []map[string]any `json:"items"`
					Total      int              `json:"total"`
					TotalExact bool             `json:"total_exact"`
					NextCursor int64            `json:"next_cursor"`
				}
				if err := json.Unmarshal([]byte(r.raw), &body); err != nil || body.Total != 3 || !body.TotalExact ||
					body.NextCursor != int64(body.Items[1]["id"].(float64)) {
					t.Fatalf("page: %s", r.raw)
				}
			}},
		{name: "a user exports only its own rows", who: "alice", method: "GET", path: "/api/logs/export?type=consume&format=csv", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				lines := strings.Split(strings.TrimSpace(r.raw), "\n")
				if len(lines) != 3 || !strings.Contains(lines[1], ",gpt-4o-mini,") || !strings.Contains(lines[2], ",claude,") {
					t.Fatalf("export: %q", r.raw)
				}
			}},
		{name: "a CSV export starts with its header", who: "root", method: "GET", path: "/api/logs/export?type=consume&format=csv", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				lines := strings.Split(strings.TrimSpace(r.raw), "\n")
				if len(lines) != 4 || !strings.HasPrefix(lines[0], "id,type,user_id") {
					t.Fatalf("csv: %q", r.raw)
				}
			}},
		{name: "an unknown export format is 400", who: "root", method: "GET", path: "/api/logs/export?format=xml", status: 400},
	})
	// JSON lines: one row object per line (the harness reads one JSON
	// document, so this one is read here).
	req := httptest.NewRequest("GET", "/api/logs/export?type=consume", nil)
	req.Header.Set("Authorization", "Bearer "+testRootToken)
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if rec.Code != 200 || len(lines) != 3 || rec.Header().Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("jsonl export: %d %q", rec.Code, rec.Body.String())
	}
	for _, l := range lines {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil || row["type"] != "consume" {
			t.Fatalf("jsonl line %q: %v", l, err)
		}
	}
}
