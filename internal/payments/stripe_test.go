package payments_test

import (
	"errors"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/payments"
)

func TestWebhookSignaturesAreCheckedAsStripeSignsThem(t *testing.T) {
	st := payments.NewStripe(config.Stripe{SecretKey: secretKey, WebhookSecret: webhookSecret})
	s := fakeSession{ID: "cs_1", Order: "ord_1", Currency: "usd", Cents: 500}
	body := event("evt_1", "checkout.session.completed", "2025-03-31.basil", s, 500, "paid")
	now := time.Now()
	cases := []struct {
		name    string
		payload []byte
		header  string
		ok      bool
	}{
		{"signed now", body, sign(body, now, webhookSecret), true},
		{"signed four minutes ago", body, sign(body, now.Add(-4*time.Minute), webhookSecret), true},
		{"one of several v1 signatures is ours (secret being rolled)", body, sign(body, now, "whsec_old", webhookSecret), true},
		{"signed six minutes ago", body, sign(body, now.Add(-6*time.Minute), webhookSecret), false},
		{"another secret", body, sign(body, now, "whsec_someone_else"), false},
		{"payload changed after signing", append([]byte(" "), body...), sign(body, now, webhookSecret), false},
		{"no header", body, "", false},
		{"no v1", body, "t=" + "123", false},
		{"garbage", body, "v1=zz,t=x", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := st.Event(tc.payload, tc.header)
			if !tc.ok {
				if !errors.Is(err, payments.ErrSignature) {
					t.Fatalf("err = %v, want ErrSignature", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.ID != "evt_1" || ev.Type != "checkout.session.completed" || ev.Session.ID != "cs_1" || ev.Session.Order() != "ord_1" ||
				ev.Session.AmountTotal != 500 || ev.Session.PaymentStatus != "paid" || ev.Session.Currency != "usd" {
				t.Fatalf("event = %+v", ev)
			}
		})
	}
}

func TestEventsOfAnyAPIVersionAreRead(t *testing.T) {
	st := payments.NewStripe(config.Stripe{SecretKey: secretKey, WebhookSecret: webhookSecret})
	s := fakeSession{ID: "cs_1", Order: "ord_1", Currency: "usd"}
	for _, v := range []string{"2017-06-05", "2020-08-27", "2024-06-20", "2025-09-30.clover", "2031-01-01.future", ""} {
		body := event("evt_v", "checkout.session.completed", v, s, 100, "paid")
		ev, err := st.Event(body, sign(body, time.Now(), webhookSecret))
		if err != nil || ev.Session.AmountTotal != 100 {
			t.Errorf("API version %q: %v %+v", v, err, ev)
		}
	}
}
