package taskhttp

import (
	"context"
	"net/http"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/task"
)

func TestPerTaskPluginSucceedsAcrossARestartAndSettlesTheCompletionUsage(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t,
		vendorAnswer{200, `{"status":"running","progress":10}`},
		vendorAnswer{200, `{"status":"done","url":"https://cdn.acme.test/v.mp4","seconds_used":8}`})
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)

	code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"a cat","seconds":5}`)
	if code != http.StatusOK {
		t.Fatalf("submit: %d %v", code, out)
	}
	id, _ := out["id"].(string)
	if len(id) != 37 || id[:5] != "task_" || out["status"] != task.StatusSubmitted {
		t.Fatalf("submit answer = %v, want a public task id and SUBMITTED", out)
	}
	if data, _ := out["data"].(map[string]any); data["id"] != id {
		t.Errorf("rendered data = %v, want the upstream id replaced by the public one", out["data"])
	}
	if got := v.submits[0]; got["model"] != "acme-v1" || got["prompt"] != "a cat" {
		t.Errorf("vendor received %v", got)
	}
	if got := v.headers[0].Get("X-Trace"); got != id {
		t.Errorf("X-Trace = %q, want the public task id", got)
	}
	// 5 s × $0.01 × 500,000 quota/USD reserved at submit.
	if got := e.quota(e.alice); got != 1_000_000-25_000 {
		t.Fatalf("quota after submit = %d, want 975000", got)
	}

	e.tick(1)
	code, out = e.do(http.MethodGet, "/acme/v1/videos/"+id, userKey, "", "")
	if code != 200 || out["status"] != task.StatusInProgress || out["progress"] != "10%" {
		t.Fatalf("query after one poll: %d %v", code, out)
	}
	if st := string(e.task(id).State); st != `{"polls":1}` {
		t.Errorf("state = %s, want the state the parse hook returned", st)
	}

	e.restart()
	e.tick(1)

	tk := e.task(id)
	if tk.Status != task.StatusSuccess || tk.ResultURL != "https://cdn.acme.test/v.mp4" || tk.BillingStatus != task.BillingSettled {
		t.Fatalf("task after restart and poll = %+v", tk)
	}
	// The completion reported 8 s: 40,000 charged in total.
	if got := e.quota(e.alice); got != 1_000_000-40_000 {
		t.Errorf("quota after settle = %d, want 960000", got)
	}
	consumes := e.logs(e.alice, store.LogConsume)
	if len(consumes) != 2 || consumes[0].Quota != 25_000 || consumes[1].Quota != 15_000 {
		t.Errorf("consume rows = %+v, want 25000 at submit and a 15000 adjustment", consumes)
	}
	if rs := e.logs(e.alice, store.LogRefund); len(rs) != 0 {
		t.Errorf("refund rows = %+v, want none", rs)
	}
	code, out = e.do(http.MethodGet, "/v1/tasks/"+id, userKey, "", "")
	if code != 200 || out["status"] != task.StatusSuccess || out["platform"] != "acme" || out["model"] != "acme-v1" {
		t.Errorf("GET /v1/tasks/{id}: %d %v", code, out)
	}
}

func TestPerTaskPluginFailureRefundsTheReservationOnce(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t,
		vendorAnswer{200, `{"status":"running"}`},
		vendorAnswer{404, `{"message":"no such job"}`})
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
	code, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"a dog"}`)
	if code != 200 {
		t.Fatalf("submit: %d %v", code, out)
	}
	id := out["id"].(string)
	e.tick(1)
	e.restart()
	e.tick(3)

	tk := e.task(id)
	if tk.Status != task.StatusFailure || tk.BillingStatus != task.BillingRefunded {
		t.Fatalf("task = %s / %s, want FAILURE / refunded", tk.Status, tk.BillingStatus)
	}
	if got := e.quota(e.alice); got != 1_000_000 {
		t.Errorf("quota = %d, want the full 1000000 back", got)
	}
	refunds := e.logs(e.alice, store.LogRefund)
	if len(refunds) != 1 || refunds[0].Quota != 25_000 {
		t.Errorf("refund rows = %+v, want one of 25000", refunds)
	}
	entries, _, err := e.st.Ledger().List(context.Background(), e.alice, store.Page{Page: 1, PageSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, le := range entries {
		kinds[le.Kind]++
	}
	if kinds[store.LedgerReserve] != 1 || kinds[store.LedgerRefund] != 1 || kinds[store.LedgerSettle] != 0 {
		t.Errorf("ledger kinds = %v, want one reserve and one refund", kinds)
	}
}
