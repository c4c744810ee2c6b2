package task

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

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
	e := newCoreEnv(t)
	id := e.submitVideo(`{"model":"acme-v1","prompt":"p","seconds":2}`)
	l := e.plugin
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
	if got := e.Quota(e.alice); got != want {
		t.Errorf("quota = %d, want %d: billed more than once", got, want)
	}
	if n := len(e.Logs(e.alice, "refund")) + len(e.Logs(e.alice, "consume")); n != map[bool]int{true: 2, false: 1}[tk.Status == StatusFailure] {
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
	e := newCoreEnv(t)
	tk := e.task(e.submitVideo(`{"model":"acme-v1","prompt":"p"}`))
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
