package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// meteredUpstream is an OpenAI-compatible chat provider that reports
// prompt tokens and completion tokens of its own choosing: completion is
// bounded by the line's output limit when honourCap, as real providers
// do, and ignores it otherwise; a model in failing answers 500. It records
// the output limit every call carried.
type meteredUpstream struct {
	prompt, completion int
	honourCap          bool
	delay              time.Duration
	failing            map[string]bool
	calls              atomic.Int32
	mu                 sync.Mutex
	caps               []int64
	served             map[string]int
}

func (u *meteredUpstream) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		u.calls.Add(1)
		time.Sleep(u.delay)
		model := gjson.GetBytes(raw, "model").String()
		limit := gjson.GetBytes(raw, "max_completion_tokens")
		if !limit.Exists() {
			limit = gjson.GetBytes(raw, "max_tokens")
		}
		u.mu.Lock()
		u.caps = append(u.caps, limit.Int())
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if u.failing[model] {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		completion := u.completion
		if u.honourCap && limit.Exists() && int(limit.Int()) < completion {
			completion = int(limit.Int())
		}
		u.mu.Lock()
		if u.served == nil {
			u.served = map[string]int{}
		}
		u.served[model]++
		u.mu.Unlock()
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
			model, u.prompt, completion, u.prompt+completion)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (u *meteredUpstream) sentCaps() []int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]int64(nil), u.caps...)
}

// uncappedLines are n chat lines of batchModel that set no output limit.
func uncappedLines(n int) []string {
	var lines []string
	for i := 1; i <= n; i++ {
		lines = append(lines, chatLine(fmt.Sprintf("req-%d", i), "work"))
	}
	return lines
}

// reconciled checks the books once the batch's tickets have all ended
// (a batch's rows are written as its tickets settle, before the ones
// that carry no row are given back): ledger, rows and balances agree and
// no hold is left open.
func reconciled(t *testing.T, g *testkit.Gateway) {
	t.Helper()
	var code int
	var rec map[string]any
	testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool {
		code, rec = g.Do(t, "GET", "/api/reports/reconcile", batchRoot, nil)
		return code == 200 && rec["open_holds"] == float64(0)
	})
	if code != 200 || rec["ok"] != true || rec["open_holds"] != float64(0) {
		t.Errorf("the books do not reconcile: %d ok=%v open_holds=%v differences=%v", code, rec["ok"], rec["open_holds"], rec["differences"])
	}
}

// Lines that set no output limit are sent with the one their reservation
// assumed (1024, settings default), so a provider that honours it cannot
// answer past what the batch holds: 25 lines on a balance of 30,000 at
// 2,005 each uncapped (−20,125 at the end) cost 1,029 each.
func TestABatchLineWithoutAnOutputLimitIsSentWithTheLimitItsReservationAssumed(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 2000, honourCap: true}
	g := batchGateway(t, up.serve(t).URL, 2, 30_000)
	code, b := startBatch(t, g, batchKey, uncappedLines(25)...)
	if code != 200 {
		t.Fatalf("create: %d %v", code, b)
	}
	b = awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	reconciled(t, g)
	for _, c := range up.sentCaps() {
		if c != 1024 {
			t.Fatalf("a line went upstream with output limit %d, want the 1024 its reservation assumed (all: %v)", c, up.sentCaps())
		}
	}
	if counts(b) != "25/25/0" {
		t.Errorf("batch = %v", counts(b))
	}
	if got := balance(t, g); got != 30_000-25*1029 {
		t.Errorf("balance %d, want %d (25 lines of 1,029)", got, 30_000-25*1029)
	}
	reconciled(t, g)
}

// A provider that answers past the limit it was sent cannot take the batch
// past its hold and the balance either: when the running charge would pass
// the hold the gateway takes more from the balance, and when that does
// not fit the remaining lines fail with insufficient_quota.
func TestABatchNeverSpendsPastItsHoldAndTheBalance(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 2000}
	g := batchGateway(t, up.serve(t).URL, 1, 30_000)
	code, b := startBatch(t, g, batchKey, uncappedLines(25)...)
	if code != 200 {
		t.Fatalf("create: %d %v", code, b)
	}
	b = awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	reconciled(t, g)
	after := balance(t, g)
	if after < 0 {
		t.Fatalf("balance %d: the batch spent past its hold and the balance", after)
	}
	c := b["request_counts"].(map[string]any)
	done, failed := int(c["completed"].(float64)), int(c["failed"].(float64))
	if done+failed != 25 || failed == 0 || 30_000-after != int64(done)*2005 {
		t.Errorf("counts %v and balance %d: want lines of 2,005 until the balance ran out, the rest failed", c, after)
	}
	if n := int(up.calls.Load()); n != done {
		t.Errorf("%d upstream calls for %d charged lines: a line the balance could not cover ran", n, done)
	}
	_, errOut := content(t, g, batchKey, b["error_file_id"].(string))
	if strings.Count(errOut, `"code":"insufficient_quota"`) != failed || !strings.Contains(errOut, `"status_code":402`) {
		t.Errorf("error file = %s", errOut)
	}
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(int64(done)*2005) {
		t.Errorf("rows = %v", rows)
	}
	reconciled(t, g)
}

// fallbackGateway serves batchModel on a channel that always fails and
// its fallback "dear-model" on one that works; the fallback's output is
// twenty times dearer.
func fallbackGateway(t *testing.T, up *meteredUpstream, quota int64) *testkit.Gateway {
	weight := 1
	url := up.serve(t).URL
	return batchGateway(t, url, 0, quota,
		testkit.WithChannels(config.SeedChannel{Name: "bulk", Type: "custom", BaseURL: url, Key: "upstream-key",
			Models: []string{batchModel}, Groups: []string{"default"}, Weight: &weight},
			config.SeedChannel{Name: "dear", Type: "custom", BaseURL: url, Key: "upstream-key",
				Models: []string{"dear-model"}, Groups: []string{"default"}, Weight: &weight}),
		testkit.WithModels(map[string]config.SeedPrice{
			batchModel:   {InputPerMTok: 1, OutputPerMTok: 2, Fallbacks: []string{"dear-model"}},
			"dear-model": {OutputPerMTok: 20},
		}))
}

// A line served by a fallback model is charged at that model's batch
// price on that model's row: five lines of 7,500 output tokens at $20 per
// million are 375,000 units, which went unbilled when holds were keyed by
// the model the lines asked for.
func TestABatchLineServedByAFallbackModelIsChargedAtItsPriceOnItsRow(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 7500, honourCap: true, failing: map[string]bool{batchModel: true}}
	g := fallbackGateway(t, up, 2_000_000)
	before := balance(t, g)
	var lines []string
	for i := 1; i <= 5; i++ {
		b, _ := json.Marshal(map[string]any{"custom_id": fmt.Sprint("req-", i), "method": "POST", "url": "/v1/chat/completions",
			"body": map[string]any{"model": batchModel, "max_completion_tokens": 7500,
				"messages": []any{map[string]any{"role": "user", "content": "work"}}}})
		lines = append(lines, string(b))
	}
	code, b := startBatch(t, g, batchKey, lines...)
	if code != 200 {
		t.Fatalf("create: %d %v", code, b)
	}
	b = awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	reconciled(t, g)
	if counts(b) != "5/5/0" {
		t.Fatalf("batch = %v", b)
	}
	var rows []map[string]any
	testkit.WaitFor(10*time.Second, 50*time.Millisecond, func() bool {
		_, body := g.Do(t, "GET", "/api/logs?type=consume&page_size=100&model=dear-model", batchRoot, nil)
		rows = nil
		for _, it := range body["items"].([]any) {
			rows = append(rows, it.(map[string]any))
		}
		return len(rows) > 0
	})
	if len(rows) != 1 || rows[0]["quota"] != float64(375_000) {
		t.Fatalf("dear-model rows = %v, want one of 375,000", rows)
	}
	bo := rows[0]["other"].(map[string]any)["batch"].(map[string]any)
	if bo["id"] != b["id"] || bo["lines"] != float64(5) || bo["failed"] != float64(0) {
		t.Errorf("row's batch = %v", bo)
	}
	if own := batchRows(t, g, 0); len(own) != 0 {
		t.Errorf("%s rows for lines it did not serve: %v", batchModel, own)
	}
	if after := balance(t, g); before-after != 375_000 {
		t.Errorf("charged %d, want 375,000", before-after)
	}
	reconciled(t, g)
}

// A batch's row is the exact parts of its lines summed and rounded once:
// three lines of 1.5 units are 5 (4.5 rounded half up), not 3 × 2.
func TestABatchRowIsRoundedOnceOverTheExactSumOfItsLines(t *testing.T) {
	up := &meteredUpstream{prompt: 1, completion: 1}
	g := batchGateway(t, up.serve(t).URL, 0, 1_000_000)
	before := balance(t, g)
	_, b := startBatch(t, g, batchKey, uncappedLines(3)...)
	awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	reconciled(t, g)
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(5) {
		t.Fatalf("rows = %v, want one of 5", rows)
	}
	if after := balance(t, g); before-after != 5 {
		t.Errorf("charged %d, want 5", before-after)
	}
	reconciled(t, g)
}

// A batch is held against its user's period budget at create: one that
// does not fit is refused with 429 budget_exceeded before anything runs,
// and one that fits counts its charge in the period when it settles.
func TestABatchIsHeldAgainstThePeriodBudgetAtCreate(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 2000, honourCap: true}
	g := batchGateway(t, up.serve(t).URL, 0, 1_000_000)
	if code, body := g.Do(t, "PATCH", "/api/users/2", batchRoot, map[string]any{"period_quota": 5000, "period": "day"}); code != 200 {
		t.Fatalf("budget: %d %v", code, body)
	}
	code, body := startBatch(t, g, batchKey, uncappedLines(10)...)
	e, _ := body["error"].(map[string]any)
	if code != 429 || e["code"] != "budget_exceeded" {
		t.Fatalf("create over the budget: %d %v, want 429 budget_exceeded", code, body)
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("%d upstream calls for a refused batch", n)
	}
	_, b := startBatch(t, g, batchKey, uncappedLines(3)...)
	awaitBatch(t, g, batchKey, b["id"].(string), "completed")
	reconciled(t, g)
	_, k := g.Do(t, "GET", "/api/users/2", batchRoot, nil)
	if k["period_used_quota"] != float64(3*1029) {
		t.Errorf("period used %v, want the batch's charge %d", k["period_used_quota"], 3*1029)
	}
	reconciled(t, g)
}

// A live call whose fallback model needs a larger reservation takes a new
// one and gives the first back with its budget share: the period counts
// the charge alone, not the first reservation on top of it.
func TestAFallbackThatReReservesGivesTheFirstBudgetShareBack(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 7500, honourCap: true, failing: map[string]bool{batchModel: true}}
	g := fallbackGateway(t, up, 1_000_000)
	if code, body := g.Do(t, "PATCH", "/api/users/2", batchRoot, map[string]any{"period_quota": 100_000, "period": "day"}); code != 200 {
		t.Fatalf("budget: %d %v", code, body)
	}
	code, body := g.Do(t, "POST", "/v1/chat/completions", batchKey, map[string]any{"model": batchModel, "max_tokens": 100,
		"messages": []any{map[string]any{"role": "user", "content": "work"}}})
	if code != 200 || body["model"] != "dear-model" {
		t.Fatalf("call: %d %v", code, body)
	}
	reconciled(t, g)
	_, u := g.Do(t, "GET", "/api/users/2", batchRoot, nil)
	if u["period_used_quota"] != float64(1000) {
		t.Errorf("period used %v, want the call's charge 1000 (100 output tokens at $20 per million)", u["period_used_quota"])
	}
}

// The Message Batches form runs on the same money: its hold is refused
// over the period budget in the messages dialect, and its lines never
// spend past the hold and the balance.
func TestAMessageBatchKeepsToItsBudgetHoldAndBalance(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 2000}
	g := batchGateway(t, up.serve(t).URL, 1, 20_000)
	if code, body := g.Do(t, "PATCH", "/api/users/2", batchRoot, map[string]any{"period_quota": 3000, "period": "day"}); code != 200 {
		t.Fatalf("budget: %d %v", code, body)
	}
	var reqs []any
	for i := 1; i <= 15; i++ {
		reqs = append(reqs, messageRequest(fmt.Sprint("m-", i), "work"))
	}
	code, body, raw := messagesCall(t, g, "POST", "/v1/messages/batches", map[string]any{"requests": reqs})
	if e, _ := body["error"].(map[string]any); code != 429 || body["type"] != "error" || e["type"] != "rate_limit_error" {
		t.Fatalf("create over the budget: %d %s, want 429 rate_limit_error", code, raw)
	}
	g.Do(t, "PATCH", "/api/users/2", batchRoot, map[string]any{"period_quota": 0})
	code, b, raw := messagesCall(t, g, "POST", "/v1/messages/batches", map[string]any{"requests": reqs})
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	id := b["id"].(string)
	testkit.WaitFor(20*time.Second, 50*time.Millisecond, func() bool {
		_, b, _ = messagesCall(t, g, "GET", "/v1/messages/batches/"+id, nil)
		return b["processing_status"] == "ended"
	})
	reconciled(t, g)
	c := b["request_counts"].(map[string]any)
	if after := balance(t, g); after < 0 || c["errored"] == float64(0) || 20_000-after != int64(c["succeeded"].(float64))*2005 {
		t.Errorf("balance %d with counts %v: want lines of 2,005 until the balance ran out, the rest errored", after, c)
	}
}
