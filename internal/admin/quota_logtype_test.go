package admin

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// CONTRACT §16: a negative quota delta is logged as adjust, not topup, so
// money-in reports do not count removals as payments.
func TestANegativeQuotaDeltaIsLoggedAsAnAdjustment(t *testing.T) {
	e := newEnv(t)
	e.run([]scenario{
		{name: "a top-up", who: "admin", method: "POST", path: "/api/users/{alice}/quota", body: `{"delta":250}`, status: 200},
		{name: "a removal", who: "admin", method: "POST", path: "/api/users/{alice}/quota", body: `{"delta":-50}`, status: 200},
	})
	want := map[int64]string{250: store.LogTopUp, -50: store.LogAdjust}
	deadline := time.Now().Add(3 * time.Second)
	for {
		logs, _, err := e.d.Store.Logs().List(context.Background(), store.LogFilter{UserID: e.ids["alice"]}, store.Page{Page: 1, PageSize: 50})
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]string{}
		for _, l := range logs {
			if _, ok := want[l.Quota]; ok {
				got[l.Quota] = l.Type
			}
		}
		if len(got) == len(want) {
			for q, typ := range want {
				if got[q] != typ {
					t.Errorf("delta %d logged as %q, want %q", q, got[q], typ)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log rows for the two changes not written: %+v", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
