package payments_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const rootToken = "payments-root-token-0123456789"

// quotaPerUSD is the gateway's default.
const quotaPerUSD = 500000

func withStripe(f *fakeStripe) testkit.Option {
	return testkit.WithConfig(func(c *config.Config) {
		c.ServerAddress = "https://console.example"
		c.Payments.Stripe = config.Stripe{SecretKey: secretKey, WebhookSecret: webhookSecret, APIBase: f.srv.URL}
	})
}

func startShop(t *testing.T, f *fakeStripe, opts ...testkit.Option) (*testkit.Gateway, *http.Cookie) {
	g := testkit.Start(t, append([]testkit.Option{testkit.WithRootToken(rootToken), withStripe(f),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default", Quota: 1000})}, opts...)...)
	return g, g.Login(t, "alice", "alice-password")
}

// send makes one request with a session cookie (or none) and decodes the
// answer.
func send(t *testing.T, g *testkit.Gateway, method, path string, body any, cookie *http.Cookie) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, g.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if json.Unmarshal(raw, &out) != nil {
		out["raw"] = string(raw)
	}
	return resp.StatusCode, out
}

// deliver posts a webhook delivery as Stripe does.
func deliver(t testing.TB, g *testkit.Gateway, payload []byte, signature string) (int, string) {
	req, _ := http.NewRequest("POST", g.URL+"/api/payments/stripe/webhook", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	if signature != "" {
		req.Header.Set("Stripe-Signature", signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func topUp(t *testing.T, g *testkit.Gateway, cookie *http.Cookie, amount any) string {
	t.Helper()
	status, body := send(t, g, "POST", "/api/user/topup", map[string]any{"amount_usd": amount}, cookie)
	id, _ := body["id"].(string)
	if status != http.StatusOK || id == "" || !strings.HasPrefix(fmt.Sprint(body["checkout_url"]), "https://checkout.stripe.test/") {
		t.Fatalf("topup: %d %v", status, body)
	}
	return id
}

func balance(t *testing.T, g *testkit.Gateway, cookie *http.Cookie) int64 {
	t.Helper()
	_, me := send(t, g, "GET", "/api/auth/me", nil, cookie)
	return int64(me["quota"].(float64))
}

func orders(t *testing.T, g *testkit.Gateway, path string, cookie *http.Cookie) []map[string]any {
	t.Helper()
	status, body := send(t, g, "GET", path, nil, cookie)
	if status != http.StatusOK {
		t.Fatalf("%s: %d %v", path, status, body)
	}
	var out []map[string]any
	for _, it := range body["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// topupRows returns the topup log rows of a payment order, read from the
// database once the billing writer has written them.
func topupRows(t *testing.T, g *testkit.Gateway, order string) []store.UsageLog {
	t.Helper()
	if err := g.App.Writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	logs, _, err := g.App.Store.Logs().List(t.Context(), store.LogFilter{Type: store.LogTopUp}, store.Page{Page: 1, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.UsageLog
	for _, l := range logs {
		if strings.Contains(string(l.Other), order) {
			out = append(out, l)
		}
	}
	return out
}

func TestTopUpOpensACheckoutSessionForAPendingOrder(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	id := topUp(t, g, alice, 12.5)
	s := f.session(t, id)
	if s.Cents != 1250 || s.Currency != "usd" {
		t.Fatalf("session %+v, want 1250 usd cents", s)
	}
	for _, u := range []string{s.SuccessURL, s.CancelURL} {
		if !strings.HasPrefix(u, "https://console.example/account?order="+url.QueryEscape(id)) {
			t.Fatalf("Stripe sends the buyer back to %q, not to the console's account page", u)
		}
	}
	mine := orders(t, g, "/api/user/topups", alice)
	if len(mine) != 1 || mine[0]["id"] != id || mine[0]["state"] != "pending" || mine[0]["amount_usd"] != 12.5 ||
		mine[0]["session_id"] != s.ID || mine[0]["checkout_url"] != "https://checkout.stripe.test/c/pay/"+s.ID {
		t.Fatalf("orders: %v", mine)
	}
	if status, _ := send(t, g, "GET", "/api/payments", nil, nil); status != http.StatusUnauthorized {
		t.Fatalf("an anonymous caller listed payments: %d", status)
	}
}

func TestTopUpAmountsOutsideTheBoundsAreRefusedBeforeStripe(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f, testkit.WithConfig(func(c *config.Config) { c.Payments.MinUSD, c.Payments.MaxUSD = 5, 100 }))
	cases := []struct {
		amount any
		ok     bool
	}{
		{5, true}, {100, true}, {"50", false}, {4.99, false}, {100.01, false}, {0, false}, {-10, false},
		{10.005, false}, {nil, false}, {1e300, false}, {42.42, true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.amount), func(t *testing.T) {
			before := f.count()
			status, body := send(t, g, "POST", "/api/user/topup", map[string]any{"amount_usd": tc.amount}, alice)
			if tc.ok != (status == http.StatusOK) {
				t.Fatalf("%d %v", status, body)
			}
			if !tc.ok && (status != http.StatusBadRequest || f.count() != before) {
				t.Fatalf("refused amount: %d %v, Stripe asked %d times", status, body, f.count()-before)
			}
		})
	}
	if n := len(orders(t, g, "/api/user/topups", alice)); n != 3 {
		t.Fatalf("%d orders, want the 3 accepted", n)
	}
}

func TestAPaidCheckoutCreditsItsOrderExactlyOnce(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	id := topUp(t, g, alice, 12.5)
	s := f.session(t, id)
	body := event("evt_paid_1", "checkout.session.completed", "2024-06-20", s, 1250, "paid")
	sig := sign(body, time.Now(), webhookSecret)
	if status, raw := deliver(t, g, body, sig); status != http.StatusOK || !strings.Contains(raw, `"handled":true`) {
		t.Fatalf("delivery: %d %s", status, raw)
	}
	want := int64(1000 + 1250*quotaPerUSD/100)
	if b := balance(t, g, alice); b != want {
		t.Fatalf("balance %d, want %d", b, want)
	}
	// Stripe retries, duplicates and sends a second event for the session.
	again := event("evt_paid_2", "checkout.session.completed", "2024-06-20", s, 1250, "paid")
	for i, d := range []struct {
		body []byte
		sig  string
	}{{body, sig}, {body, sign(body, time.Now(), webhookSecret)}, {again, sign(again, time.Now(), webhookSecret)}} {
		if status, raw := deliver(t, g, d.body, d.sig); status != http.StatusOK || !strings.Contains(raw, `"handled":false`) {
			t.Fatalf("redelivery %d: %d %s", i, status, raw)
		}
	}
	if b := balance(t, g, alice); b != want {
		t.Fatalf("balance %d after redeliveries, want %d", b, want)
	}
	rows := topupRows(t, g, id)
	if len(rows) != 1 || rows[0].Quota != 1250*quotaPerUSD/100 {
		t.Fatalf("topup rows %+v", rows)
	}
	var other struct {
		Payment map[string]any `json:"payment"`
	}
	if err := json.Unmarshal(rows[0].Other, &other); err != nil || other.Payment["provider"] != "stripe" ||
		other.Payment["order"] != id || other.Payment["session"] != s.ID {
		t.Fatalf("other = %s", rows[0].Other)
	}
	mine := orders(t, g, "/api/user/topups", alice)
	if mine[0]["state"] != "paid" || mine[0]["quota"] != float64(1250*quotaPerUSD/100) || mine[0]["paid_at"] == nil || mine[0]["checkout_url"] != nil {
		t.Fatalf("paid order: %v", mine[0])
	}
	status, all := g.Do(t, "GET", "/api/payments", rootToken, nil)
	if status != http.StatusOK || all["total"] != float64(1) || all["items"].([]any)[0].(map[string]any)["user_id"] != mine[0]["user_id"] {
		t.Fatalf("admin list: %d %v", status, all)
	}
}

func TestTheCreditIsWhatStripeSaysWasPaid(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	id := topUp(t, g, alice, 20)
	s := f.session(t, id)
	// A promotion code took 20.00 down to 15.01.
	body := event("evt_discount", "checkout.session.completed", "2025-09-30.clover", s, 1501, "paid")
	if status, raw := deliver(t, g, body, sign(body, time.Now(), webhookSecret)); status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	if b := balance(t, g, alice); b != 1000+1501*quotaPerUSD/100 {
		t.Fatalf("balance %d", b)
	}
	if o := orders(t, g, "/api/user/topups", alice)[0]; o["paid_cents"] != float64(1501) || o["amount_cents"] != float64(2000) {
		t.Fatalf("order %v", o)
	}
}

func TestDeliveriesThatDoNotVerifyChangeNothing(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	id := topUp(t, g, alice, 10)
	s := f.session(t, id)
	body := event("evt_forged", "checkout.session.completed", "2024-06-20", s, 1000, "paid")
	cases := []struct{ name, sig string }{
		{"no signature", ""},
		{"signed with another secret", sign(body, time.Now(), "whsec_attacker")},
		{"signed six minutes ago", sign(body, time.Now().Add(-6*time.Minute), webhookSecret)},
		{"malformed header", "t=now,v1=nothex"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if status, raw := deliver(t, g, body, tc.sig); status != http.StatusBadRequest || !strings.Contains(raw, "invalid_signature") {
				t.Fatalf("%d %s", status, raw)
			}
		})
	}
	if b := balance(t, g, alice); b != 1000 {
		t.Fatalf("balance %d after forged deliveries", b)
	}
	if o := orders(t, g, "/api/user/topups", alice)[0]; o["state"] != "pending" {
		t.Fatalf("order %v", o)
	}
	// The same event, signed now, is credited: the refusals left no trace.
	if status, raw := deliver(t, g, body, sign(body, time.Now(), webhookSecret)); status != http.StatusOK || !strings.Contains(raw, `"handled":true`) {
		t.Fatalf("%d %s", status, raw)
	}
}

func TestExpiredUnpaidAndOtherEventsCreditNothing(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	expiring, unpaid := topUp(t, g, alice, 5), topUp(t, g, alice, 6)
	cases := []struct {
		name    string
		payload []byte
		handled bool
	}{
		{"expired session", event("evt_exp", "checkout.session.expired", "2024-06-20", f.session(t, expiring), 0, "unpaid"), true},
		{"completed but not paid yet", event("evt_unpaid", "checkout.session.completed", "2024-06-20", f.session(t, unpaid), 600, "unpaid"), false},
		{"an event type the gateway does not handle", []byte(`{"id":"evt_pi","object":"event","type":"payment_intent.created","data":{"object":{"id":"pi_1","object":"payment_intent","amount":600}}}`), false},
		{"a paid session of an order this gateway never made", event("evt_foreign", "checkout.session.completed", "2024-06-20",
			fakeSession{ID: "cs_other", Order: "ord_elsewhere", Currency: "usd"}, 600, "paid"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := deliver(t, g, tc.payload, sign(tc.payload, time.Now(), webhookSecret))
			if status != http.StatusOK || !strings.Contains(raw, fmt.Sprintf(`"handled":%v`, tc.handled)) {
				t.Fatalf("%d %s", status, raw)
			}
		})
	}
	if b := balance(t, g, alice); b != 1000 {
		t.Fatalf("balance %d", b)
	}
	state := map[string]any{}
	for _, o := range orders(t, g, "/api/user/topups", alice) {
		state[o["id"].(string)] = o["state"]
	}
	if state[expiring] != "expired" || state[unpaid] != "pending" {
		t.Fatalf("states %v", state)
	}
}

func TestCardTopUpsNeedStripeAndAUser(t *testing.T) {
	plain := testkit.Start(t, testkit.WithRootToken(rootToken),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-password", Role: "user", Group: "default"}))
	alice := plain.Login(t, "alice", "alice-password")
	if status, _ := send(t, plain, "POST", "/api/user/topup", map[string]any{"amount_usd": 5}, alice); status != http.StatusNotFound {
		t.Fatalf("topup without Stripe: %d", status)
	}
	if status, _ := deliver(t, plain, []byte(`{}`), "t=1,v1=00"); status != http.StatusNotFound {
		t.Fatalf("webhook without Stripe: %d", status)
	}
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	cases := []struct {
		name, method, path, bearer string
		cookie                     *http.Cookie
		status                     int
	}{
		{"topup anonymous", "POST", "/api/user/topup", "", nil, http.StatusUnauthorized},
		{"topup as root", "POST", "/api/user/topup", rootToken, nil, http.StatusBadRequest},
		{"payments as a user", "GET", "/api/payments", "", alice, http.StatusForbidden},
		{"own orders anonymous", "GET", "/api/user/topups", "", nil, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var status int
			if tc.bearer != "" {
				status, _ = g.Do(t, tc.method, tc.path, tc.bearer, map[string]any{"amount_usd": 5})
			} else {
				status, _ = send(t, g, tc.method, tc.path, map[string]any{"amount_usd": 5}, tc.cookie)
			}
			if status != tc.status {
				t.Fatalf("%d, want %d", status, tc.status)
			}
		})
	}
}

func TestAFailingStripeLeavesNoOrder(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	f.mu.Lock()
	f.fail = true
	f.mu.Unlock()
	status, body := send(t, g, "POST", "/api/user/topup", map[string]any{"amount_usd": 5}, alice)
	if status != http.StatusBadGateway || strings.Contains(fmt.Sprint(body), secretKey) {
		t.Fatalf("%d %v", status, body)
	}
	if n := len(orders(t, g, "/api/user/topups", alice)); n != 0 {
		t.Fatalf("%d orders left behind", n)
	}
	if strings.Contains(g.Log(), secretKey) {
		t.Fatal("the secret key is in the log")
	}
}

// A node that marked an order paid and died before the credit was written
// did not answer Stripe, so Stripe delivers the event again: that delivery
// credits the order, once, though the order already reads paid.
func TestADeliveryRetriedAfterACrashBetweenMarkAndCreditCreditsOnce(t *testing.T) {
	f := newFakeStripe(t)
	g, alice := startShop(t, f)
	id := topUp(t, g, alice, 7)
	s := f.session(t, id)
	quota := int64(700 * quotaPerUSD / 100)
	// What the dead node got done: the order's once-only mark, no credit.
	if err := g.App.Store.Payments().MarkPaid(t.Context(), store.PaymentCredit{OrderID: id, EventID: "evt_first",
		SessionID: s.ID, PaidCents: 700, Quota: quota, At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	body := event("evt_first", "checkout.session.completed", "2024-06-20", s, 700, "paid")
	for i := range 2 {
		status, raw := deliver(t, g, body, sign(body, time.Now(), webhookSecret))
		if status != http.StatusOK || strings.Contains(raw, `"handled":true`) != (i == 0) {
			t.Fatalf("delivery %d: %d %s", i, status, raw)
		}
	}
	if b := balance(t, g, alice); b != 1000+quota {
		t.Fatalf("balance %d, want %d", b, 1000+quota)
	}
	if rows := topupRows(t, g, id); len(rows) != 1 {
		t.Fatalf("%d topup rows for the order, want 1", len(rows))
	}
}
