package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// settleCall charges one finished call the way the relay does; its log row
// is still queued in the billing writer when this returns.
func (e *env) settleCall(user string, channelID int64, model string, charge int64) {
	e.t.Helper()
	ctx := context.Background()
	acct := billing.Account{UserID: e.ids[user]}
	h, err := e.d.Billing.Reserve(ctx, acct, e.d.Billing.NewRequestKey("t"), charge)
	if err != nil {
		e.t.Fatalf("reserve: %v", err)
	}
	h.Settle(ctx, charge, store.UsageLog{UserID: acct.UserID, ChannelID: channelID, Model: model, PromptTokens: 10, CompletionTokens: 5})
}

func TestLogScenarios(t *testing.T) {
	e := newEnv(t)
	if _, err := e.d.Billing.Credit(context.Background(), billing.Credit{UserID: e.ids["bob"], Delta: 100, Note: "fixture"}); err != nil {
		t.Fatal(err)
	}
	e.settleCall("alice", 7, "gpt-4o-mini", 30)
	e.settleCall("alice", 8, "claude", 20)
	e.settleCall("bob", 7, "gpt-4o-mini", 10)
	e.run([]scenario{
		{name: "anonymous cannot read logs", method: "GET", path: "/api/logs", status: 401},
		{name: "just-finished calls are listed at once, newest first", who: "alice", method: "GET", path: "/api/logs?type=consume", status: 200,
			check: func(t *testing.T, _ *env, r response) {
				list := items(t, r)
				if len(list) != 2 || list[0]["model"] != "claude" || list[0]["quota"] != float64(20) {
					t.Fatalf("alice's consume logs: %s", r.raw)
				}
				for _, k := range []string{"id", "type", "user_id", "token_id", "channel_id", "model", "prompt_tokens", "completion_tokens", "quota", "latency_ms", "created_at"} {
					if _, ok := list[0][k]; !ok {
						t.Fatalf("log item lacks %s: %s", k, r.raw)
					}
				}
			}},
		{name: "a user cannot read another user's logs", who: "alice", method: "GET", path: "/api/logs?type=consume&user_id={bob}", status: 200,
			check: wantTotal(2)},
		{name: "an admin sees every user's", who: "admin", method: "GET", path: "/api/logs?type=consume", status: 200, check: wantTotal(3)},
		{name: "filter by user", who: "admin", method: "GET", path: "/api/logs?type=consume&user_id={bob}", status: 200, check: wantTotal(1)},
		{name: "filter by model", who: "root", method: "GET", path: "/api/logs?model=gpt-4o-mini", status: 200, check: wantTotal(2)},
		{name: "filter by channel", who: "root", method: "GET", path: "/api/logs?channel_id=8", status: 200, check: wantTotal(1)},
		{name: "a non-numeric filter is 400", who: "root", method: "GET", path: "/api/logs?channel_id=eight", status: 400},
		{name: "the used quota is current", who: "admin", method: "GET", path: "/api/users/{alice}", status: 200,
			want: map[string]any{"used_quota": 50, "quota": 950}},
	})
}

// What a call cost the operator (other.upstream_cost_usd) reveals the
// operator's discount: a plain user never reads it in its own rows, an
// administrator does (CONTRACT §13).
func TestAPlainUserNeverSeesTheUpstreamCostOfItsRows(t *testing.T) {
	e := newEnv(t)
	row := store.UsageLog{Type: store.LogConsume, UserID: e.ids["alice"], ChannelID: 7, Model: "gpt-4o-mini", Quota: 30,
		Other: json.RawMessage(`{"upstream_cost_usd":"0.0012","strategy":"weighted","affinity":"miss"}`)}
	if err := e.d.Store.Logs().Insert(context.Background(), []store.UsageLog{row}); err != nil {
		t.Fatal(err)
	}
	// The row's own id: the fixture's top-up rows are written by the
	// billing writer in the background and may come first (they did under
	// the race detector), so the row is not always id 1.
	rows, _, err := e.d.Store.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume, UserID: e.ids["alice"]}, store.Page{Page: 1, PageSize: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("the inserted row: %v, %v", rows, err)
	}
	otherOf := func(t *testing.T, r response) map[string]any {
		if list, ok := r.body["items"].([]any); ok {
			return list[0].(map[string]any)["other"].(map[string]any)
		}
		return r.body["other"].(map[string]any)
	}
	for _, path := range []string{"/api/logs?type=consume", fmt.Sprintf("/api/logs/%d", rows[0].ID)} {
		e.run([]scenario{
			{name: "alice " + path, who: "alice", method: "GET", path: path, status: 200, check: func(t *testing.T, _ *env, r response) {
				o := otherOf(t, r)
				if _, ok := o["upstream_cost_usd"]; ok || o["strategy"] != "weighted" {
					t.Fatalf("a plain user's row: other %v", o)
				}
			}},
			{name: "admin " + path, who: "admin", method: "GET", path: path, status: 200, check: func(t *testing.T, _ *env, r response) {
				if o := otherOf(t, r); o["upstream_cost_usd"] != "0.0012" {
					t.Fatalf("an administrator's view: other %v", o)
				}
			}},
		})
	}
}
