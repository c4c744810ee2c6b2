package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// fakeCheckout is Stripe's Checkout Session endpoint for the browser: it
// remembers the mode each session was opened in and sends the buyer
// straight back to the success address.
type fakeCheckout struct {
	*httptest.Server
	mu    sync.Mutex
	modes []string
}

func newFakeCheckout(t *testing.T) *fakeCheckout {
	f := &fakeCheckout{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/checkout/sessions" || r.ParseForm() != nil {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		f.mu.Lock()
		f.modes = append(f.modes, r.PostForm.Get("mode"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "cs_e2e_1", "object": "checkout.session", "url": r.PostForm.Get("success_url")})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCheckout) opened() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.modes...)
}

// TestPlanPagesInHeadlessChromium drives the plan pages: root defines a
// plan with two windows and grants it to alice; alice's call draws from
// it; alice sees each window's use and reset time (in English and
// Chinese), chooses to wait when a window is spent, and subscribes to the
// plan through Stripe Checkout.
func TestPlanPagesInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	bin := requireChromium(t)
	up := newFakeUpstream(t)
	stripe := newFakeCheckout(t)
	weight := 1
	gw := testkit.Start(t, testkit.WithRootPassword(rootPassword), testkit.WithRootToken(rootToken),
		testkit.WithConfig(func(c *config.Config) {
			c.LogLevel = "warn"
			c.Payments.Stripe = config.Stripe{SecretKey: "sk_test_e2e", WebhookSecret: "whsec_e2e", APIBase: stripe.URL}
		}),
		testkit.WithSeed(config.Seed{
			Users:  []config.SeedUser{{Username: userName, Password: userPassword, Role: "user", Group: "default", Quota: 5_000_000}},
			Tokens: []config.SeedToken{{Name: "alice-key", User: userName, Key: userKey}},
			Channels: []config.SeedChannel{{Name: "fake-openai", Type: "openai", BaseURL: up.URL, Key: "upstream-key-e2e",
				Models: []string{chatModel}, Groups: []string{"default"}, Weight: &weight, Status: "enabled"}},
			Models: map[string]config.SeedPrice{chatModel: {InputPerMTok: 1, OutputPerMTok: 2}},
		}))
	topUpRoot(t, gw)
	b := launchBrowser(t, bin)
	p := b.newPage(t)
	steps := []struct {
		name string
		run  func(p *page)
	}{
		{"root defines and grants a plan", func(p *page) { definePlan(p, gw) }},
		{"alice's call draws from it", func(p *page) { callOnPlan(p, gw) }},
		{"alice sees her windows in English and Chinese", func(p *page) { seeWindows(p, gw) }},
		{"alice subscribes by card", func(p *page) { subscribeByCard(p, stripe) }},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { p.t = t; s.run(p) }) {
			return
		}
	}
	if probs := b.Problems(); len(probs) > 0 {
		t.Errorf("the page reported script errors: %v", probs)
	}
}

// signInAt opens the console at base and signs in.
func signInAt(p *page, base, name, password string) {
	p.navigate(base + "/")
	p.waitVisible("#login-submit")
	signIn(p, name, password)
}

func definePlan(p *page, gw *testkit.Gateway) {
	signInAt(p, gw.URL, "root", rootPassword)
	openPage(p, "planadmin")
	p.click("#padmin-create")
	p.waitVisible("dialog[open] input[name=windows]")
	p.fill("dialog[open] input[name=name]", "coder")
	p.fill("dialog[open] input[name=price]", "20")
	p.fill("dialog[open] input[name=windows]", "5h:1, 7d:5")
	p.fill("dialog[open] input[name=models]", chatModel)
	submitDialog(p)
	p.waitFor(`document.querySelector("#padmin-list") && document.querySelector("#padmin-list").textContent.includes("coder")`, "the new plan listed")
	p.screenshot("plan-admin")
	_, users := gw.Do(p.t, "GET", "/api/users?page_size=100", rootToken, nil)
	var alice float64
	for _, u := range users["items"].([]any) {
		if m := u.(map[string]any); m["username"] == userName {
			alice = m["id"].(float64)
		}
	}
	p.click(".padmin-grant")
	p.waitVisible("dialog[open] input[name=user]")
	p.fill("dialog[open] input[name=user]", fmt.Sprint(alice))
	submitDialog(p)
	p.waitFor(`!document.querySelector("dialog[open]")`, "the grant dialog closed")
	p.click("#logout")
	p.waitVisible("#login-submit")
}

func callOnPlan(p *page, gw *testkit.Gateway) { aliceChats(p, gw) }

// aliceChats makes one chat call with alice's key, which must answer 200.
func aliceChats(p *page, gw *testkit.Gateway) {
	req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"`+chatModel+`","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+userKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		p.t.Fatalf("alice's call: %d", resp.StatusCode)
	}
}

func seeWindows(p *page, gw *testkit.Gateway) {
	signInAt(p, gw.URL, userName, userPassword)
	openPage(p, "plans")
	p.waitFor(`document.querySelectorAll(".plan-held tbody tr").length === 2`, "two windows of the held plan")
	p.waitFor(`[...document.querySelectorAll(".plan-held .window-used")].every((e) => e.textContent !== "$0.00" && e.textContent !== "0")`, "the call's use in both windows")
	p.waitFor(`!document.querySelector(".plan-held").textContent.includes("opens at your next call")`, "both windows open with a reset time")
	p.screenshot("plans")
	selectLang(p, "zh")
	p.waitFor(`document.querySelector("#nav-plans").textContent === "我的套餐" && document.querySelector("main").textContent.includes("重置时间")`, "the plans page in Chinese")
	p.screenshot("plans-zh")
	selectLang(p, "en")
	p.waitFor(`document.querySelector("#nav-plans").textContent === "My plans"`, "back in English")
	openPage(p, "plans")
	if err := p.eval(`(() => { const s = document.querySelector("#plans-overflow"); s.value = "wait"; s.dispatchEvent(new Event("change")); })()`, nil); err != nil {
		p.t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, me := gw.Do(p.t, "GET", "/api/users?page_size=100", rootToken, nil)
		waits := false
		for _, u := range me["items"].([]any) {
			if m := u.(map[string]any); m["username"] == userName && m["plan_overflow"] == "wait" {
				waits = true
			}
		}
		if waits {
			break
		}
		if time.Now().After(deadline) {
			p.t.Fatal("choosing to wait did not reach the account")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p.text("#plans-topup") == "" {
		p.t.Error("the plans page has no top-up button")
	}
}

func subscribeByCard(p *page, stripe *fakeCheckout) {
	p.waitVisible("#plans-sale button.primary")
	p.click("#plans-sale button.primary")
	// The page is the plans page before and after Checkout, so wait for
	// the session to be opened first, then for the page it returns to.
	deadline := time.Now().Add(10 * time.Second)
	for len(stripe.opened()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := stripe.opened(); len(got) != 1 || got[0] != "subscription" {
		p.t.Fatalf("Checkout sessions opened: %v, want one in subscription mode", got)
	}
	p.waitFor(`location.search === "" && document.querySelector("main[data-page=plans]") && !document.querySelector("main[aria-busy]")`, "back from Checkout on the plans page")
}
