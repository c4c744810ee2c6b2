package store

import (
	"context"
	"time"
)

// PaymentOrder is credit bought from a payment provider: made pending when
// the user starts a checkout, paid once the provider reports the money
// taken (and the top-up made), or expired when the checkout lapsed.
type PaymentOrder struct {
	// ID is the gateway's order id, sent to the provider as the client
	// reference; random, so it reveals nothing about other orders.
	ID       string `json:"id"`
	UserID   int64  `json:"user_id"`
	Provider string `json:"provider"`
	Currency string `json:"currency"`
	// AmountCents is what the user asked to pay, in the currency's minor
	// unit.
	AmountCents int64  `json:"amount_cents"`
	State       string `json:"state"`
	// SessionID and CheckoutURL are the provider's checkout session.
	SessionID   string `json:"session_id"`
	CheckoutURL string `json:"checkout_url,omitempty"`
	// PaidCents is what the provider reported paid and Quota what that
	// credited; both 0 until paid.
	PaidCents int64      `json:"paid_cents"`
	Quota     int64      `json:"quota"`
	CreatedAt time.Time  `json:"created_at"`
	PaidAt    *time.Time `json:"paid_at"`
}

// Payment order states.
const (
	OrderPending = "pending"
	OrderPaid    = "paid"
	OrderExpired = "expired"
)

// PaymentCredit is one crediting of an order, keyed twice: by the order and
// by the provider's event. The database holds both unique, so however many
// nodes receive however many deliveries of however many events for one
// checkout, one of them credits it.
type PaymentCredit struct {
	OrderID   string
	EventID   string
	SessionID string
	PaidCents int64
	Quota     int64
	At        time.Time
}

// PaymentRepo stores payment orders.
type PaymentRepo interface {
	// CreateOrder stores a new pending order; o.ID is the caller's.
	CreateOrder(ctx context.Context, o *PaymentOrder) error
	// SetCheckout records the provider's checkout session of an order.
	SetCheckout(ctx context.Context, id, sessionID, url string) error
	// DeleteOrder removes a pending order whose checkout could not be
	// made, so the user's list holds no order that can never be paid.
	DeleteOrder(ctx context.Context, id string) error
	// GetOrder returns one order or ErrNotFound.
	GetOrder(ctx context.Context, id string) (*PaymentOrder, error)
	// ListOrders lists newest first; userID 0 lists every user's.
	ListOrders(ctx context.Context, userID int64, p Page) ([]PaymentOrder, int, error)
	// MarkPaid records c and moves its order to paid in one transaction.
	// It is ErrConflict when the order, or the event, was credited
	// already, and ErrNotFound for an unknown order.
	MarkPaid(ctx context.Context, c PaymentCredit) error
	// UnmarkPaid undoes MarkPaid when the top-up that should follow it
	// could not be made, so a later delivery of the event credits it.
	UnmarkPaid(ctx context.Context, c PaymentCredit) error
	// Expire moves a pending order to expired and reports whether it did;
	// a paid order stays paid.
	Expire(ctx context.Context, id string) (bool, error)
}
