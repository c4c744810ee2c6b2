package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// paymentsMigration adds top-ups by card: the orders users start, and the
// credits that pay them out. A credit is unique by order and by the
// provider's event, which is what keeps an order from paying out twice
// whatever the provider's deliveries do. It is an accounts version (60–69).
var paymentsMigration = Migration{Version: 64, Name: "payment orders", SQL: `
CREATE TABLE payment_orders (
	id {{string}} NOT NULL PRIMARY KEY,
	user_id {{bigint}} NOT NULL,
	provider {{string}} NOT NULL,
	currency {{string}} NOT NULL,
	amount_cents {{bigint}} NOT NULL,
	state {{string}} NOT NULL,
	session_id {{string}} NULL,
	checkout_url {{text}} NULL,
	paid_cents {{bigint}} NOT NULL,
	quota {{bigint}} NOT NULL,
	created_unix {{bigint}} NOT NULL,
	paid_unix {{bigint}} NULL
) {{options}};
CREATE INDEX payment_orders_user_idx ON payment_orders (user_id, created_unix);
CREATE TABLE payment_credits (
	order_id {{string}} NOT NULL PRIMARY KEY,
	event_id {{string}} NOT NULL,
	session_id {{string}} NOT NULL,
	paid_cents {{bigint}} NOT NULL,
	quota {{bigint}} NOT NULL,
	created_unix {{bigint}} NOT NULL,
	CONSTRAINT payment_credits_event UNIQUE (event_id)
) {{options}};
`}

type paymentRepo struct{ s *Store }

// Payments returns the payment orders.
func (s *Store) Payments() store.PaymentRepo { return paymentRepo{s} }

const orderColumns = "id, user_id, provider, currency, amount_cents, state, session_id, checkout_url, paid_cents, quota, created_unix, paid_unix"

func (r paymentRepo) CreateOrder(ctx context.Context, o *store.PaymentOrder) error {
	if o.CreatedAt.IsZero() {
		o.CreatedAt = time.Now().UTC()
	}
	if o.State == "" {
		o.State = store.OrderPending
	}
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind(`INSERT INTO payment_orders (`+orderColumns+`)
VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, 0, 0, ?, NULL)`),
		o.ID, o.UserID, o.Provider, o.Currency, o.AmountCents, o.State, o.CreatedAt.Unix())
	return wrap(err, "payment order")
}

func (r paymentRepo) SetCheckout(ctx context.Context, id, sessionID, url string) error {
	return r.s.execOne(ctx, r.s.db, "payment order", "UPDATE payment_orders SET session_id = ?, checkout_url = ? WHERE id = ?", sessionID, url, id)
}

func (r paymentRepo) DeleteOrder(ctx context.Context, id string) error {
	_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM payment_orders WHERE id = ? AND state = ?"), id, store.OrderPending)
	return wrap(err, "payment order")
}

func (r paymentRepo) GetOrder(ctx context.Context, id string) (*store.PaymentOrder, error) {
	o, err := scanOrder(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+orderColumns+" FROM payment_orders WHERE id = ?"), id))
	if err != nil {
		return nil, wrap(err, "payment order")
	}
	return o, nil
}

func (r paymentRepo) ListOrders(ctx context.Context, userID int64, p store.Page) ([]store.PaymentOrder, int, error) {
	where, args := "", []any{}
	if userID != 0 {
		where, args = " WHERE user_id = ?", append(args, userID)
	}
	var total int
	if err := r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT COUNT(*) FROM payment_orders"+where), args...).Scan(&total); err != nil {
		return nil, 0, wrap(err, "payment orders")
	}
	limit, offset := limitOffset(p)
	rows, err := r.s.db.QueryContext(ctx, r.s.Rebind("SELECT "+orderColumns+" FROM payment_orders"+where+
		" ORDER BY created_unix DESC, id DESC LIMIT ? OFFSET ?"), append(args, limit, offset)...)
	if err != nil {
		return nil, 0, wrap(err, "payment orders")
	}
	defer rows.Close()
	out := []store.PaymentOrder{}
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, 0, wrap(err, "payment orders")
		}
		out = append(out, *o)
	}
	return out, total, wrap(rows.Err(), "payment orders")
}

func (r paymentRepo) MarkPaid(ctx context.Context, c store.PaymentCredit) error {
	return wrap(r.s.withTx(ctx, func(tx *sql.Tx) error {
		// The credit row first: its two unique keys are the guarantee, and a
		// second delivery waits here for the first to commit or roll back.
		if _, err := tx.ExecContext(ctx, r.s.Rebind(`INSERT INTO payment_credits (order_id, event_id, session_id, paid_cents, quota, created_unix)
VALUES (?, ?, ?, ?, ?, ?)`), c.OrderID, c.EventID, c.SessionID, c.PaidCents, c.Quota, c.At.Unix()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, r.s.Rebind(`UPDATE payment_orders SET state = ?, session_id = ?, paid_cents = ?, quota = ?, paid_unix = ?
WHERE id = ? AND state <> ?`), store.OrderPaid, c.SessionID, c.PaidCents, c.Quota, c.At.Unix(), c.OrderID, store.OrderPaid)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var state string
		if err := tx.QueryRowContext(ctx, r.s.Rebind("SELECT state FROM payment_orders WHERE id = ?"), c.OrderID).Scan(&state); err != nil {
			return err // sql.ErrNoRows: no such order
		}
		return store.ErrConflict
	}), "payment credit")
}

func (r paymentRepo) UnmarkPaid(ctx context.Context, c store.PaymentCredit) error {
	return wrap(r.s.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, r.s.Rebind("DELETE FROM payment_credits WHERE order_id = ? AND event_id = ?"), c.OrderID, c.EventID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return err // nothing of this credit to undo
		}
		_, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE payment_orders SET state = ?, paid_cents = 0, quota = 0, paid_unix = NULL WHERE id = ?"),
			store.OrderPending, c.OrderID)
		return err
	}), "payment credit")
}

func (r paymentRepo) Expire(ctx context.Context, id string) (bool, error) {
	res, err := r.s.db.ExecContext(ctx, r.s.Rebind("UPDATE payment_orders SET state = ? WHERE id = ? AND state = ?"), store.OrderExpired, id, store.OrderPending)
	if err != nil {
		return false, wrap(err, "payment order")
	}
	n, err := res.RowsAffected()
	return n == 1, wrap(err, "payment order")
}

func scanOrder(row interface{ Scan(...any) error }) (*store.PaymentOrder, error) {
	var o store.PaymentOrder
	var session, url sql.NullString
	var created int64
	var paid sql.NullInt64
	if err := row.Scan(&o.ID, &o.UserID, &o.Provider, &o.Currency, &o.AmountCents, &o.State, &session, &url,
		&o.PaidCents, &o.Quota, &created, &paid); err != nil {
		return nil, err
	}
	o.SessionID, o.CheckoutURL = session.String, url.String
	o.CreatedAt = time.Unix(created, 0).UTC()
	if paid.Valid {
		t := time.Unix(paid.Int64, 0).UTC()
		o.PaidAt = &t
	}
	return &o, nil
}
