package admin

import (
	"github.com/turnpike-gw/turnpike/internal/billing"

	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

const providerCSV = "date,model,requests,input_tokens,output_tokens,cost_usd\n2026-03-01,gpt-x,2,2000,200,2.01\n"

func TestReportScenarios(t *testing.T) {
	e := newEnv(t)
	r := e.do("admin", "POST", "/api/channels", `{"name":"up","type":"openai","base_url":"http://127.0.0.1:9101"}`)
	if r.status != 200 {
		t.Fatalf("create channel: %d %s", r.status, r.raw)
	}
	e.ids["ch"] = int64(r.body["id"].(float64))
	if _, err := e.d.Billing.Credit(context.Background(), billing.Credit{UserID: e.ids["alice"], Delta: 1000, Note: "test"}); err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "an admin reads the margin", who: "admin", method: "GET", path: "/api/reports/margin?group_by=model", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				if _, ok := r.body["items"].([]any); !ok {
					t.Fatalf("no items list: %s", r.raw)
				}
			}},
		{name: "a user cannot read the margin", who: "alice", method: "GET", path: "/api/reports/margin", status: 403},
		{name: "an unknown grouping is 400", who: "admin", method: "GET", path: "/api/reports/margin?group_by=colour", status: 400,
			want: map[string]any{"error.code": "invalid_request"}},
		{name: "a window that is not a time is 400", who: "admin", method: "GET", path: "/api/reports/margin?since=yesterday", status: 400},
		{name: "a window given in unix seconds", who: "admin", method: "GET", path: "/api/reports/margin?since=1700000000&until=1700003600", status: 200},
		{name: "reconciliation is root's", who: "admin", method: "GET", path: "/api/reports/reconcile", status: 403},
		{name: "the books of a fresh gateway reconcile", who: "root", method: "GET", path: "/api/reports/reconcile", status: 200,
			want: map[string]any{"ok": true, "open_holds": 0, "differences": []any{}},
			check: func(t *testing.T, e *env, r response) {
				users := r.body["users"].([]any)
				if len(users) != 1 || users[0].(map[string]any)["user_id"].(float64) != float64(e.ids["alice"]) {
					t.Fatalf("users = %v, want alice, whose top-up is in the window", users)
				}
			}},
		{name: "since after until is 400", who: "root", method: "GET", path: "/api/reports/reconcile?since=1700003600&until=1700000000", status: 400},
		{name: "a provider export is compared", who: "root", method: "POST", path: "/api/reports/reconcile/provider?channel_id={ch}", body: providerCSV, status: 200,
			want: map[string]any{"flagged": 1, "channel_id": "{ch}"}},
		{name: "a bad export is 400 naming the line", who: "root", method: "POST", path: "/api/reports/reconcile/provider?channel_id={ch}",
			body: "date,model,requests,input_tokens,output_tokens,cost_usd\n2026-3-1,gpt-x,1,1,1,1\n", status: 400,
			want: map[string]any{"error.message": `line 2: date "2026-3-1" is not a UTC day such as 2026-01-31`}},
		{name: "an export without its header is 400", who: "root", method: "POST", path: "/api/reports/reconcile/provider?channel_id={ch}",
			body: "2026-03-01,gpt-x,1,1,1,1\n", status: 400},
		{name: "a missing channel is 404", who: "root", method: "POST", path: "/api/reports/reconcile/provider?channel_id=999", body: providerCSV, status: 404},
		{name: "the channel is required", who: "root", method: "POST", path: "/api/reports/reconcile/provider", body: providerCSV, status: 400},
		{name: "the provider comparison is root's", who: "admin", method: "POST", path: "/api/reports/reconcile/provider?channel_id={ch}", body: providerCSV, status: 403},
	})
}

// An administrator's margin report lists itself and the users below it,
// never root's or another administrator's accounts or keys; root's lists
// everyone.
func TestTheMarginByUserOrKeyShowsAnAdministratorOnlyWhomItManages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	keys := map[string]int64{}
	var rows []store.UsageLog
	for _, who := range []string{"root", "admin", "admin2", "alice"} {
		tok := &store.Token{UserID: e.ids[who], Name: who + "-key", KeyHash: "hash-" + who, KeyMasked: "sk-...", Quota: -1, Status: store.StatusEnabled}
		if err := e.d.Store.Tokens().Create(ctx, tok); err != nil {
			t.Fatal(err)
		}
		keys[who] = tok.ID
		rows = append(rows, store.UsageLog{Type: store.LogConsume, UserID: e.ids[who], TokenID: tok.ID, Model: "m", Quota: 10,
			Other: json.RawMessage(`{"upstream_cost_usd":"0.00001"}`)})
	}
	if err := e.d.Store.Logs().Insert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	listed := func(r response) map[string]bool {
		out := map[string]bool{}
		for _, it := range r.body["items"].([]any) {
			out[it.(map[string]any)["key"].(string)] = true
		}
		return out
	}
	cases := []struct {
		who, by string
		want    map[string]bool
	}{
		{"admin", "user", map[string]bool{itoa(e.ids["admin"]): true, itoa(e.ids["alice"]): true}},
		{"admin", "token", map[string]bool{itoa(keys["admin"]): true, itoa(keys["alice"]): true}},
		{"root", "token", map[string]bool{itoa(keys["root"]): true, itoa(keys["admin"]): true, itoa(keys["admin2"]): true, itoa(keys["alice"]): true}},
	}
	for _, tc := range cases {
		r := e.do(tc.who, "GET", "/api/reports/margin?group_by="+tc.by, "")
		if r.status != 200 {
			t.Fatalf("%s by %s: %d %s", tc.who, tc.by, r.status, r.raw)
		}
		if got := listed(r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s's margin by %s lists %v, want %v", tc.who, tc.by, got, tc.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
