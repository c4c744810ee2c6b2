package payments_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// invoicePaid is an invoice.paid event of a subscription in the shape of
// a recent API version: the subscription and its metadata under
// parent.subscription_details, the period in the line items.
func invoicePaid(id, sub string, s fakeSession, periodEnd time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "event", "api_version": "2025-03-31.basil", "type": "invoice.paid",
		"data": map[string]any{"object": map[string]any{"id": "in_" + id, "object": "invoice", "status": "paid",
			"parent": map[string]any{"type": "subscription_details", "subscription_details": map[string]any{
				"subscription": sub, "metadata": map[string]string{"order": s.Order, "user": s.User, "plan": s.Plan}}},
			"lines": map[string]any{"data": []any{map[string]any{"period": map[string]any{"start": periodEnd.AddDate(0, -1, 0).Unix(), "end": periodEnd.Unix()}}}},
		}}})
	return b
}

// subscriptionDeleted is customer.subscription.deleted in an older API
// version's shape (current_period_end on the subscription).
func subscriptionDeleted(id, sub string, periodEnd time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "event", "api_version": "2023-10-16", "type": "customer.subscription.deleted",
		"data": map[string]any{"object": map[string]any{"id": sub, "object": "subscription", "status": "canceled",
			"current_period_end": periodEnd.Unix(), "metadata": map[string]string{}}}})
	return b
}

func heldUntil(t *testing.T, g *testkit.Gateway, cookie *http.Cookie) []string {
	t.Helper()
	_, body := send(t, g, "GET", "/api/user/plans", nil, cookie)
	var out []string
	for _, it := range body["items"].([]any) {
		out = append(out, it.(map[string]any)["until"].(string))
	}
	return out
}

func TestASubscriptionStartsRenewsAndEndsOnceEachEvent(t *testing.T) {
	f := newFakeStripe(t)
	g, cookie := startShop(t, f)
	_, plan := g.Do(t, "POST", "/api/plans", rootToken, map[string]any{"name": "coder", "price_usd": 20,
		"windows": []map[string]any{{"hours": 5, "quota": 1000}}})
	status, body := send(t, g, "POST", "/api/user/subscribe", map[string]any{"plan_id": plan["id"]}, cookie)
	order, _ := body["id"].(string)
	if status != 200 || order == "" || body["checkout_url"] == nil {
		t.Fatalf("subscribe: %d %v", status, body)
	}
	s := f.session(t, order)
	if s.Plan != fmt.Sprint(plan["id"]) {
		t.Fatalf("the checkout names plan %q, want %v", s.Plan, plan["id"])
	}
	first := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second).UTC()
	paid := invoicePaid("evt_inv_1", "sub_1", s, first)
	for i, want := range []bool{true, false} { // a delivery, then its replay
		code, answer := deliver(t, g, paid, sign(paid, time.Now(), webhookSecret))
		if code != 200 || answer != handled(want) {
			t.Fatalf("invoice.paid delivery %d: %d %s, want handled %v", i, code, answer, want)
		}
	}
	if got := heldUntil(t, g, cookie); len(got) != 1 || got[0] != first.Format(time.RFC3339) {
		t.Fatalf("after the first invoice: %v, want one plan until %s", got, first.Format(time.RFC3339))
	}
	// The next month's invoice renews the same grant.
	second := first.AddDate(0, 1, 0)
	renew := invoicePaid("evt_inv_2", "sub_1", s, second)
	deliver(t, g, renew, sign(renew, time.Now(), webhookSecret))
	if got := heldUntil(t, g, cookie); len(got) != 1 || got[0] != second.Format(time.RFC3339) {
		t.Fatalf("after the renewal: %v, want one plan until %s", got, second.Format(time.RFC3339))
	}
	// Cancelled: the plan ends at the end of the period paid for, once.
	end := time.Now().Add(10 * 24 * time.Hour).Truncate(time.Second).UTC()
	del := subscriptionDeleted("evt_del_1", "sub_1", end)
	for i, want := range []bool{true, false} {
		code, answer := deliver(t, g, del, sign(del, time.Now(), webhookSecret))
		if code != 200 || answer != handled(want) {
			t.Fatalf("deleted delivery %d: %d %s, want handled %v", i, code, answer, want)
		}
	}
	if got := heldUntil(t, g, cookie); len(got) != 1 || got[0] != end.Format(time.RFC3339) {
		t.Fatalf("after cancellation: %v, want the plan until %s", got, end.Format(time.RFC3339))
	}
	// A replayed old renewal does not bring it back.
	deliver(t, g, renew, sign(renew, time.Now(), webhookSecret))
	if got := heldUntil(t, g, cookie); len(got) != 1 || got[0] != end.Format(time.RFC3339) {
		t.Fatalf("a replayed renewal changed the plan: %v", got)
	}
	// An unsigned invoice does nothing.
	forged := invoicePaid("evt_inv_9", "sub_1", s, second.AddDate(1, 0, 0))
	if code, _ := deliver(t, g, forged, sign(forged, time.Now(), "whsec_wrong")); code != 400 {
		t.Fatalf("forged invoice: %d, want 400", code)
	}
}

// handled is the webhook's answer to a delivery it acted on (or not).
func handled(did bool) string {
	return fmt.Sprintf(`{"handled":%v,"received":true}`, did) + "\n"
}
