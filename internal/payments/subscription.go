package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// Subscribe is what a subscription Checkout Session is opened for: a plan
// billed every Interval (day, week, month or year) at Cents.
type Subscribe struct {
	OrderID    string
	UserID     int64
	PlanID     int64
	Cents      int64
	Currency   string
	Interval   string
	Name       string
	SuccessURL string
	CancelURL  string
}

// CreateSubscription opens a Checkout Session in subscription mode. The
// user and plan go into the subscription's metadata too, so each invoice
// of it names them (Stripe copies it to the invoice's subscription
// details) whichever event arrives first.
func (s *Stripe) CreateSubscription(ctx context.Context, c Subscribe) (sessionID, url string, err error) {
	meta := map[string]string{"order": c.OrderID, "user": strconv.FormatInt(c.UserID, 10), "plan": strconv.FormatInt(c.PlanID, 10)}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		ClientReferenceID: stripe.String(c.OrderID),
		SuccessURL:        stripe.String(c.SuccessURL),
		CancelURL:         stripe.String(c.CancelURL),
		Metadata:          meta,
		SubscriptionData:  &stripe.CheckoutSessionCreateSubscriptionDataParams{Metadata: meta},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(c.Currency),
				UnitAmount:  stripe.Int64(c.Cents),
				Recurring:   &stripe.CheckoutSessionCreateLineItemPriceDataRecurringParams{Interval: stripe.String(c.Interval)},
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(c.Name)},
			},
		}},
	}
	params.Context = ctx
	sess, err := s.client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return "", "", fmt.Errorf("stripe: create subscription checkout: %w", err)
	}
	if sess.ID == "" || sess.URL == "" {
		return "", "", errors.New("stripe: the checkout session has no id or url")
	}
	return sess.ID, sess.URL, nil
}

// Billing is what an invoice.paid or customer.subscription.deleted event
// says of a subscription: its id, the user and plan its metadata names (0
// when it names none), and the end of the period paid for or ending.
type Billing struct {
	Subscription string
	UserID       int64
	PlanID       int64
	PeriodEnd    time.Time
}

// invoiceObject is an invoice or a subscription in the shapes of older and
// newer API versions: the subscription's id and metadata moved under
// parent.subscription_details, the period's end into the line items.
type invoiceObject struct {
	ID           string          `json:"id"`
	Object       string          `json:"object"`
	Subscription json.RawMessage `json:"subscription"`
	Metadata     map[string]string
	Details      *subDetails `json:"subscription_details"`
	Parent       *struct {
		Details *subDetails `json:"subscription_details"`
	} `json:"parent"`
	Lines *struct {
		Data []struct {
			Period struct {
				End int64 `json:"end"`
			} `json:"period"`
		} `json:"data"`
	} `json:"lines"`
	PeriodEnd        int64 `json:"period_end"`
	CurrentPeriodEnd int64 `json:"current_period_end"`
	EndedAt          int64 `json:"ended_at"`
	Items            *struct {
		Data []struct {
			CurrentPeriodEnd int64 `json:"current_period_end"`
		} `json:"data"`
	} `json:"items"`
}

type subDetails struct {
	Subscription json.RawMessage   `json:"subscription"`
	Metadata     map[string]string `json:"metadata"`
}

// idOf reads an expandable field: an id string or an object with one.
func idOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.ID
}

// readBilling reads an invoice (invoice.paid) or a subscription
// (customer.subscription.*) object.
func readBilling(obj json.RawMessage) (Billing, error) {
	var o invoiceObject
	if err := json.Unmarshal(obj, &o); err != nil {
		return Billing{}, fmt.Errorf("payments: the event's object is not an invoice or subscription: %w", err)
	}
	var b Billing
	meta := o.Metadata
	if o.Object == "subscription" {
		b.Subscription = o.ID
	} else {
		b.Subscription = idOf(o.Subscription)
		meta = nil
	}
	for _, d := range []*subDetails{o.Details, parentDetails(&o)} {
		if d == nil {
			continue
		}
		if b.Subscription == "" {
			b.Subscription = idOf(d.Subscription)
		}
		if len(d.Metadata) > 0 {
			meta = d.Metadata
		}
	}
	b.UserID, _ = strconv.ParseInt(meta["user"], 10, 64)
	b.PlanID, _ = strconv.ParseInt(meta["plan"], 10, 64)
	b.PeriodEnd = periodEnd(&o)
	if b.Subscription == "" {
		return b, errors.New("payments: the event names no subscription")
	}
	return b, nil
}

func parentDetails(o *invoiceObject) *subDetails {
	if o.Parent == nil {
		return nil
	}
	return o.Parent.Details
}

// periodEnd is the latest period end the object states.
func periodEnd(o *invoiceObject) time.Time {
	end := max(o.CurrentPeriodEnd, o.PeriodEnd)
	if o.Lines != nil {
		for _, l := range o.Lines.Data {
			end = max(end, l.Period.End)
		}
	}
	if o.Items != nil {
		for _, it := range o.Items.Data {
			end = max(end, it.CurrentPeriodEnd)
		}
	}
	if end == 0 {
		end = o.EndedAt
	}
	if end == 0 {
		return time.Time{}
	}
	return time.Unix(end, 0).UTC()
}
