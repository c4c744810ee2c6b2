package relay

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestBackgroundResponseKeepsItsHoldAndIsBilledOnTheFinalUsage(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BackgroundPoll = 10 * time.Millisecond })
	// The upstream keeps the response in progress until the queued state
	// is checked: the poller asks every 10 ms, faster than a slow machine
	// runs the checks below.
	f := &fakeResponsesAPI{bgPolls: -1 << 30}
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
	f.mu.Lock()
	f.bgPolls = 1 // the next poll finishes it
	f.mu.Unlock()
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

// A background response read to its end through a streamed retrieval and
// then deleted is billed on its full usage: neither the stream nor the
// delete lets it go free.
func TestBackgroundResponseReadAsAStreamThenDeletedIsBilledOnItsFullUsage(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BackgroundPoll = time.Hour })
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	before := e.balance()
	if resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","background":true}`); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp := e.do("GET", "/v1/responses/resp_bg?stream=true", testKey)
	if body := readAll(resp); resp.StatusCode != 200 || !strings.Contains(body, "response.completed") {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
	if resp := e.do("DELETE", "/v1/responses/resp_bg", testKey); resp.StatusCode != 200 {
		t.Fatalf("delete status %d", resp.StatusCode)
	}
	if err := e.relay.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d from the final usage", charged, chargeFor1000x500)
	}
	if rows := e.rows(store.LogConsume); len(rows) != 1 || rows[0].PromptTokens != 1000 || rows[0].CompletionTokens != 500 {
		t.Fatalf("consume rows %+v", rows)
	}
}

// A background response deleted while it still runs has no usage to read
// any more: it is charged its reservation, never refunded.
func TestBackgroundResponseDeletedWhileRunningIsChargedItsReservation(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BackgroundPoll = time.Hour })
	f := &fakeResponsesAPI{bgPolls: -100} // never finishes
	e.responsesChannel("native", f)
	before := e.balance()
	if resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","background":true,"max_output_tokens":1000}`); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	held := before - e.balance()
	if resp := e.do("DELETE", "/v1/responses/resp_bg", testKey); resp.StatusCode != 200 {
		t.Fatalf("delete status %d", resp.StatusCode)
	}
	if err := e.relay.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if charged := before - e.balance(); charged != held || held == 0 {
		t.Fatalf("charged %d, want the reservation %d", charged, held)
	}
	rows := e.rows(store.LogConsume)
	if len(rows) != 1 || !strings.Contains(string(rows[0].Other), `"charged_reservation":"deleted"`) {
		t.Fatalf("consume rows %+v", rows)
	}
	if errs := e.rows(store.LogError); len(errs) != 0 {
		t.Fatalf("error rows %+v: a response that ran is not refunded", errs)
	}
}

// A streamed retrieval holds no charge of its own: it reaches the client
// whole, ends cleanly, and bills nothing by itself (the follower's response
// is billed once, on the usage the stream showed).
func TestStreamedRetrievalEndsCleanlyAndBillsOnlyTheFollowedResponse(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.BackgroundPoll = time.Hour })
	f := &fakeResponsesAPI{}
	e.responsesChannel("native", f)
	before := e.balance()
	if resp := e.post("/v1/responses", testKey, `{"model":"gpt-4o-mini","input":"Hi","background":true}`); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for i := 0; i < 2; i++ {
		resp := e.do("GET", "/v1/responses/resp_bg?stream=true", testKey)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), "response.completed") {
			t.Fatalf("retrieval %d: status %d err %v body %s", i, resp.StatusCode, err, body)
		}
	}
	if err := e.relay.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if charged := before - e.balance(); charged != chargeFor1000x500 {
		t.Fatalf("charged %d, want %d once from the final usage", charged, chargeFor1000x500)
	}
	if rows := e.rows(store.LogConsume); len(rows) != 1 {
		t.Fatalf("%d consume rows, want 1", len(rows))
	}
}
