package taskhttp

import (
	"testing"

	"github.com/turnpike-gw/turnpike/internal/task"
)

func TestPollOutcomesFollowTheHostRules(t *testing.T) {
	tests := []struct {
		name         string
		script       []vendorAnswer
		ticks        int
		wantStatus   string
		wantFailures int
		wantBilling  string
	}{
		{"2xx progress is written", []vendorAnswer{{200, `{"status":"running","progress":40}`}}, 1, task.StatusInProgress, 0, task.BillingHeld},
		{"valid progress resets the failure count", []vendorAnswer{{500, `{}`}, {200, `{"status":"queued"}`}}, 2, task.StatusQueued, 0, task.BillingHeld},
		{"404 fails and refunds", []vendorAnswer{{404, `{}`}}, 1, task.StatusFailure, 0, task.BillingRefunded},
		{"410 fails and refunds", []vendorAnswer{{410, `{}`}}, 1, task.StatusFailure, 0, task.BillingRefunded},
		{"401 is counted, status unchanged", []vendorAnswer{{401, `{}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"403 is counted, status unchanged", []vendorAnswer{{403, `{}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"429 is counted", []vendorAnswer{{429, `{}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"5xx is counted", []vendorAnswer{{503, `{}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"other 4xx parsed as terminal fails", []vendorAnswer{{400, `{"status":"failed","error":"bad prompt"}`}}, 1, task.StatusFailure, 0, task.BillingRefunded},
		{"other 4xx parsed as non-terminal is counted", []vendorAnswer{{400, `{"status":"running"}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"unrecognised status is counted, never progress", []vendorAnswer{{200, `{"status":"weird"}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"empty status is counted", []vendorAnswer{{200, `{}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"a hook error is counted", []vendorAnswer{{200, `{"crash":true}`}}, 1, task.StatusSubmitted, 1, task.BillingHeld},
		{"max consecutive failures fail and refund", []vendorAnswer{{500, `{}`}}, 3, task.StatusFailure, 3, task.BillingRefunded},
		{"2xx success settles", []vendorAnswer{{200, `{"status":"done","url":"https://x.test/v"}`}}, 1, task.StatusSuccess, 0, task.BillingSettled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "pertask.js")
			v := newVendor(t, tt.script...)
			e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
			_, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
			id := out["id"].(string)
			before := string(e.task(id).Data)
			e.tick(tt.ticks)
			tk := e.task(id)
			if tk.Status != tt.wantStatus || tk.PollFailures != tt.wantFailures || tk.BillingStatus != tt.wantBilling {
				t.Fatalf("got %s failures=%d billing=%s, want %s failures=%d billing=%s",
					tk.Status, tk.PollFailures, tk.BillingStatus, tt.wantStatus, tt.wantFailures, tt.wantBilling)
			}
			if tt.wantStatus == task.StatusSubmitted && string(tk.Data) != before {
				t.Errorf("a counted failure changed data: %s → %s", before, tk.Data)
			}
			wantQuota := int64(1_000_000 - 25_000)
			switch tt.wantBilling {
			case task.BillingRefunded:
				wantQuota = 1_000_000
			}
			if got := e.quota(e.alice); got != wantQuota {
				t.Errorf("quota = %d, want %d", got, wantQuota)
			}
		})
	}
}

func TestTransportErrorsCountAsPollFailures(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	c := e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
	_, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
	id := out["id"].(string)
	v.srv.Close()
	_ = c
	e.tick(1)
	if tk := e.task(id); tk.Status != task.StatusSubmitted || tk.PollFailures != 1 {
		t.Fatalf("got %s failures=%d, want SUBMITTED failures=1", tk.Status, tk.PollFailures)
	}
}

func TestOuterDeadlineFailsAndRefunds(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
	_, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
	id := out["id"].(string)
	if _, err := e.st.DB().Exec("UPDATE tasks SET deadline = 1 WHERE public_id = ?", id); err != nil {
		t.Fatal(err)
	}
	e.tick(1)
	tk := e.task(id)
	if tk.Status != task.StatusFailure || tk.BillingStatus != task.BillingRefunded || tk.FailReason != "the task timed out" {
		t.Fatalf("got %+v", tk)
	}
	if v.polls != 0 {
		t.Errorf("an expired task was still polled %d times", v.polls)
	}
}
