package payments_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	secretKey     = "sk_test_fake_0123456789"
	webhookSecret = "whsec_fake_0123456789"
)

// fakeStripe is Stripe's Checkout Session endpoint. It checks every request
// it receives the way Stripe would (key, form fields) and remembers the
// sessions it opened.
type fakeStripe struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	sessions map[string]fakeSession // by session id
	requests int
	fail     bool // answer 500, as Stripe does when it is down
}

type fakeSession struct {
	ID, Order, Currency, SuccessURL, CancelURL string
	// User and Plan are a subscription's metadata.
	User, Plan string
	Cents      int64
}

func newFakeStripe(t *testing.T) *fakeStripe {
	f := &fakeStripe{t: t, sessions: map[string]fakeSession{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/checkout/sessions", f.create)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("fake Stripe: unexpected %s %s", r.Method, r.URL.Path)
		http.Error(w, "not found", http.StatusNotFound)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeStripe) create(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if r.Header.Get("Authorization") != "Bearer "+secretKey {
		f.t.Errorf("fake Stripe: Authorization %q", r.Header.Get("Authorization"))
	}
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("fake Stripe: form: %v", err)
	}
	v := r.PostForm
	want := map[string]string{"mode": "payment", "line_items[0][quantity]": "1"}
	if v.Get("mode") == "subscription" {
		// A subscription bills a recurring price, and its metadata (which
		// each invoice carries) names the user and plan.
		want = map[string]string{"mode": "subscription", "line_items[0][quantity]": "1",
			"line_items[0][price_data][recurring][interval]": "month"}
		if v.Get("subscription_data[metadata][user]") == "" || v.Get("subscription_data[metadata][plan]") == "" {
			f.t.Errorf("fake Stripe: subscription without user and plan metadata: %v", v)
		}
	}
	for k, val := range want {
		if v.Get(k) != val {
			f.t.Errorf("fake Stripe: %s = %q, want %q (form %v)", k, v.Get(k), val, v)
		}
	}
	order := v.Get("client_reference_id")
	cents, err := strconv.ParseInt(v.Get("line_items[0][price_data][unit_amount]"), 10, 64)
	if order == "" || err != nil || cents <= 0 || v.Get("line_items[0][price_data][currency]") == "" ||
		v.Get("line_items[0][price_data][product_data][name]") == "" || v.Get("metadata[order]") != order {
		f.t.Errorf("fake Stripe: incomplete checkout session request: %v", v)
	}
	if f.fail {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"type":"api_error","message":"down"}}`)
		return
	}
	s := fakeSession{ID: fmt.Sprintf("cs_test_%d", f.requests), Order: order, Cents: cents, User: v.Get("subscription_data[metadata][user]"),
		Plan:     v.Get("subscription_data[metadata][plan]"),
		Currency: v.Get("line_items[0][price_data][currency]"), SuccessURL: v.Get("success_url"), CancelURL: v.Get("cancel_url")}
	f.sessions[s.ID] = s
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": s.ID, "object": "checkout.session", "mode": v.Get("mode"),
		"url": "https://checkout.stripe.test/c/pay/" + s.ID, "client_reference_id": order, "amount_total": cents,
		"currency": s.Currency, "payment_status": "unpaid", "status": "open"})
}

// count is how many Checkout Session requests arrived.
func (f *fakeStripe) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// session returns the session opened for order.
func (f *fakeStripe) session(t *testing.T, order string) fakeSession {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.sessions {
		if s.Order == order {
			return s
		}
	}
	t.Fatalf("fake Stripe opened no session for order %s", order)
	return fakeSession{}
}

// event is a Stripe event about a session, as Stripe sends it.
func event(id, typ, apiVersion string, s fakeSession, paidCents int64, status string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": apiVersion, "created": time.Now().Unix(), "type": typ, "livemode": false,
		"pending_webhooks": 1, "request": map[string]any{"id": nil, "idempotency_key": nil},
		"data": map[string]any{"object": map[string]any{
			"id": s.ID, "object": "checkout.session", "client_reference_id": s.Order, "amount_total": paidCents,
			"amount_subtotal": paidCents, "currency": s.Currency, "payment_status": status, "mode": "payment",
			"metadata": map[string]string{"order": s.Order}, "status": "complete",
		}},
	})
	return b
}

// sign makes a Stripe-Signature header: t, then a v1 HMAC-SHA256 of
// "t.payload" for each secret.
func sign(payload []byte, at time.Time, secrets ...string) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	parts := []string{"t=" + ts}
	for _, s := range secrets {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte(ts + "." + string(payload)))
		parts = append(parts, "v1="+hex.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(parts, ",")
}
