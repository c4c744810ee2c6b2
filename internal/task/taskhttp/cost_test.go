package taskhttp

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A task's rows carry what they cost upstream at the channel's discount:
// the submit's reservation, its settle correction and a failure's refund.
func TestTaskRowsRecordTheirUpstreamCostAtTheChannelsDiscount(t *testing.T) {
	tests := []struct {
		name     string
		answers  []vendorAnswer
		typ      string
		wantCost []string
	}{
		// 5 s × $0.01 reserved ($0.05), 8 s used: a $0.03 correction; the channel pays 40 %.
		{"settled above the reservation", []vendorAnswer{{200, `{"status":"done","url":"https://cdn.acme.test/v.mp4","seconds_used":8}`}},
			store.LogConsume, []string{"0.02", "0.012"}},
		{"refunded after a failure", []vendorAnswer{{404, `{"message":"no such job"}`}}, store.LogRefund, []string{"0.02"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "pertask.js")
			v := newVendor(t, tt.answers...)
			discount := 0.4
			e.channel("acme-cheap", "acme", v.srv.URL, []string{"acme-v1"}, func(c *store.Channel) {
				c.Cost = &store.ChannelCost{Discount: &discount}
			})
			code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"a cat","seconds":5}`)
			if code != http.StatusOK {
				t.Fatalf("submit: %d %v", code, out)
			}
			e.tick(3)
			rows := e.logs(e.alice, tt.typ)
			if tt.typ == store.LogRefund {
				rows = append(e.logs(e.alice, store.LogConsume), rows...)
				tt.wantCost = append([]string{"0.02"}, tt.wantCost...)
			}
			if len(rows) != len(tt.wantCost) {
				t.Fatalf("rows = %+v, want %d", rows, len(tt.wantCost))
			}
			for i, r := range rows {
				var o struct {
					Cost string `json:"upstream_cost_usd"`
				}
				if err := json.Unmarshal(r.Other, &o); err != nil || o.Cost != tt.wantCost[i] {
					t.Errorf("%s row of %d quota: upstream_cost_usd %q, want %q (%s)", r.Type, r.Quota, o.Cost, tt.wantCost[i], r.Other)
				}
			}
		})
	}
}
