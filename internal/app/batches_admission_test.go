package app_test

import (
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// §15: a batch goes through the admission a live call goes through, so
// creating one counts against the key's requests per minute: a second
// create within the minute is refused before anything is held.
func TestABatchCreateCountsAgainstTheKeysRateLimit(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 20, honourCap: true}
	g := batchGateway(t, up.serve(t).URL, 1, 1_000_000)
	if code, body := g.Do(t, "PATCH", "/api/tokens/1", batchRoot, map[string]any{"rpm": 1}); code != 200 {
		t.Fatalf("rpm: %d %v", code, body)
	}
	if code, b := startBatch(t, g, batchKey, uncappedLines(1)...); code != 200 {
		t.Fatalf("first create: %d %v", code, b)
	}
	code, b := startBatch(t, g, batchKey, uncappedLines(1)...)
	e, _ := b["error"].(map[string]any)
	if code != 429 || e["code"] != "rate_limit_exceeded" {
		t.Fatalf("second create within the minute: %d %v, want 429 rate_limit_exceeded", code, b)
	}
	_, list := g.Do(t, "GET", "/v1/batches", batchKey, nil)
	if data, _ := list["data"].([]any); len(data) != 1 {
		t.Errorf("%d batches after a refused create, want 1", len(data))
	}
}

// A node without Redis keeps its period budget counters in memory: after a
// restart a counter is loaded afresh, and it must count what a batch
// still holds, or the batch's settlement (the charge less its share)
// leaves the period short by the share. The period ends at the batch's
// charge exactly.
func TestABatchsBudgetShareSurvivesARestartWithoutRedis(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 500, honourCap: true, delay: 300 * time.Millisecond}
	g := batchGateway(t, up.serve(t).URL, 1, 1_000_000)
	if code, body := g.Do(t, "PATCH", "/api/users/2", batchRoot, map[string]any{"period_quota": 900_000, "period": "day"}); code != 200 {
		t.Fatalf("budget: %d %v", code, body)
	}
	code, b := startBatch(t, g, batchKey, uncappedLines(12)...)
	if code != 200 {
		t.Fatalf("create: %d %v", code, b)
	}
	id := b["id"].(string)
	_, u := g.Do(t, "GET", "/api/users/2", batchRoot, nil)
	held := u["period_used_quota"].(float64)
	if held <= 12*505 {
		t.Fatalf("period used %v at create, want the batch's hold (more than its charge %d)", held, 12*505)
	}
	testkit.WaitFor(5*time.Second, 5*time.Millisecond, func() bool { return up.calls.Load() >= 2 })
	g.Stop()
	g.Restart()
	// Loaded now, while the batch is still held.
	_, u = g.Do(t, "GET", "/api/users/2", batchRoot, nil)
	if got := u["period_used_quota"].(float64); got < held {
		t.Errorf("period used %v after the restart, want at least the batch's hold %v", got, held)
	}
	awaitBatch(t, g, batchKey, id, "completed")
	reconciled(t, g)
	_, u = g.Do(t, "GET", "/api/users/2", batchRoot, nil)
	if u["period_used_quota"] != float64(12*505) {
		t.Errorf("period used %v after the batch, want its charge %d", u["period_used_quota"], 12*505)
	}
}
