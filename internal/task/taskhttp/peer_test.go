package taskhttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/plugin"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

// TestATaskTravelsThroughAPeerGatewayAndBothSettle runs two gateways, each
// on its own database and plugin generation. Gateway A reaches gateway B
// through a type 60 channel keyed with one of B's API keys; B reaches the
// vendor through a type 61 channel.
func TestATaskTravelsThroughAPeerGatewayAndBothSettle(t *testing.T) {
	var mu sync.Mutex
	var kinds []string
	polled := false
	vendorSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+vendorKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		kinds = append(kinds, r.Method+" "+r.Header.Get("X-Upstream-Kind")+" via "+r.Header.Get("X-Via"))
		switch r.Method {
		case http.MethodPost:
			_, _ = w.Write([]byte(`{"id":"vendor-1"}`))
		default:
			polled = true
			_, _ = w.Write([]byte(`{"status":"done","url":"https://cdn.vendor.test/out.mp4"}`))
		}
	}))
	t.Cleanup(vendorSrv.Close)

	b := newEnv(t, "files/relay.js")
	b.price(store.ModelPrice{Name: "relay-v1", PerCall: 0.002})
	b.channel("vendor", "relay", vendorSrv.URL, []string{"relay-v1"}, nil)

	a := newEnv(t, "files/relay.js")
	a.price(store.ModelPrice{Name: "relay-v1", PerCall: 0.002})
	a.channel("peer-b", "relay", b.srv.URL, []string{"relay-v1"}, func(c *store.Channel) {
		c.Type = plugin.ChannelTypePeerAPI
		c.Key = userKey // alice's key on gateway B
	})

	code, out := a.postJSON("/relay/v1/jobs", userKey, `{"model":"relay-v1","prompt":"a fox"}`)
	if code != 200 {
		t.Fatalf("submit on A: %d %v", code, out)
	}
	ta := a.task(out["id"].(string))
	tb := b.task(ta.UpstreamID)
	if tb.UpstreamID != "vendor-1" || tb.UserID != b.alice {
		t.Fatalf("B's task = upstream %q user %d; A's upstream id must be B's public id", tb.UpstreamID, tb.UserID)
	}

	a.tick(2) // B has not finished: A sees progress only
	if got := a.task(ta.PublicID).Status; got == task.StatusSuccess {
		t.Fatalf("A finished before B did")
	}
	b.tick(2)
	a.tick(2)
	ta, tb = a.task(ta.PublicID), b.task(tb.PublicID)
	if tb.Status != task.StatusSuccess || ta.Status != task.StatusSuccess {
		t.Fatalf("statuses: A %s, B %s", ta.Status, tb.Status)
	}
	if ta.ResultURL != "https://cdn.vendor.test/out.mp4" || ta.BillingStatus != task.BillingSettled || tb.BillingStatus != task.BillingSettled {
		t.Errorf("A result %q billing %s, B billing %s", ta.ResultURL, ta.BillingStatus, tb.BillingStatus)
	}
	if qa, qb := a.quota(a.alice), b.quota(b.alice); qa != 999_000 || qb != 999_000 {
		t.Errorf("quota A %d, B %d; each gateway bills its caller once", qa, qb)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"POST vendor via peer_api"}
	if len(kinds) < 2 || kinds[0] != want[0] || !polled {
		t.Errorf("the vendor saw %v, want B's submit for A's peer request, then B's polls", kinds)
	}
	raw, _ := json.Marshal(kinds)
	t.Logf("vendor requests: %s", raw)
}
