package billing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// plainStore hides every optional interface of the store it wraps, so the
// writer has to fall back to LedgerRepo.Apply and LogRepo.Insert.
type plainStore struct{ store.Store }

// flakyStore offers store.BatchWriter and fails while down is set, or the
// first failures calls. With ambiguous set a failing call commits first and
// reports the failure after, as a connection lost during COMMIT does.
type flakyStore struct {
	store.Store
	mu        sync.Mutex
	calls     int
	failures  int
	down      bool
	ambiguous bool
	batches   [][]store.BillingItem
	onWrite   func() // runs after each stored batch
}

func (f *flakyStore) WriteBatch(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	return f.Store.(store.BatchWriter).WriteBatch(ctx, entries, logs)
}

func (f *flakyStore) WriteItems(ctx context.Context, items []store.BillingItem) ([]bool, error) {
	f.mu.Lock()
	f.calls++
	fail := f.down || f.calls <= f.failures
	f.batches = append(f.batches, items)
	f.mu.Unlock()
	if fail && !f.ambiguous {
		return nil, errors.New("database unavailable")
	}
	written, err := f.Store.(store.BatchWriter).WriteItems(ctx, items)
	if err == nil && f.onWrite != nil {
		f.onWrite()
	}
	if fail {
		return nil, errors.New("connection lost during commit")
	}
	return written, err
}

// Entries passes RecordedEntries on, so the writer can tell a replay from
// a conflict through the wrapper.
func (f *flakyStore) Entries(ctx context.Context, keys []string) (map[string]store.LedgerEntry, error) {
	return f.Store.(RecordedEntries).Entries(ctx, keys)
}

func (f *flakyStore) setDown(down bool) { f.mu.Lock(); f.down = down; f.mu.Unlock() }

func (f *flakyStore) callCount() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }

// settleItems queues n settled calls of 10 each: an entry and its row.
func settleItems(w *Writer, userID, tokenID int64, n int) {
	for i := range n {
		settleItem(w, userID, tokenID, i)
	}
}

// settleItem queues the settled call number i.
func settleItem(w *Writer, userID, tokenID int64, i int) {
	w.Item(store.BillingItem{
		Entry: &store.LedgerEntry{Key: fmt.Sprintf("k%d:settle", i), Kind: store.LedgerSettle, UserID: userID, TokenID: tokenID,
			Delta: -10, TokenDelta: -10, Used: 10},
		Log: &store.UsageLog{Type: store.LogConsume, UserID: userID, TokenID: tokenID, Model: "m", Quota: 10, RequestID: fmt.Sprintf("k%d", i)},
	})
}

// books returns the user's quota and used quota, and the consume rows.
func books(t *testing.T, st store.Store, userID int64) (quota, used int64, rows int) {
	t.Helper()
	ctx := context.Background()
	u, err := st.Users().Get(ctx, userID)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err = st.Logs().List(ctx, store.LogFilter{Type: store.LogConsume}, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	return u.Quota, u.UsedQuota, rows
}

func TestWriterStoresEveryQueuedItemOnce(t *testing.T) {
	cases := []struct {
		name      string
		wrap      func(store.Store) store.Store
		wantCalls int // WriteItems calls; -1 when the store has none
	}{
		{"through one transaction when the store writes batches", func(s store.Store) store.Store { return &flakyStore{Store: s} }, 1},
		{"through the ledger and the log repositories otherwise", func(s store.Store) store.Store { return plainStore{s} }, -1},
		{"after retrying a batch that failed", func(s store.Store) store.Store { return &flakyStore{Store: s, failures: 2} }, 3},
		{"after retrying a batch whose commit was reported failed", func(s store.Store) store.Store {
			return &flakyStore{Store: s, failures: 2, ambiguous: true}
		}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, userID, tokenID, _ := seedAccounts(t, 1000, 500)
			wrapped := tc.wrap(st)
			w := NewWriter(wrapped, quietLog(), time.Hour, 1<<20)
			w.setBackoff(time.Millisecond, time.Millisecond)
			settleItems(w, userID, tokenID, 5)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := w.Flush(ctx); err != nil {
				t.Fatalf("Flush: %v", err)
			}
			if err := w.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if q, used, rows := books(t, st, userID); q != 950 || used != 50 || rows != 5 {
				t.Errorf("user quota %d used %d, rows %d; want 950, 50 and 5", q, used, rows)
			}
			if fs, ok := wrapped.(*flakyStore); ok && fs.callCount() != tc.wantCalls {
				t.Errorf("WriteItems called %d times, want %d", fs.callCount(), tc.wantCalls)
			}
		})
	}
}

// Items that arrive while a batch is being written wait for the next tick
// (or a full batch) instead of being chased one small batch after another.
func TestWriterLeavesItemsThatArriveDuringAWriteForTheNextBatch(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1000, 500)
	writing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	fs := &flakyStore{Store: st}
	fs.onWrite = func() { once.Do(func() { close(writing); <-release }) }
	w := NewWriter(fs, quietLog(), time.Hour, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	settleItem(w, userID, tokenID, 0)
	flushed := make(chan error, 1)
	go func() { flushed <- w.Flush(ctx) }()
	<-writing
	settleItem(w, userID, tokenID, 1)
	settleItem(w, userID, tokenID, 2)
	close(release)
	if err := <-flushed; err != nil {
		t.Fatalf("Flush: %v", err)
	}
	// Nothing wakes the writer now (the tick is an hour away): a writer
	// that chased the arrivals would have written them by now.
	time.Sleep(50 * time.Millisecond)
	if calls, backlog := fs.callCount(), w.Backlog(); calls != 1 || backlog != 2 {
		t.Fatalf("after the first batch: %d writes, backlog %d; want 1 write and the 2 late items queued", calls, backlog)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if q, used, rows := books(t, st, userID); q != 970 || used != 30 || rows != 3 {
		t.Errorf("user quota %d used %d, rows %d; want 970, 30 and 3", q, used, rows)
	}
	if fs.callCount() != 2 || len(fs.batches[1]) != 2 {
		t.Errorf("writes %d, want the late items as one second batch", fs.callCount())
	}
}

func TestWriterNeverSplitsAnEntryFromItsRow(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 100000, -1)
	fs := &flakyStore{Store: st}
	// After every stored batch, as if the process were killed right then,
	// the ledger's settles and the consume rows must tell the same story.
	fs.onWrite = func() {
		q, used, rows := books(t, st, userID)
		if used != int64(rows)*10 || 100000-q != used {
			t.Errorf("after a batch: quota %d used %d but %d consume rows", q, used, rows)
		}
	}
	w := NewWriter(fs, quietLog(), time.Hour, 3) // an odd size would cut a pair written as two items
	settleItems(w, userID, tokenID, 20)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, b := range fs.batches {
		for _, it := range b {
			if (it.Entry == nil) != (it.Log == nil) {
				t.Fatalf("an item carries only half of a settled call: %+v", it)
			}
		}
	}
	if _, _, rows := books(t, st, userID); rows != 20 || len(fs.batches) != 7 {
		t.Errorf("rows %d in %d batches, want 20 in 7", rows, len(fs.batches))
	}
}

func TestWriterQueueNeverBlocksWhileTheDatabaseIsDown(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1_000_000, -1)
	fs := &flakyStore{Store: st, down: true}
	w := NewWriter(fs, quietLog(), time.Millisecond, 1024)
	w.setBackoff(time.Millisecond, 5*time.Millisecond)
	// A queue that blocks never returns (the old bounded channel of 8192
	// stopped there for good), so the bound only has to tell "never" from
	// "slow under the race detector on a loaded machine" (seen: 3.6 s).
	queued := make(chan struct{})
	go func() {
		settleItems(w, userID, tokenID, 20000) // more than twice the old channel's 8192
		close(queued)
	}()
	select {
	case <-queued:
	case <-time.After(time.Minute):
		t.Fatal("queueing 20000 items with the database down blocked")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := w.Close(ctx); err == nil || !strings.Contains(err.Error(), "20000 ledger entries and 20000 usage rows") {
		t.Fatalf("Close = %v; want every queued item accounted for", err)
	}
}

func TestReserveIsRefusedAboveTheHighWaterMarkUntilTheBacklogDrains(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1_000_000, -1)
	fs := &flakyStore{Store: st, down: true}
	w := NewWriter(fs, quietLog(), time.Millisecond, 64)
	w.setBackoff(time.Millisecond, 5*time.Millisecond)
	w.SetHighWater(100)
	svc := NewService(NewMemoryBalances(st), w, 500000)
	acct := Account{UserID: userID, TokenID: tokenID}
	settleItems(w, userID, tokenID, 150)
	// The writer counts as behind once its first write has failed.
	deadline := time.Now().Add(5 * time.Second)
	for !w.Overloaded() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_, err := svc.Reserve(context.Background(), acct, "refused", 10)
	if irStatus(err) != 503 || !strings.Contains(err.Error(), "cannot record usage") || !w.Overloaded() {
		t.Fatalf("Reserve above the high-water mark: %v", err)
	}
	fs.setDown(false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reserve(ctx, acct, "admitted", 10); err != nil {
		t.Fatalf("Reserve after the backlog drained: %v", err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if q, _, rows := books(t, st, userID); rows != 150 || q != 1_000_000-1500-10 {
		t.Errorf("quota %d rows %d", q, rows)
	}
}

func TestABurstAboveTheHighWaterMarkIsAdmittedWhileTheWriterKeepsUp(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1_000_000, -1)
	gate := &gatedStore{Store: st, release: make(chan struct{})}
	w := NewWriter(gate, quietLog(), time.Millisecond, 64)
	w.SetHighWater(100)
	settleItems(w, userID, tokenID, 300) // a burst: three times the mark, the writer healthy
	if w.Overloaded() {
		t.Fatal("a burst the writer is taking was refused as backlog")
	}
	settleItems(w, userID, tokenID, 600) // past the ceiling of eight times the mark
	if !w.Overloaded() {
		t.Fatal("a queue past the burst ceiling was admitted")
	}
	close(gate.release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The second burst repeats the first one's 300 idempotency keys: 600 calls.
	if q, _, rows := books(t, st, userID); rows != 600 || q != 1_000_000-6000 {
		t.Errorf("quota %d rows %d", q, rows)
	}
}

func TestAQueueAboveTheMarkCountsAsBacklogOnceTheWriterStoredNothingForASecond(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1_000_000, -1)
	gate := &gatedStore{Store: st, release: make(chan struct{})}
	w := NewWriter(gate, quietLog(), time.Millisecond, 64)
	w.SetHighWater(100)
	settleItems(w, userID, tokenID, 300)
	w.mu.Lock()
	w.lastWritten = time.Now().Add(-2 * writerBehindAfter) // a write hung for two seconds
	w.mu.Unlock()
	if !w.Overloaded() {
		t.Fatal("a queue the writer has not stored from for two seconds was admitted")
	}
	close(gate.release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// gatedStore holds every write until release is closed: a database that
// is slow but not failing.
type gatedStore struct {
	store.Store
	release chan struct{}
}

func (g *gatedStore) WriteBatch(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	<-g.release
	return g.Store.(store.BatchWriter).WriteBatch(ctx, entries, logs)
}

func (g *gatedStore) WriteItems(ctx context.Context, items []store.BillingItem) ([]bool, error) {
	<-g.release
	return g.Store.(store.BatchWriter).WriteItems(ctx, items)
}

func TestWriterCloseHonoursItsDeadlineAndCountsWhatItCouldNotWrite(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 1000, -1)
	fs := &flakyStore{Store: st, down: true}
	w := NewWriter(fs, quietLog(), time.Millisecond, 1024)
	w.setBackoff(time.Millisecond, 10*time.Millisecond)
	settleItems(w, userID, tokenID, 3)
	w.Log(store.UsageLog{Type: store.LogError, UserID: userID})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := w.Close(ctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v with a 200ms deadline", d)
	}
	if err == nil || !strings.Contains(err.Error(), "3 ledger entries and 4 usage rows were not written") {
		t.Fatalf("Close = %v", err)
	}
	if err := w.Flush(context.Background()); err == nil {
		t.Fatal("Flush after a Close that gave up reported success")
	}
}

func TestWriterSurvivesAnOutageAndDrainsTheBacklogOnce(t *testing.T) {
	st, userID, tokenID, _ := seedAccounts(t, 100000, -1)
	fs := &flakyStore{Store: st, ambiguous: true}
	w := NewWriter(fs, quietLog(), time.Millisecond, 16)
	w.setBackoff(time.Millisecond, 20*time.Millisecond)
	settleItems(w, userID, tokenID, 40)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fs.setDown(true) // commits land but are reported failed: the worst case for duplicates
	for i := range 50 {
		w.Item(store.BillingItem{
			Entry: &store.LedgerEntry{Key: fmt.Sprintf("late%d:settle", i), Kind: store.LedgerSettle, UserID: userID, Delta: -10, TokenDelta: -10, Used: 10},
			Log:   &store.UsageLog{Type: store.LogConsume, UserID: userID, Quota: 10}})
	}
	time.Sleep(100 * time.Millisecond)
	fs.setDown(false)
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if q, used, rows := books(t, st, userID); rows != 90 || used != 900 || q != 100000-900 {
		t.Errorf("quota %d used %d rows %d; want every item exactly once", q, used, rows)
	}
}

func irStatus(err error) int {
	if e := ir.As(err); e != nil {
		return e.Status
	}
	return 0
}
