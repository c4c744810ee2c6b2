// Package payments talks to card payment providers: it opens a checkout for
// an order and verifies and reads the provider's webhook events. It keeps
// no state and moves no money; internal/admin records orders and credits
// them through billing.
package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/turnpike-gw/turnpike/internal/config"
)

// SignatureTolerance is how old a webhook's signed timestamp may be; older
// deliveries are refused as possible replays of a captured request.
const SignatureTolerance = 5 * time.Minute

// Stripe is a Stripe account: Checkout Sessions out, webhook events in.
type Stripe struct {
	client *stripe.Client
	secret string
}

// NewStripe returns the client for cfg; its API calls go to cfg.Base().
func NewStripe(cfg config.Stripe) *Stripe {
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:        stripe.String(cfg.Base()),
		HTTPClient: &http.Client{Timeout: 30 * time.Second},
		// One retry, under the idempotency key the client adds to every
		// POST, so a lost answer does not open a second session.
		MaxNetworkRetries: stripe.Int64(1),
		EnableTelemetry:   stripe.Bool(false),
		// Failures are returned and logged by the caller; the library's own
		// logger would write to stderr beside the gateway's log.
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	return &Stripe{client: stripe.NewClient(cfg.SecretKey, stripe.WithBackends(&stripe.Backends{API: backend})), secret: cfg.WebhookSecret}
}

// Checkout is what a Checkout Session is opened for.
type Checkout struct {
	OrderID  string
	Cents    int64
	Currency string
	// Name is the line item's name on Stripe's payment page.
	Name       string
	SuccessURL string
	CancelURL  string
}

// CreateCheckout opens a Checkout Session in payment mode for one line item
// of c.Cents, with the order as the client reference (and in the metadata,
// which survives where the reference is not shown), and returns its id and
// the address to send the user to.
func (s *Stripe) CreateCheckout(ctx context.Context, c Checkout) (sessionID, url string, err error) {
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(c.OrderID),
		SuccessURL:        stripe.String(c.SuccessURL),
		CancelURL:         stripe.String(c.CancelURL),
		Metadata:          map[string]string{"order": c.OrderID},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(c.Currency),
				UnitAmount:  stripe.Int64(c.Cents),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(c.Name)},
			},
		}},
	}
	params.Context = ctx
	sess, err := s.client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return "", "", fmt.Errorf("stripe: create checkout session: %w", err)
	}
	if sess.ID == "" || sess.URL == "" {
		return "", "", errors.New("stripe: the checkout session has no id or url")
	}
	return sess.ID, sess.URL, nil
}

// ErrSignature is a webhook delivery that is not provably from Stripe: no
// or a malformed Stripe-Signature header, no matching v1 signature, or a
// signed timestamp older than SignatureTolerance.
var ErrSignature = errors.New("payments: the webhook signature does not verify")

// Event is the part of a Stripe event the gateway acts on.
type Event struct {
	ID   string
	Type string
	// Session is data.object for checkout.session.* events.
	Session Session
	// Billing is data.object read for invoice.paid and
	// customer.subscription.* events.
	Billing Billing
}

// Session is a Checkout Session as an event carries it.
type Session struct {
	ID                string            `json:"id"`
	ClientReferenceID string            `json:"client_reference_id"`
	PaymentStatus     string            `json:"payment_status"`
	Currency          string            `json:"currency"`
	AmountTotal       int64             `json:"amount_total"`
	Metadata          map[string]string `json:"metadata"`
}

// Order is the gateway order a session was opened for.
func (s Session) Order() string {
	if s.ClientReferenceID != "" {
		return s.ClientReferenceID
	}
	return s.Metadata["order"]
}

// Event verifies a webhook delivery's signature (HMAC-SHA256 of
// "t.payload" with the webhook secret, any of several v1 signatures, within
// SignatureTolerance) and reads the event. Only the fields used are read,
// so events of any API version are accepted.
func (s *Stripe) Event(payload []byte, signature string) (*Event, error) {
	if err := webhook.ValidatePayloadWithTolerance(payload, signature, s.secret, SignatureTolerance); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	var raw struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(payload, &raw); err != nil {
		return nil, fmt.Errorf("payments: the event is not JSON: %w", err)
	}
	if raw.ID == "" || raw.Type == "" {
		return nil, errors.New("payments: the event has no id or type")
	}
	ev := &Event{ID: raw.ID, Type: raw.Type}
	if len(raw.Data.Object) > 0 {
		// Fields of another shape (other event types) are simply not a
		// session; the handler ignores those events.
		_ = json.Unmarshal(raw.Data.Object, &ev.Session)
	}
	if raw.Type == "invoice.paid" || strings.HasPrefix(raw.Type, "customer.subscription.") {
		b, err := readBilling(raw.Data.Object)
		if err != nil {
			return nil, err
		}
		ev.Billing = b
	}
	return ev, nil
}
