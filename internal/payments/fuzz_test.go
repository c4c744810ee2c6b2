package payments_test

import (
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/payments"
)

// A webhook body is whatever reaches the public endpoint: signed or not,
// reading it never panics, an unsigned one is never read, and a signed one
// that is accepted names its event.
func FuzzWebhookEvent(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1","type":"checkout.session.completed","data":{"object":{"id":"cs_1","payment_status":"paid","amount_total":1250,"currency":"usd","client_reference_id":"ord_1"}}}`), true)
	f.Add([]byte(`{"id":"evt_2","type":"charge.refunded","data":{"object":[1,2]}}`), true)
	f.Add([]byte(`{"id":"evt_3","type":"x"}`), false)
	f.Add([]byte(`not json`), true)
	f.Add([]byte(`{"id":"evt_4","type":"invoice.paid","data":{"object":{"object":"invoice","parent":{"subscription_details":{"subscription":"sub_1","metadata":{"user":"2","plan":"1"}}},"lines":{"data":[{"period":{"end":1767225600}}]}}}}`), true)
	f.Add([]byte(`{"id":"evt_5","type":"customer.subscription.deleted","data":{"object":{"id":"sub_1","object":"subscription","items":{"data":[{"current_period_end":1767225600}]}}}}`), true)
	st := payments.NewStripe(config.Stripe{SecretKey: "sk_test_fuzz", WebhookSecret: webhookSecret, APIBase: "http://127.0.0.1:1"})
	f.Fuzz(func(t *testing.T, payload []byte, signed bool) {
		sig := "t=1,v1=00"
		if signed {
			sig = sign(payload, time.Now(), webhookSecret)
		}
		ev, err := st.Event(payload, sig)
		if err != nil {
			return
		}
		if !signed {
			t.Fatal("an unsigned delivery was read")
		}
		if ev.ID == "" || ev.Type == "" {
			t.Fatalf("event accepted without id or type: %+v", ev)
		}
	})
}
