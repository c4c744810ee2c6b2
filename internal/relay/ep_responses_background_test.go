package relay

import (
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestBackgroundResponseKeepsItsHoldAndIsBilledOnTheFinalUsage(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BackgroundPoll = 10 * time.Millisecond })
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	before := e.balance()
	resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","background":true,"max_output_tokens":1000}`)
	body := readJSON(t, resp)
	if resp.StatusCode != 200 || body["status"] != "queued" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	if held := before - e.balance(); held <= chargeFor1000x500 {
		t.Fatalf("%d held while queued; the reservation must stay until the response finishes", held)
	}
	if rows := e.rows(store.LogConsume); len(rows) != 0 {
		t.Fatalf("settled before the response finished: %+v", rows)
	}
	waitFor(t, func() bool { return len(e.rows(store.LogConsume)) == 1 })
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d from the final usage", charged, chargeFor1000x500)
	}
	row := e.rows(store.LogConsume)[0]
	if row.PromptTokens != 1000 || row.CompletionTokens != 500 {
		t.Fatalf("row %+v", row)
	}
}

func TestRetrievingAFinishedBackgroundResponseSettlesItAtOnce(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BackgroundPoll = time.Hour })
	f := &fakeResponsesAPI{bgPolls: 1}
	e.responsesChannel("native", f)
	before := e.balance()
	if resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","background":true}`); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp := e.do("GET", "/v1/responses/resp_bg", testKey)
	if body := readJSON(t, resp); resp.StatusCode != 200 || body["status"] != "completed" {
		t.Fatalf("status %d body %v", resp.StatusCode, body)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d once retrieved", charged, chargeFor1000x500)
	}
	if err := e.relay.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rows := e.rows(store.LogConsume); len(rows) != 1 {
		t.Fatalf("%d consume rows, want 1", len(rows))
	}
}
