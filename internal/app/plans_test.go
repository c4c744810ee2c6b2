package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// asUser makes one console request with a session cookie.
func asUser(t *testing.T, g *testkit.Gateway, c *http.Cookie, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, g.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// planGateway is the traffic gateway with a plan of one five-hour window
// of 3,000 covering model m, granted to alice; it answers alice's id and
// session.
func planGateway(t *testing.T, up string) (*testkit.Gateway, int64, *http.Cookie) {
	g := trafficGateway(t, up, 10_000_000, nil)
	code, plan := g.Do(t, "POST", "/api/plans", "root-secret", map[string]any{"name": "coder", "price_usd": 20, "period": "month",
		"windows": []map[string]any{{"hours": 5, "quota": 3000}}, "models": []string{"m"}, "priority": 1})
	if code != 200 {
		t.Fatalf("create plan: %d %v", code, plan)
	}
	_, users := g.Do(t, "GET", "/api/users?page_size=100", "root-secret", nil)
	var alice int64
	for _, u := range users["items"].([]any) {
		if m := u.(map[string]any); m["username"] == "alice" {
			alice = int64(m["id"].(float64))
		}
	}
	if code, body := g.Do(t, "POST", fmt.Sprintf("/api/users/%d/plans", alice), "root-secret", map[string]any{"plan_id": plan["id"]}); code != 200 {
		t.Fatalf("grant: %d %v", code, body)
	}
	return g, alice, g.Login(t, "alice", "pw-longer")
}

func balanceOf(t *testing.T, g *testkit.Gateway, id int64) float64 {
	_, u := g.Do(t, "GET", fmt.Sprintf("/api/users/%d", id), "root-secret", nil)
	return u["quota"].(float64)
}

func TestACoveredCallDrawsFromThePlanNotTheBalance(t *testing.T) {
	var calls atomic.Int64
	up := usageUpstream(t, &calls, 0)
	g, alice, cookie := planGateway(t, up.URL)
	ds := dialects(t)
	if code, k := asUser(t, g, cookie, "POST", "/api/tokens", map[string]any{"name": "k"}); code != 200 {
		t.Fatalf("key: %d %v", code, k)
	} else {
		key := k["key"].(string)
		resp := ds[0].send(g, key, "big:1000")
		if body := readJSON(t, resp); resp.StatusCode != 200 {
			t.Fatalf("covered call: %d %v", resp.StatusCode, body)
		}
	}
	if b := balanceOf(t, g, alice); b != 10_000_000 {
		t.Errorf("balance %v after a plan-paid call, want untouched", b)
	}
	_, held := asUser(t, g, cookie, "GET", "/api/user/plans", nil)
	items, _ := held["items"].([]any)
	if len(items) != 1 || held["plan_overflow"] != "balance" {
		t.Fatalf("user plans: %v", held)
	}
	w := items[0].(map[string]any)["windows"].([]any)[0].(map[string]any)
	if w["used"] != float64(1000) || w["quota"] != float64(3000) || w["resets_at"] == nil {
		t.Errorf("window: %v, want 1000 of 3000 used with a reset time", w)
	}
	quotas := g.ConsumedQuotas(t, "root-secret", "m", 1)
	_, logs := g.Do(t, "GET", "/api/logs?type=consume&model=m", "root-secret", nil)
	row := logs["items"].([]any)[0].(map[string]any)
	other := row["other"].(map[string]any)
	plan, _ := other["plan"].(map[string]any)
	if quotas[0] != 1000 || plan == nil || plan["id"] == nil || plan["window"] == nil {
		t.Errorf("row quota %d other %v: want 1000 and other.plan {id, window}", quotas[0], other)
	}
	// The books agree: the plan-drawn row moved no balance and the window
	// counts it.
	_, rep := g.Do(t, "GET", "/api/reports/reconcile", "root-secret", nil)
	if rep["ok"] != true || len(rep["plans"].([]any)) != 1 {
		t.Errorf("reconcile: %v", rep)
	}
}

func TestASpentWindowMakesAWaitingUserWaitInEachDialect(t *testing.T) {
	var calls atomic.Int64
	up := usageUpstream(t, &calls, 0)
	g, alice, cookie := planGateway(t, up.URL)
	code, k := asUser(t, g, cookie, "POST", "/api/tokens", map[string]any{"name": "k"})
	if code != 200 {
		t.Fatalf("key: %d %v", code, k)
	}
	key := k["key"].(string)
	ds := dialects(t)
	for i := 0; i < 3; i++ { // 3 × 1,000: the window is spent
		if resp := ds[0].send(g, key, "big:1000"); resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %v", i, resp.StatusCode, readJSON(t, resp))
		} else {
			resp.Body.Close()
		}
	}
	if code, me := asUser(t, g, cookie, "PATCH", "/api/auth/me", map[string]any{"plan_overflow": "wait"}); code != 200 || me["plan_overflow"] != "wait" {
		t.Fatalf("PATCH /api/auth/me: %d %v", code, me)
	}
	before := calls.Load()
	for _, d := range ds {
		resp := d.send(g, key, "hi")
		body := readJSON(t, resp)
		ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != 429 || ra < int((5*time.Hour).Seconds())-60 || ra > int((5*time.Hour).Seconds()) {
			t.Errorf("%s: %d Retry-After %q %v; want 429 until the window closes", d.name, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		e, _ := body["error"].(map[string]any)
		switch d.name {
		case "openai":
			if e["code"] != "plan_window_spent" {
				t.Errorf("openai error %v", body)
			}
		case "messages":
			if body["type"] != "error" || e["type"] != "rate_limit_error" {
				t.Errorf("messages error %v", body)
			}
		default:
			if e["status"] != "RESOURCE_EXHAUSTED" || e["code"] != float64(429) {
				t.Errorf("alternate-native error %v", body)
			}
		}
	}
	if calls.Load() != before {
		t.Error("a waiting call reached the upstream")
	}
	// An admin puts the user back on the balance: the call is paid from it.
	if code, u := g.Do(t, "PATCH", fmt.Sprintf("/api/users/%d", alice), "root-secret", map[string]any{"plan_overflow": "balance"}); code != 200 || u["plan_overflow"] != "balance" {
		t.Fatalf("PATCH user: %d %v", code, u)
	}
	if resp := ds[0].send(g, key, "big:1000"); resp.StatusCode != 200 {
		t.Fatalf("overflow to balance: %d %v", resp.StatusCode, readJSON(t, resp))
	} else {
		resp.Body.Close()
	}
	if b := balanceOf(t, g, alice); b != 10_000_000-1000 {
		t.Errorf("balance %v, want the overflowing call paid from it", b)
	}
}
