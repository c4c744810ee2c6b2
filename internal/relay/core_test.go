package relay

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/tokenize"
)

// request sends one call of a surface with the test key in the header that
// surface reads.
func (e *env) request(path string, header map[string]string, body string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func (e *env) rows(typ string) []store.UsageLog {
	e.t.Helper()
	e.flush()
	logs, _, err := e.st.Logs().List(context.Background(), store.LogFilter{Type: typ}, store.Page{})
	if err != nil {
		e.t.Fatal(err)
	}
	return logs
}

// ledgerKinds counts the user's ledger entries by kind and sums the deltas
// of those that are not top-ups.
func (e *env) ledgerKinds() (map[string]int, int64) {
	e.t.Helper()
	e.flush()
	entries, _, err := e.st.Ledger().List(context.Background(), e.user.ID, store.Page{PageSize: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	kinds := map[string]int{}
	var net int64
	for _, en := range entries {
		kinds[en.Kind]++
		if en.Kind != store.LedgerTopUp {
			net += en.Delta
		}
	}
	return kinds, net
}

func TestNoAvailableChannelIsRefundedOnceWithAnErrorRowOnEverySurface(t *testing.T) {
	bearerHdr := map[string]string{"Authorization": "Bearer " + testKey}
	cases := []struct {
		name, path, body string
		header           map[string]string
	}{
		{"chat", "/v1/chat/completions", chatBody, bearerHdr},
		{"messages", "/v1/messages", `{"model":"gpt-4o-mini","max_tokens":10,"messages":[{"role":"user","content":"Hi"}]}`,
			map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01"}},
		{"alternate-native", "/v1beta/models/gpt-4o-mini:generateContent", `{"contents":[{"parts":[{"text":"Hi"}]}]}`,
			map[string]string{"x-goog-api-key": testKey}},
		{"completions", "/v1/completions", `{"model":"gpt-4o-mini","prompt":"Hi"}`, bearerHdr},
		{"embeddings", "/v1/embeddings", `{"model":"gpt-4o-mini","input":"Hi"}`, bearerHdr},
		{"responses", "/v1/responses", `{"model":"gpt-4o-mini","input":"Hi"}`, bearerHdr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ch := e.channel("down", "http://127.0.0.1:1", nil)
			e.router.Health.CoolDown(ch.ID, "down for the test")
			before := e.balance()
			resp := e.request(tc.path, tc.header, tc.body)
			body := readAll(resp)
			if resp.StatusCode != 503 || !strings.Contains(body, "no channel is available") {
				t.Fatalf("status %d body %s", resp.StatusCode, body)
			}
			e.assertRefundedOnceWithErrorRow(before)
		})
	}
	t.Run("realtime", func(t *testing.T) {
		e := newEnv(t)
		ch := e.realtimeChannel(&fakeRealtime{})
		e.router.Health.CoolDown(ch.ID, "down for the test")
		before := e.balance()
		_, resp, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
		if err == nil || resp == nil || resp.StatusCode != 503 {
			t.Fatalf("dial: %v %+v", err, resp)
		}
		e.assertRefundedOnceWithErrorRow(before)
	})
}

func (e *env) assertRefundedOnceWithErrorRow(before int64) {
	e.t.Helper()
	if got := e.balance(); got != before {
		e.t.Fatalf("balance %d, want %d", got, before)
	}
	if rows := e.rows(store.LogError); len(rows) != 1 || rows[0].Quota != 0 {
		e.t.Fatalf("error rows %+v, want one without charge", rows)
	}
	// A reserve written in the same batch as its refund is one net entry.
	if k, net := e.ledgerKinds(); k[store.LedgerReserve] > 1 || k[store.LedgerRefund] != 1 || k[store.LedgerSettle] != 0 || net != 0 {
		e.t.Fatalf("ledger kinds %v net %d, want the hold refunded once and nothing moved", k, net)
	}
}

func TestRealtimeResponseWhoseUsageNeverComesIsBilledOnTheInputEstimateAndTheOutputDelivered(t *testing.T) {
	e := newEnv(t)
	c, before := e.realtimeSession()
	write(t, c, websocket.MessageText, "partial")
	for _, want := range []string{"response.created", partialText[0], partialText[1]} {
		if got := readText(t, c); !strings.Contains(got, want) {
			t.Fatalf("frame %q, want %q", got, want)
		}
	}
	_ = c.Close(websocket.StatusNormalClosure, "leaving before response.done")
	e.endRealtime()

	out := tokenize.Count("gpt-4o-mini", partialText[0]+partialText[1])
	// 1,000 input × 0.15 $/Mtok × 500,000/$ = 75, plus out × 0.3, rounded
	// half up once.
	want := (750 + out*3 + 5) / 10
	if charged := before - e.balance(); charged != int64(want) || out == 0 {
		t.Fatalf("charged %d, want %d for the reserved input and %d output tokens", charged, want, out)
	}
	rows := e.rows(store.LogConsume)
	if len(rows) != 1 || rows[0].CompletionTokens != out || rows[0].PromptTokens != realtimeInputEstimate ||
		!strings.Contains(string(rows[0].Other), `"interrupted":true`) {
		t.Fatalf("consume rows %+v", rows)
	}
}

func TestRealtimeResponseLeftByTheClientIsBilledOnItsLateResponseDone(t *testing.T) {
	e := newEnv(t)
	c, before := e.realtimeSession()
	write(t, c, websocket.MessageText, "partial-then-done")
	readText(t, c)
	readText(t, c)
	_ = c.CloseNow() // gone before the response.done
	deadline := time.Now().Add(5 * time.Second)
	for len(e.rows(store.LogConsume)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	e.endRealtime()
	// 100,000 × 0.15 + 500 × 0.60 per Mtok, × 500,000/$.
	if charged := before - e.balance(); charged != 7650 {
		t.Fatalf("charged %d, want 7650 from the upstream's response.done", charged)
	}
	rows := e.rows(store.LogConsume)
	if len(rows) != 1 || rows[0].PromptTokens != 100000 || strings.Contains(string(rows[0].Other), "interrupted") {
		t.Fatalf("consume rows %+v", rows)
	}
}

// A client that leaves during a response makes the gateway cancel it
// upstream, and the response.done the cancel brings bills it (§13).
func TestRealtimeResponseLeftByTheClientIsCancelledUpstreamAndBilled(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{answerCancel: true}
	e.realtimeChannel(f)
	before := e.balance()
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	write(t, c, websocket.MessageText, "partial-until-cancel")
	readText(t, c)
	readText(t, c)
	_ = c.CloseNow()
	deadline := time.Now().Add(5 * time.Second)
	for len(e.rows(store.LogConsume)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	e.endRealtime()
	if !slices.Contains(f.received(), `{"type":"response.cancel"}`) {
		t.Fatalf("the upstream got no response.cancel: %q", f.received())
	}
	if charged := before - e.balance(); charged != 7650 {
		t.Fatalf("charged %d, want 7650 from the response.done the cancel brought", charged)
	}
}

func TestRealtimeUpgradeThatFailsAfterAdmissionLeavesAnErrorRowAndRefunds(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	before := e.balance()
	// A WebSocket handshake without a key: admission and the upstream
	// dial succeed, then the client's upgrade fails.
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/realtime?model=gpt-4o-mini", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("status %d, want the upgrade refused", resp.StatusCode)
	}
	e.awaitErrorRow()
	e.assertRefundedOnceWithErrorRow(before)
}

// A session that connects once shutdown has begun is admitted and dialled,
// then refused on the upgraded socket: it still ends through fail, refunded
// with its error row.
func TestRealtimeSessionRefusedAtShutdownLeavesAnErrorRowAndRefunds(t *testing.T) {
	e := newEnv(t)
	f := &fakeRealtime{}
	e.realtimeChannel(f)
	e.endRealtime() // shutdown has begun: new sessions are refused
	before := e.balance()
	c, _, err := e.dialRealtime("gpt-4o-mini", bearer(testKey))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Fatalf("read %v, want the service-restart close", err)
	}
	e.awaitErrorRow()
	e.assertRefundedOnceWithErrorRow(before)
}

// awaitErrorRow waits briefly for an error row a session writes after its
// client has already been answered.
func (e *env) awaitErrorRow() {
	waitFor(e.t, func() bool {
		e.flush()
		return len(e.rows(store.LogError)) > 0
	})
}

func TestQuantitiesPastEveryBoundAreRefusedBeforeAnyUpstreamCall(t *testing.T) {
	bearerHdr := map[string]string{"Authorization": "Bearer " + testKey}
	cases := []struct {
		name, path, body, want string
		header                 map[string]string
		price                  float64
	}{
		{"messages max_tokens past int32", "/v1/messages", `{"model":"gpt-4o-mini","max_tokens":1000000000000,"messages":[{"role":"user","content":"Hi"}]}`,
			"max_tokens", map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01"}, 0.6},
		{"completions max_tokens past int64", "/v1/completions", `{"model":"gpt-4o-mini","prompt":"Hi","max_tokens":1e19}`, "max_tokens", bearerHdr, 0.6},
		{"completions n past 128", "/v1/completions", `{"model":"gpt-4o-mini","prompt":"Hi","n":100000}`, `"n"`, bearerHdr, 0.6},
		{"responses max_output_tokens past int32", "/v1/responses", `{"model":"gpt-4o-mini","input":"Hi","max_output_tokens":99999999999}`, "max_output_tokens", bearerHdr, 0.6},
		{"a charge past int64 is an error, not a wrap", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"max_tokens":2147483647}`,
			"charge_too_large", bearerHdr, 1e12},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: tc.price})
			f := &fakeOpenAI{}
			e.channel("main", newFake(t, f).URL, nil)
			before := e.balance()
			resp := e.request(tc.path, tc.header, tc.body)
			body := readAll(resp)
			if resp.StatusCode != 400 || !strings.Contains(body, tc.want) {
				t.Fatalf("status %d body %s, want 400 naming %s", resp.StatusCode, body, tc.want)
			}
			if f.calls() != 0 || e.balance() != before {
				t.Fatalf("upstream called %d times, balance %d → %d", f.calls(), before, e.balance())
			}
		})
	}
}

func TestAReservationTooLargeForTheLengthBoundIsRetriedWithTheCountedPrompt(t *testing.T) {
	long := strings.Repeat("hello ", 1000) // about 1,000 tokens, 6,000 bytes
	body := `{"model":"gpt-4o-mini","max_tokens":1,"messages":[{"role":"user","content":"` + long + `"}]}`
	counted := tokenize.Messages("gpt-4o-mini", [][]string{{long}})
	exact := int64(counted*5 + 0) // 10 $/Mtok × 500,000/$ = 5 units per input token; 1 output token is free
	cases := []struct {
		name    string
		balance int64
		status  int
	}{
		{"the counted prompt fits", exact + 10, 200},
		{"not even the counted prompt fits", exact - 10, 402},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 10})
			f := &fakeOpenAI{usage: `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`}
			e.channel("main", newFake(t, f).URL, nil)
			if _, err := e.billing.Credit(context.Background(), billing.Credit{UserID: e.user.ID, Delta: tc.balance - e.balance(), Note: "test"}); err != nil {
				t.Fatal(err)
			}
			resp := e.post("/v1/chat/completions", testKey, body)
			got := readAll(resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d body %s, want %d", resp.StatusCode, got, tc.status)
			}
			if tc.status == 402 && f.calls() != 0 {
				t.Fatal("the upstream was called for a refused request")
			}
		})
	}
}
