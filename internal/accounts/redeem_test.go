package accounts_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

func startMoney(t *testing.T) *testkit.Gateway {
	return testkit.Start(t, testkit.WithRootToken(rootToken), testkit.WithUsers(
		config.SeedUser{Username: "dave", Password: "dave-password", Role: "user", Quota: 100},
		config.SeedUser{Username: "erin", Password: "erin-password", Role: "user"}))
}

func makeCodes(t *testing.T, g *testkit.Gateway, body map[string]any) []string {
	t.Helper()
	a := call(t, g, "POST", "/api/redemptions", body, rootToken)
	raw, _ := a.body["codes"].([]any)
	if a.status != 200 || len(raw) == 0 {
		t.Fatalf("create codes: %d %s", a.status, a.raw)
	}
	var out []string
	for _, c := range raw {
		out = append(out, c.(string))
	}
	return out
}

func balance(t *testing.T, g *testkit.Gateway, cookie *http.Cookie) int64 {
	t.Helper()
	a := call(t, g, "GET", "/api/auth/me", nil, "", cookie)
	return num(a.body["quota"])
}

func TestTwentyConcurrentRedemptionsOfOneCodePayOnce(t *testing.T) {
	g := startMoney(t)
	code := makeCodes(t, g, map[string]any{"quota": 5000, "count": 1, "name": "race"})[0]
	dave, erin := g.Login(t, "dave", "dave-password"), g.Login(t, "erin", "erin-password")
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cookie := dave
			if i%2 == 1 {
				cookie = erin
			}
			statuses[i] = call(t, g, "POST", "/api/user/redeem", map[string]string{"code": code}, "", cookie).status
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 400:
		default:
			t.Fatalf("unexpected status %d among %v", s, statuses)
		}
	}
	if ok != 1 {
		t.Fatalf("%d redemptions succeeded, want exactly 1: %v", ok, statuses)
	}
	total := balance(t, g, dave) + balance(t, g, erin)
	if total != 100+5000 {
		t.Fatalf("balances sum to %d, want %d", total, 5100)
	}
	if err := g.App.Writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	logs := call(t, g, "GET", "/api/logs?type=topup", nil, rootToken)
	var redeemed int64
	for _, it := range logs.body["items"].([]any) {
		row := it.(map[string]any)
		if strings.Contains(row["other"].(map[string]any)["note"].(string), "redemption") {
			redeemed += num(row["quota"])
		}
	}
	if redeemed != 5000 {
		t.Fatalf("topup log rows for the redemption sum to %d: %s", redeemed, logs.raw)
	}
	list := call(t, g, "GET", "/api/redemptions", nil, rootToken)
	item := list.body["items"].([]any)[0].(map[string]any)
	if item["state"] != "used" || item["used_by"] == nil || strings.Contains(list.raw, code) {
		t.Fatalf("list after redemption: %s", list.raw)
	}
}

func TestRedemptionRefusalsAllLookTheSame(t *testing.T) {
	g := startMoney(t)
	used := makeCodes(t, g, map[string]any{"quota": 10, "count": 1})[0]
	expired := makeCodes(t, g, map[string]any{"quota": 10, "count": 1, "expires_at": time.Now().Add(time.Second).Unix()})[0]
	dave := g.Login(t, "dave", "dave-password")
	if a := call(t, g, "POST", "/api/user/redeem", map[string]string{"code": used}, "", dave); a.status != 200 || num(a.body["quota"]) != 10 {
		t.Fatalf("first redemption: %d %s", a.status, a.raw)
	}
	time.Sleep(1100 * time.Millisecond)
	unknown := accounts.NewRedemptionCode()
	var first string
	for _, tc := range []struct{ name, code string }{
		{"used", used}, {"expired", expired}, {"unknown", unknown}, {"malformed", "not-a-code"}, {"empty", ""},
	} {
		a := call(t, g, "POST", "/api/user/redeem", map[string]string{"code": tc.code}, "", dave)
		if a.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", tc.name, a.status, a.raw)
		}
		if first == "" {
			first = a.raw
		} else if a.raw != first {
			t.Fatalf("%s answers differently: %s vs %s", tc.name, a.raw, first)
		}
	}
	if b := balance(t, g, dave); b != 110 {
		t.Fatalf("balance %d, want 110", b)
	}
	list := call(t, g, "GET", "/api/redemptions", nil, rootToken)
	states := map[string]bool{}
	for _, it := range list.body["items"].([]any) {
		states[it.(map[string]any)["state"].(string)] = true
	}
	if !states["used"] || !states["expired"] {
		t.Fatalf("states: %s", list.raw)
	}
}

func TestRedemptionCodesAreForAdministrators(t *testing.T) {
	g := startMoney(t)
	dave := g.Login(t, "dave", "dave-password")
	if a := call(t, g, "POST", "/api/redemptions", map[string]any{"quota": 10, "count": 1}, "", dave); a.status != http.StatusForbidden {
		t.Fatalf("a user made codes: %d", a.status)
	}
	if a := call(t, g, "GET", "/api/redemptions", nil, "", dave); a.status != http.StatusForbidden {
		t.Fatalf("a user listed codes: %d", a.status)
	}
	for _, body := range []map[string]any{{"quota": 0}, {"quota": -5}, {"quota": 5, "count": 0}, {"quota": 5, "count": 100000}, {"quota": "many"}} {
		if a := call(t, g, "POST", "/api/redemptions", body, rootToken); a.status != http.StatusBadRequest {
			t.Fatalf("%v: %d %s", body, a.status, a.raw)
		}
	}
	codes := makeCodes(t, g, map[string]any{"quota": 7, "count": 3, "name": "batch"})
	if len(codes) != 3 || codes[0] == codes[1] {
		t.Fatalf("codes: %v", codes)
	}
}

// Redemption guesses are counted before a code is looked at, per user, in
// a scope of their own: a burst gets at most the limit of lookups, and the
// guesser's sign-in is not held up by them.
func TestParallelRedemptionGuessesAreThrottledApartFromSignIn(t *testing.T) {
	g := startMoney(t)
	dave := g.Login(t, "dave", "dave-password")
	const n = 30
	limit := int(auth.DefaultThrottleLimits.PerAccount)
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = call(t, g, "POST", "/api/user/redeem", map[string]string{"code": accounts.NewRedemptionCode()}, "", dave).status
		}()
	}
	wg.Wait()
	looked := 0
	for _, s := range statuses {
		switch s {
		case http.StatusBadRequest:
			looked++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("unexpected status %d among %v", s, statuses)
		}
	}
	if looked > limit || looked == 0 {
		t.Fatalf("%d of %d guesses were looked up, want 1 to %d", looked, n, limit)
	}
	g.Login(t, "dave", "dave-password")
}
