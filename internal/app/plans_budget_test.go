package app_test

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// A call a plan pays costs the balance nothing, so it spends nothing of the
// period budgets (CONTRACT §10 budgets are money caps on spend): neither
// when reserved and settled, nor when a budget is loaded afresh from the
// usage rows after a restart. A call that overflows a spent window to the
// balance is spend like any other and counts, on the key and on the user.
func TestPlanPaidCallsSpendNoBudgetAndOverflowToTheBalanceDoes(t *testing.T) {
	var calls atomic.Int64
	up := usageUpstream(t, &calls, 0)
	g, alice, cookie := planGateway(t, up.URL)
	userPath := fmt.Sprintf("/api/users/%d", alice)
	if code, u := g.Do(t, "PATCH", userPath, "root-secret", map[string]any{"period_quota": 100_000, "period": "day"}); code != 200 {
		t.Fatalf("user budget: %d %v", code, u)
	}
	code, k := asUser(t, g, cookie, "POST", "/api/tokens", map[string]any{"name": "k"})
	if code != 200 {
		t.Fatalf("key: %d %v", code, k)
	}
	key, keyPath := k["key"].(string), fmt.Sprintf("/api/tokens/%d", int64(k["id"].(float64)))
	if code, body := g.Do(t, "PATCH", keyPath, "root-secret", map[string]any{"period_quota": 100_000, "period": "day"}); code != 200 {
		t.Fatalf("key budget: %d %v", code, body)
	}
	used := func(path string) float64 {
		t.Helper()
		_, v := g.Do(t, "GET", path, "root-secret", nil)
		return v["period_used_quota"].(float64)
	}
	send := func(what string) {
		t.Helper()
		if resp := dialects(t)[0].send(g, key, "big:1000"); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", what, resp.StatusCode, readJSON(t, resp))
		} else {
			resp.Body.Close()
		}
	}
	for i := 0; i < 3; i++ { // 3 × 1,000 spends the window of 3,000
		send("covered call")
	}
	for _, path := range []string{userPath, keyPath} {
		if u := used(path); u != 0 {
			t.Errorf("%s: period_used_quota %v after plan-paid calls only, want 0", path, u)
		}
	}
	send("overflowing call")
	g.ConsumedQuotas(t, "root-secret", "m", 4) // every row is stored
	check := func(when string) {
		t.Helper()
		for _, path := range []string{userPath, keyPath} {
			if u := used(path); u != 1000 {
				t.Errorf("%s, %s: period_used_quota %v, want the overflowing call's 1000 alone", when, path, u)
			}
		}
	}
	check("live")
	g.Restart() // the budgets are loaded again from the usage rows
	check("after a restart")
}
