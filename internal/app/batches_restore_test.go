package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// deadNodeHold reserves amount under key for user in the database of a
// stopped gateway, as a process that died right after reserving would
// leave it: an open hold of a node whose lease has lapsed.
func deadNodeHold(t *testing.T, db string, userID int64, key string, amount int64) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := billing.NewWriter(st, slog.New(slog.DiscardHandler), time.Millisecond, 16)
	svc := billing.NewService(billing.NewMemoryBalances(st), w, 500000)
	if err := svc.TakeLease(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reserve(ctx, billing.Account{UserID: userID, Group: "default"}, key, amount); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// markPending adds tickets to a stopped batch's record as pending, as a
// process that died while taking more for the batch leaves them.
func markPending(t *testing.T, db, id string, tickets map[string]int64) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b, err := st.Batches().GetBatch(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var hs []map[string]any
	_ = json.Unmarshal(b.Holds, &hs)
	for key, amount := range tickets {
		hs = append(hs, map[string]any{"key": key, "reserved": amount, "user_id": b.UserID, "token_id": b.TokenID,
			"group": b.Group, "held_ns": time.Now().UnixNano(), "pending": true})
	}
	b.Holds, _ = json.Marshal(hs)
	if ok, err := st.Batches().SaveBatch(ctx, b); err != nil || !ok {
		t.Fatalf("save: %v %v", ok, err)
	}
}

// A batch stopped mid-run is taken up by the next process with its
// tickets restored from its record, and a ticket it was taking when the
// process died — reserved but not kept, or named but never reserved — is
// given back (or found never taken): the batch ends billed once, and the
// books show no hold left open.
func TestABatchResumedAfterAProcessDiedRestoresItsTicketsAndLeavesNoHoldOpen(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 500, honourCap: true, delay: 100 * time.Millisecond}
	g := batchGateway(t, up.serve(t).URL, 1, 1_000_000)
	before := balance(t, g)
	code, b := startBatch(t, g, batchKey, uncappedLines(12)...)
	if code != 200 {
		t.Fatalf("create: %d %v", code, b)
	}
	id := b["id"].(string)
	testkit.WaitFor(5*time.Second, 5*time.Millisecond, func() bool { return up.calls.Load() >= 3 })
	g.Stop()
	if n := up.calls.Load(); n >= 12 {
		t.Fatalf("the batch ran all %d lines before the stop", n)
	}
	db := g.App.Config.Database
	deadNodeHold(t, db, 2, "batch:"+id+":more:7", 4000)
	markPending(t, db, id, map[string]int64{"batch:" + id + ":more:7": 4000, "batch:" + id + ":more:8": 3000})
	g.Restart()
	b = awaitBatch(t, g, batchKey, id, "completed")
	if counts(b) != "12/12/0" {
		t.Fatalf("batch after the restart = %v", counts(b))
	}
	reconciled(t, g)
	// 10 input tokens at $1 and 500 output at $2 per million: 505 a line.
	rows := batchRows(t, g, 1)
	if len(rows) != 1 || rows[0]["quota"] != float64(12*505) {
		t.Fatalf("rows = %v", rows)
	}
	if after := balance(t, g); before-after != 12*505 {
		t.Errorf("charged %d, want %d once", before-after, 12*505)
	}
}

// Batches and live calls of one user running together, with holds grown
// mid-run and fallbacks, leave books that prove themselves: the ledger,
// the usage rows and the balances agree to the unit.
func TestConcurrentBatchesAndLiveCallsKeepTheBooksExact(t *testing.T) {
	up := &meteredUpstream{prompt: 10, completion: 2000}
	g := batchGateway(t, up.serve(t).URL, 3, 200_000)
	before := balance(t, g)
	var wg sync.WaitGroup
	ids := make([]string, 3)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, b := startBatch(t, g, batchKey, uncappedLines(15)...); code == 200 {
				ids[i] = b["id"].(string)
			}
		}()
	}
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Do(t, "POST", "/v1/chat/completions", batchKey, map[string]any{"model": batchModel, "max_tokens": 2000,
				"messages": []any{map[string]any{"role": "user", "content": fmt.Sprint("live ", i)}}})
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" {
			t.Fatal("a batch was refused up front")
		}
		awaitBatch(t, g, batchKey, id, "completed")
	}
	reconciled(t, g)
	after := balance(t, g)
	if after < 0 {
		t.Errorf("balance %d: spent past what the user had", after)
	}
	_, logs := g.Do(t, "GET", "/api/logs?type=consume&page_size=100", batchRoot, nil)
	var rows int64
	batchRowsSeen := 0
	for _, it := range logs["items"].([]any) {
		r := it.(map[string]any)
		rows += int64(r["quota"].(float64))
		if o, _ := r["other"].(map[string]any); o != nil && o["batch"] != nil {
			batchRowsSeen++
		}
	}
	if before-after != rows {
		t.Errorf("balance moved %d, consume rows sum %d", before-after, rows)
	}
	if batchRowsSeen != 3 {
		t.Errorf("%d batch rows, want one per batch", batchRowsSeen)
	}
	_, rec := g.Do(t, "GET", "/api/reports/reconcile", batchRoot, nil)
	for _, u := range rec["users"].([]any) {
		if m := u.(map[string]any); m["ok"] != true || !strings.Contains(fmt.Sprint(m["ledger_sum"]), fmt.Sprint(m["rows_sum"])) {
			t.Errorf("user books = %v", m)
		}
	}
}
