package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func newOrder(t *testing.T, s store.Store, id string, userID, cents int64) *store.PaymentOrder {
	t.Helper()
	o := &store.PaymentOrder{ID: id, UserID: userID, Provider: "stripe", Currency: "usd", AmountCents: cents}
	must(t, s.Payments().CreateOrder(ctx(t), o), "create order "+id)
	return o
}

func credit(order, event string) store.PaymentCredit {
	return store.PaymentCredit{OrderID: order, EventID: event, SessionID: "cs_" + order, PaidCents: 1234, Quota: 6170000,
		At: time.Unix(time.Now().Unix(), 0).UTC()}
}

var paymentTests = []namedTest{
	{"a new order is pending with its checkout recorded", func(t *testing.T, s store.Store) {
		newOrder(t, s, "ord_a", 7, 2500)
		must(t, s.Payments().SetCheckout(ctx(t), "ord_a", "cs_1", "https://checkout.example/c/pay/cs_1#long"), "set checkout")
		o, err := s.Payments().GetOrder(ctx(t), "ord_a")
		must(t, err, "get order")
		if o.State != store.OrderPending || o.UserID != 7 || o.AmountCents != 2500 || o.SessionID != "cs_1" ||
			o.CheckoutURL != "https://checkout.example/c/pay/cs_1#long" || o.PaidAt != nil || o.Quota != 0 {
			t.Fatalf("order = %+v", o)
		}
		checkUTC(t, "CreatedAt", o.CreatedAt)
		_, err = s.Payments().GetOrder(ctx(t), "ord_missing")
		wantErr(t, err, store.ErrNotFound, "get an unknown order")
		wantErr(t, s.Payments().SetCheckout(ctx(t), "ord_missing", "cs", "u"), store.ErrNotFound, "checkout of an unknown order")
		wantErr(t, s.Payments().CreateOrder(ctx(t), &store.PaymentOrder{ID: "ord_a", UserID: 1, Provider: "stripe", Currency: "usd", AmountCents: 1}),
			store.ErrConflict, "a second order with the same id")
	}},
	{"an order is paid once however the credit is repeated", func(t *testing.T, s store.Store) {
		newOrder(t, s, "ord_p", 7, 1234)
		c := credit("ord_p", "evt_1")
		must(t, s.Payments().MarkPaid(ctx(t), c), "mark paid")
		wantErr(t, s.Payments().MarkPaid(ctx(t), c), store.ErrConflict, "the same event again")
		wantErr(t, s.Payments().MarkPaid(ctx(t), credit("ord_p", "evt_2")), store.ErrConflict, "another event for the order")
		newOrder(t, s, "ord_q", 7, 100)
		wantErr(t, s.Payments().MarkPaid(ctx(t), credit("ord_q", "evt_1")), store.ErrConflict, "the same event for another order")
		wantErr(t, s.Payments().MarkPaid(ctx(t), credit("ord_none", "evt_9")), store.ErrNotFound, "an unknown order")
		o, err := s.Payments().GetOrder(ctx(t), "ord_p")
		must(t, err, "get order")
		if o.State != store.OrderPaid || o.PaidCents != 1234 || o.Quota != 6170000 || o.SessionID != "cs_ord_p" || o.PaidAt == nil || !o.PaidAt.Equal(c.At) {
			t.Fatalf("paid order = %+v", o)
		}
		if q, _ := s.Payments().GetOrder(ctx(t), "ord_q"); q.State != store.OrderPending {
			t.Fatalf("the refused credit changed ord_q: %+v", q)
		}
	}},
	{"concurrent credits of one order: exactly one wins", func(t *testing.T, s store.Store) {
		newOrder(t, s, "ord_c", 7, 1234)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, lost := 0, 0
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Payments().MarkPaid(ctx(t), credit("ord_c", fmt.Sprintf("evt_%d", i%3)))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, store.ErrConflict):
					lost++
				default:
					t.Errorf("MarkPaid: %v", err)
				}
			}()
		}
		wg.Wait()
		if won != 1 || lost != 9 {
			t.Fatalf("%d credits took, %d refused; want 1 and 9", won, lost)
		}
	}},
	{"an undone credit can be made again", func(t *testing.T, s store.Store) {
		newOrder(t, s, "ord_u", 7, 1234)
		c := credit("ord_u", "evt_u")
		must(t, s.Payments().MarkPaid(ctx(t), c), "mark paid")
		must(t, s.Payments().UnmarkPaid(ctx(t), c), "unmark")
		if o, _ := s.Payments().GetOrder(ctx(t), "ord_u"); o.State != store.OrderPending || o.Quota != 0 || o.PaidAt != nil {
			t.Fatalf("after unmark: %+v", o)
		}
		must(t, s.Payments().MarkPaid(ctx(t), c), "mark paid again")
		// Undoing a credit that is not the one recorded changes nothing.
		must(t, s.Payments().UnmarkPaid(ctx(t), credit("ord_u", "evt_other")), "unmark another event")
		if o, _ := s.Payments().GetOrder(ctx(t), "ord_u"); o.State != store.OrderPaid {
			t.Fatalf("another event's undo reopened the order: %+v", o)
		}
	}},
	{"expiry moves only pending orders", func(t *testing.T, s store.Store) {
		newOrder(t, s, "ord_e", 7, 100)
		newOrder(t, s, "ord_f", 7, 100)
		must(t, s.Payments().MarkPaid(ctx(t), credit("ord_f", "evt_f")), "mark paid")
		if ok, err := s.Payments().Expire(ctx(t), "ord_e"); !ok || err != nil {
			t.Fatalf("expire pending: %v %v", ok, err)
		}
		if ok, err := s.Payments().Expire(ctx(t), "ord_f"); ok || err != nil {
			t.Fatalf("expire paid: %v %v", ok, err)
		}
		if o, _ := s.Payments().GetOrder(ctx(t), "ord_f"); o.State != store.OrderPaid {
			t.Fatalf("a paid order expired: %+v", o)
		}
		// A payment that completes after all (events arrive out of order) still counts.
		must(t, s.Payments().MarkPaid(ctx(t), credit("ord_e", "evt_e")), "pay an expired order")
	}},
	{"orders list newest first, per user or all, and failed checkouts are deleted", func(t *testing.T, s store.Store) {
		base := time.Now().Add(-time.Hour)
		for i, o := range []struct {
			id   string
			user int64
		}{{"ord_1", 1}, {"ord_2", 2}, {"ord_3", 1}, {"ord_4", 1}} {
			must(t, s.Payments().CreateOrder(ctx(t), &store.PaymentOrder{ID: o.id, UserID: o.user, Provider: "stripe", Currency: "usd",
				AmountCents: 100, CreatedAt: base.Add(time.Duration(i) * time.Minute)}), "create")
		}
		must(t, s.Payments().DeleteOrder(ctx(t), "ord_4"), "delete pending")
		mine, total, err := s.Payments().ListOrders(ctx(t), 1, store.Page{Page: 1, PageSize: 10})
		must(t, err, "list mine")
		if total != 2 || len(mine) != 2 || mine[0].ID != "ord_3" || mine[1].ID != "ord_1" {
			t.Fatalf("user 1's orders: %d %+v", total, mine)
		}
		all, total, err := s.Payments().ListOrders(ctx(t), 0, store.Page{Page: 2, PageSize: 2})
		must(t, err, "list all")
		if total != 3 || len(all) != 1 || all[0].ID != "ord_1" {
			t.Fatalf("page 2 of all: %d %+v", total, all)
		}
		must(t, s.Payments().MarkPaid(ctx(t), credit("ord_1", "evt_1")), "pay")
		must(t, s.Payments().DeleteOrder(ctx(t), "ord_1"), "delete paid")
		if _, err := s.Payments().GetOrder(ctx(t), "ord_1"); err != nil {
			t.Fatalf("a paid order was deleted: %v", err)
		}
	}},
}
