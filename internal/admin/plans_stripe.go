package admin

import (
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/accounts"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/payments"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// subscribe opens a Stripe Checkout in subscription mode for a plan
// (CONTRACT §18). Nothing is held until Stripe reports the first invoice
// paid (invoice.paid), which the webhook turns into the grant.
func (a *API) subscribe(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	pd := a.d.Payments
	if pd.Stripe == nil {
		return notFound("card payments")
	}
	if p.UserID == 0 {
		return badRequest("sign in as a user to subscribe; the root token holds no plans")
	}
	f, err := readFields(w, r, "plan_id")
	if err != nil {
		return err
	}
	var planID int64
	if ok, err := get(f, "plan_id", &planID); err != nil || !ok {
		return firstErr(err, badField("plan_id", "is required"))
	}
	plan, err := a.d.Store.Plans().Get(r.Context(), planID)
	if err != nil {
		return err
	}
	cents := int64(math.Round(plan.PriceUSD * 100))
	if cents <= 0 {
		return badRequest("plan %s is not for sale (it has no price)", plan.Name)
	}
	id := "sub_" + hexID()
	accounts.NoteTarget(r.Context(), id)
	back := pd.consoleBase(r) + "/plans?order=" + id
	sid, url, err := pd.Stripe.CreateSubscription(r.Context(), payments.Subscribe{OrderID: id, UserID: p.UserID, PlanID: plan.ID,
		Cents: cents, Currency: pd.Settings.Currency, Interval: plan.Period, Name: "Plan " + plan.Name,
		SuccessURL: back + "&subscribe=paid", CancelURL: back + "&subscribe=cancelled"})
	if err != nil {
		a.log.Warn("payments: subscription checkout not created", "order", id, "err", err)
		return errorf(http.StatusBadGateway, "payment_provider_error", "the payment provider did not open a checkout; try again later")
	}
	apijson.Write(w, http.StatusOK, map[string]string{"id": id, "session": sid, "checkout_url": url})
	return nil
}

// subscriptionEvent applies invoice.paid (the plan's period starts or is
// renewed to the period's end) and customer.subscription.deleted (the
// plan ends at the end of the period paid for), each event once by its id.
// It reports whether the event was one of these and applied now.
func (a *API) subscriptionEvent(r *http.Request, ev *payments.Event) (bool, error) {
	b := ev.Billing
	s := store.PlanSubscription{EventID: ev.ID, Subscription: b.Subscription, UserID: b.UserID, PlanID: b.PlanID, Until: b.PeriodEnd}
	accounts.NoteTarget(r.Context(), b.Subscription)
	var applied bool
	var err error
	switch ev.Type {
	case "invoice.paid":
		if s.Until.IsZero() {
			a.log.Warn("payments: paid invoice states no period; plan not renewed", "subscription", b.Subscription)
			return false, nil
		}
		applied, err = a.d.Store.Plans().Renew(r.Context(), s)
	case "customer.subscription.deleted":
		if s.Until.IsZero() {
			s.Until = time.Now().UTC()
		}
		applied, err = a.d.Store.Plans().End(r.Context(), s)
	default:
		return false, nil
	}
	if errors.Is(err, store.ErrNotFound) {
		// A subscription of another system on the same Stripe account.
		a.log.Info("payments: invoice of an unknown subscription ignored", "subscription", b.Subscription)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if applied {
		err = a.reloadPlans(r.Context())
	}
	return applied, err
}
