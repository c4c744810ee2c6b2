package admin

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/payments"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// PaymentDeps are top-ups by card (CONTRACT.md §17); a nil Stripe leaves
// them answering 404.
type PaymentDeps struct {
	Stripe   *payments.Stripe
	Settings config.Payments
	// ConsoleURL is where Stripe sends the user back to (the console's
	// pages under it); empty means the address of the buyer's request.
	ConsoleURL string
}

// consoleBase is the console's address for a page Stripe sends the buyer
// back to: the configured one, else the one the buyer's browser used (a
// listen address such as :0 or 0.0.0.0 names no reachable page).
func (pd PaymentDeps) consoleBase(r *http.Request) string {
	if pd.ConsoleURL != "" {
		return strings.TrimRight(pd.ConsoleURL, "/")
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (a *API) routePayments(mux *http.ServeMux) {
	a.route(mux, "POST /api/user/topup", store.RoleUser, "payment order", a.createTopUp)
	a.route(mux, "GET /api/user/topups", store.RoleUser, "payment order", a.listOwnTopUps)
	a.route(mux, "GET /api/payments", store.RoleAdmin, "payment order", a.listPayments)
	a.route(mux, "POST /api/payments/stripe/webhook", "", "payment order", a.stripeWebhook)
}

// paymentStatus tells the console whether it can offer card top-ups, and
// their bounds; nil when it cannot.
func (a *API) paymentStatus() any {
	pd := a.d.Payments
	if pd.Stripe == nil {
		return nil
	}
	return map[string]any{"provider": "stripe", "currency": pd.Settings.Currency, "min_usd": pd.Settings.MinUSD, "max_usd": pd.Settings.MaxUSD}
}

// orderView is an order as the API shows it: amounts in the currency's
// minor unit and in whole units, what was credited, and the checkout
// address only while the order can still be paid.
type orderView struct {
	store.PaymentOrder
	Amount float64 `json:"amount_usd"`
}

func viewOrder(o store.PaymentOrder) orderView {
	if o.State != store.OrderPending {
		o.CheckoutURL = ""
	}
	return orderView{PaymentOrder: o, Amount: float64(o.AmountCents) / 100}
}

func (a *API) createTopUp(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pd := a.d.Payments
	if pd.Stripe == nil {
		return notFound("card top-ups")
	}
	if p.UserID == 0 {
		return badRequest("sign in as a user to buy credit; the root token has no balance")
	}
	f, err := readFields(w, r, "amount_usd")
	if err != nil {
		return err
	}
	cents, err := topUpCents(f["amount_usd"], pd.Settings)
	if err != nil {
		return err
	}
	o := &store.PaymentOrder{ID: "ord_" + hexID(), UserID: p.UserID, Provider: "stripe", Currency: pd.Settings.Currency, AmountCents: cents}
	if err := a.d.Store.Payments().CreateOrder(r.Context(), o); err != nil {
		return err
	}
	accounts.NoteTarget(r.Context(), o.ID)
	back := pd.consoleBase(r) + "/account?order=" + o.ID
	sid, url, err := pd.Stripe.CreateCheckout(r.Context(), payments.Checkout{OrderID: o.ID, Cents: cents, Currency: o.Currency,
		Name: "Gateway credit", SuccessURL: back + "&topup=paid", CancelURL: back + "&topup=cancelled"})
	if err == nil {
		err = a.d.Store.Payments().SetCheckout(r.Context(), o.ID, sid, url)
	}
	if err != nil {
		if derr := a.d.Store.Payments().DeleteOrder(r.Context(), o.ID); derr != nil {
			a.log.Error("payments: the order of a failed checkout could not be removed", "order", o.ID, "err", derr)
		}
		a.log.Warn("payments: checkout session not created", "order", o.ID, "err", err)
		return errorf(http.StatusBadGateway, "payment_provider_error", "the payment provider did not open a checkout; try again later")
	}
	apijson.Write(w, http.StatusOK, map[string]string{"id": o.ID, "checkout_url": url})
	return nil
}

// topUpCents reads amount_usd: a JSON number of whole cents at most,
// within the configured bounds.
func topUpCents(raw json.RawMessage, s config.Payments) (int64, error) {
	bounds := badField("amount_usd", "must be a number of US dollars from %s to %s, in whole cents", usd(s.MinUSD), usd(s.MaxUSD))
	txt := strings.TrimSpace(string(raw))
	if txt == "" || txt[0] == '"' || txt == "null" {
		return 0, bounds
	}
	amt, ok := new(big.Rat).SetString(txt)
	if !ok || len(txt) > 32 {
		return 0, bounds
	}
	cents := new(big.Rat).Mul(amt, big.NewRat(100, 1))
	if !cents.IsInt() {
		return 0, bounds
	}
	lo, hi := new(big.Rat).SetFloat64(s.MinUSD), new(big.Rat).SetFloat64(s.MaxUSD)
	if lo == nil || hi == nil || amt.Cmp(lo) < 0 || amt.Cmp(hi) > 0 {
		return 0, bounds
	}
	return cents.Num().Int64(), nil
}

func usd(v float64) string {
	return "$" + strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

func (a *API) listOwnTopUps(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if p.UserID == 0 {
		return badRequest("sign in as a user to see your orders; the root token has none (GET /api/payments lists all)")
	}
	return a.listOrders(w, r, p.UserID)
}

func (a *API) listPayments(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	uid, err := queryID(r, "user_id")
	if err != nil {
		return err
	}
	return a.listOrders(w, r, uid)
}

func (a *API) listOrders(w http.ResponseWriter, r *http.Request, userID int64) error {
	pg, err := parsePage(r)
	if err != nil {
		return err
	}
	items, total, err := a.d.Store.Payments().ListOrders(r.Context(), userID, pg)
	if err != nil {
		return err
	}
	views := make([]orderView, len(items))
	for i, o := range items {
		views[i] = viewOrder(o)
	}
	apijson.Write(w, http.StatusOK, newList(views, total))
	return nil
}

// webhookBodyLimit is far above any Checkout Session event.
const webhookBodyLimit = 1 << 20

// stripeWebhook takes Stripe's events. Only a delivery whose signature
// verifies does anything; a paid checkout credits its order once (the
// store's unique credit row decides, across nodes and replays); an expired
// one ends its pending order; every other event is acknowledged and
// ignored, so Stripe stops retrying it.
func (a *API) stripeWebhook(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	st := a.d.Payments.Stripe
	if st == nil {
		return notFound("card top-ups")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhookBodyLimit))
	if err != nil {
		return badRequest("the event could not be read")
	}
	ev, err := st.Event(body, r.Header.Get("Stripe-Signature"))
	if err != nil {
		a.log.Warn("payments: webhook refused", "err", err)
		if errors.Is(err, payments.ErrSignature) {
			return errorf(http.StatusBadRequest, "invalid_signature", "the Stripe-Signature header does not verify")
		}
		return badRequest("the event could not be read")
	}
	handled := false
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		if ev.Session.PaymentStatus == "paid" {
			if handled, err = a.creditOrder(r, ev); err != nil {
				return err
			}
		}
	case "invoice.paid", "customer.subscription.deleted":
		if handled, err = a.subscriptionEvent(r, ev); err != nil {
			return err
		}
	case "checkout.session.expired":
		if id := ev.Session.Order(); id != "" {
			accounts.NoteTarget(r.Context(), id)
			if handled, err = a.d.Store.Payments().Expire(r.Context(), id); err != nil {
				return err
			}
		}
	}
	apijson.Write(w, http.StatusOK, map[string]bool{"received": true, "handled": handled})
	return nil
}

// creditOrder pays out a paid checkout: what Stripe reports paid, converted
// at quota_per_usd, as a topup row naming the order and session. The order
// is marked paid first, in the one transaction that makes the credit
// unique; if the top-up then fails, the mark is undone and the delivery
// answered 500, so Stripe's retry credits it.
func (a *API) creditOrder(r *http.Request, ev *payments.Event) (bool, error) {
	ctx, s := r.Context(), ev.Session
	id := s.Order()
	if id == "" {
		return false, nil
	}
	accounts.NoteTarget(ctx, id)
	o, err := a.d.Store.Payments().GetOrder(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		// Not an order of this gateway: the Stripe account may serve others.
		a.log.Info("payments: paid checkout for an unknown order ignored", "order", id, "session", s.ID)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if o.Provider != "stripe" || (o.SessionID != "" && o.SessionID != s.ID) || !strings.EqualFold(s.Currency, o.Currency) || s.AmountTotal <= 0 {
		a.log.Error("payments: paid checkout does not match its order; not credited", "order", id, "session", s.ID,
			"order_session", o.SessionID, "currency", s.Currency, "amount_total", s.AmountTotal)
		return false, nil
	}
	c := store.PaymentCredit{OrderID: o.ID, EventID: ev.ID, SessionID: s.ID, PaidCents: s.AmountTotal,
		Quota: centsToQuota(s.AmountTotal, a.d.Billing.QuotaPerUSD()), At: time.Now().UTC()}
	if c.Quota <= 0 {
		return false, nil
	}
	err = a.d.Store.Payments().MarkPaid(ctx, c)
	paidBefore := errors.Is(err, store.ErrConflict)
	if err != nil && !paidBefore {
		return false, err
	}
	other, _ := json.Marshal(map[string]any{
		"note":    fmt.Sprintf("card top-up, order %s", o.ID),
		"payment": map[string]any{"provider": "stripe", "order": o.ID, "session": s.ID, "paid_cents": s.AmountTotal, "currency": o.Currency},
	})
	// Also for an order marked paid before: the credit's ledger key makes
	// it once-only, and a node that died between the mark and the credit
	// left it to this (retried) delivery.
	credited, err := a.d.Billing.Credit(ctx, billing.Credit{UserID: o.UserID, Delta: c.Quota, Key: "topup:stripe:" + o.ID, Detail: other})
	if err != nil {
		if paidBefore {
			return false, err
		}
		if uerr := a.d.Store.Payments().UnmarkPaid(context.WithoutCancel(ctx), c); uerr != nil {
			a.log.Error("payments: top-up failed and the order could not be reopened; credit it by hand", "order", o.ID, "err", uerr)
		}
		return false, err
	}
	return credited.Applied, nil
}

// centsToQuota converts minor currency units to quota, rounding half up
// once, in arbitrary precision so no amount Stripe reports can overflow.
func centsToQuota(cents, quotaPerUSD int64) int64 {
	q := new(big.Int).Mul(big.NewInt(cents), big.NewInt(quotaPerUSD))
	q.Add(q, big.NewInt(50))
	q.Quo(q, big.NewInt(100))
	if !q.IsInt64() {
		return 0
	}
	return q.Int64()
}

// hexID is an order id's random part: 96 bits, so ids cannot be guessed.
func hexID() string { return hex.EncodeToString(random(12)) }
