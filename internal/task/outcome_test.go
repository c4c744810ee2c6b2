package task

import (
	"context"
	"errors"
	"net/http"
	"testing"
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
		{"2xx progress is written", []vendorAnswer{{200, `{"status":"running","progress":40}`}}, 1, StatusInProgress, 0, BillingHeld},
		{"valid progress resets the failure count", []vendorAnswer{{500, `{}`}, {200, `{"status":"queued"}`}}, 2, StatusQueued, 0, BillingHeld},
		{"404 fails and refunds", []vendorAnswer{{404, `{}`}}, 1, StatusFailure, 0, BillingRefunded},
		{"410 fails and refunds", []vendorAnswer{{410, `{}`}}, 1, StatusFailure, 0, BillingRefunded},
		{"401 is counted, status unchanged", []vendorAnswer{{401, `{}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"403 is counted, status unchanged", []vendorAnswer{{403, `{}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"429 is counted", []vendorAnswer{{429, `{}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"5xx is counted", []vendorAnswer{{503, `{}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"other 4xx parsed as terminal fails", []vendorAnswer{{400, `{"status":"failed","error":"bad prompt"}`}}, 1, StatusFailure, 0, BillingRefunded},
		{"other 4xx parsed as non-terminal is counted", []vendorAnswer{{400, `{"status":"running"}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"unrecognised status is counted, never progress", []vendorAnswer{{200, `{"status":"weird"}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"empty status is counted", []vendorAnswer{{200, `{}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"a hook error is counted", []vendorAnswer{{200, `{"crash":true}`}}, 1, StatusSubmitted, 1, BillingHeld},
		{"max consecutive failures fail and refund", []vendorAnswer{{500, `{}`}}, 3, StatusFailure, 3, BillingRefunded},
		{"2xx success settles", []vendorAnswer{{200, `{"status":"done","url":"https://x.test/v"}`}}, 1, StatusSuccess, 0, BillingSettled},
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
			if tt.wantStatus == StatusSubmitted && string(tk.Data) != before {
				t.Errorf("a counted failure changed data: %s → %s", before, tk.Data)
			}
			wantQuota := int64(1_000_000 - 25_000)
			switch tt.wantBilling {
			case BillingRefunded:
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
	if tk := e.task(id); tk.Status != StatusSubmitted || tk.PollFailures != 1 {
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
	if tk.Status != StatusFailure || tk.BillingStatus != BillingRefunded || tk.FailReason != "the task timed out" {
		t.Fatalf("got %+v", tk)
	}
	if v.polls != 0 {
		t.Errorf("an expired task was still polled %d times", v.polls)
	}
}

func TestPollHTTPAndParsedClassification(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		result  pollResult
		hookErr error
		want    pollOutcome
	}{
		{"2xx terminal", 200, pollResult{status: StatusSuccess}, nil, outcomeTerminal},
		{"2xx in progress", 200, pollResult{status: StatusInProgress}, nil, outcomeProgress},
		{"2xx unknown", 200, pollResult{status: StatusUnknown}, nil, outcomeCounted},
		{"2xx hook error", 200, pollResult{}, errors.New("boom"), outcomeCounted},
		{"422 failure parsed", 422, pollResult{status: StatusFailure}, nil, outcomeTerminal},
		{"422 still queued", 422, pollResult{status: StatusQueued}, nil, outcomeCounted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, parse, _ := pollHTTP(tt.status)
			if !parse {
				t.Fatalf("status %d was not parsed", tt.status)
			}
			if o, _ = pollParsed(tt.status, tt.result, tt.hookErr); o != tt.want {
				t.Errorf("got %v, want %v", o, tt.want)
			}
		})
	}
	for status, want := range map[int]pollOutcome{404: outcomeGone, 410: outcomeGone, 401: outcomeCounted,
		403: outcomeCounted, 429: outcomeCounted, 500: outcomeCounted, 599: outcomeCounted, 302: outcomeCounted} {
		if o, parse, _ := pollHTTP(status); parse || o != want {
			t.Errorf("pollHTTP(%d) = %v parse=%v, want %v unparsed", status, o, parse, want)
		}
	}
}

func TestTwoPollersRacingOnOneTaskSettleOnce(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
	_, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p","seconds":2}`)
	id := out["id"].(string)
	l := e.plugins[0]
	done := make(chan struct{})
	for _, status := range []string{StatusSuccess, StatusSuccess, StatusFailure, StatusSuccess} {
		go func() {
			defer func() { done <- struct{}{} }()
			tk := e.task(id)
			e.svc.complete(context.Background(), l, tk, pollResult{status: status}, nil)
		}()
	}
	for range 4 {
		<-done
	}
	tk := e.task(id)
	if !terminal(tk.Status) || tk.BillingStatus == BillingHeld {
		t.Fatalf("task = %s / %s", tk.Status, tk.BillingStatus)
	}
	want := int64(1_000_000 - 10_000)
	if tk.Status == StatusFailure {
		want = 1_000_000
	}
	if got := e.quota(e.alice); got != want {
		t.Errorf("quota = %d, want %d: billed more than once", got, want)
	}
	if n := len(e.logs(e.alice, "refund")) + len(e.logs(e.alice, "consume")); n != map[bool]int{true: 2, false: 1}[tk.Status == StatusFailure] {
		t.Errorf("%d usage rows for one task", n)
	}
	// A second node's lease attempt on a leased task fails.
	ok, err := e.svc.Store().Lease(context.Background(), tk.ID, "node-b", nowMS(), nowMS()+1000)
	if err != nil || ok {
		t.Errorf("leasing a finished task = %v, %v; want refused", ok, err)
	}
	_ = http.StatusOK
}

func TestLeasesKeepTwoNodesOffOneTask(t *testing.T) {
	e := newEnv(t, "pertask.js")
	v := newVendor(t, vendorAnswer{200, `{"status":"running"}`})
	e.channel("acme-main", "acme", v.srv.URL, []string{"acme-v1"}, nil)
	_, out := e.postJSON("/acme/v1/videos", userKey, `{"model":"acme-v1","prompt":"p"}`)
	tk := e.task(out["id"].(string))
	now := nowMS()
	st := e.svc.Store()
	if ok, _ := st.Lease(context.Background(), tk.ID, "node-a", now, now+60_000); !ok {
		t.Fatal("first lease refused")
	}
	if ok, _ := st.Lease(context.Background(), tk.ID, "node-b", now, now+60_000); ok {
		t.Fatal("second node leased a task under a live lease")
	}
	if ok, _ := st.Lease(context.Background(), tk.ID, "node-b", now+61_000, now+120_000); !ok {
		t.Fatal("an expired lease was not taken over")
	}
}
