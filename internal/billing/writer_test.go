package billing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// plainStore hides every optional interface of the store it wraps, so the
// writer has to fall back to LedgerRepo.Apply and LogRepo.Insert.
type plainStore struct{ store.Store }

// batchStore offers store.BatchWriter, failing the first failures calls
// before they touch the database.
type batchStore struct {
	store.Store
	mu       sync.Mutex
	calls    int
	failures int
}

func (b *batchStore) WriteBatch(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	b.mu.Lock()
	b.calls++
	fail := b.calls <= b.failures
	b.mu.Unlock()
	if fail {
		return errors.New("database unavailable")
	}
	return b.Store.(store.BatchWriter).WriteBatch(ctx, entries, logs)
}

func (b *batchStore) callCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

func TestWriterStoresEveryQueuedItemOnce(t *testing.T) {
	cases := []struct {
		name      string
		wrap      func(store.Store) store.Store
		wantCalls int // WriteBatch calls; -1 when the store has none
	}{
		{"through one transaction when the store writes batches", func(s store.Store) store.Store { return &batchStore{Store: s} }, 1},
		{"through the ledger and the log repositories otherwise", func(s store.Store) store.Store { return plainStore{s} }, -1},
		{"after retrying a batch that failed", func(s store.Store) store.Store { return &batchStore{Store: s, failures: 2} }, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, userID, tokenID, _ := seedAccounts(t, 1000, 500)
			wrapped := tc.wrap(st)
			w := NewWriter(wrapped, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Hour, 1<<20)
			for i := range 5 {
				w.Ledger(store.LedgerEntry{Key: fmt.Sprintf("k%d", i), Kind: store.LedgerSettle, UserID: userID, TokenID: tokenID,
					Delta: -10, TokenDelta: -10, Used: 10})
				w.Log(store.UsageLog{Type: store.LogConsume, UserID: userID, TokenID: tokenID, Model: "m", Quota: 10})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := w.Flush(ctx); err != nil {
				t.Fatalf("Flush: %v", err)
			}
			w.Close()
			u, err := st.Users().Get(ctx, userID)
			if err != nil {
				t.Fatal(err)
			}
			_, logs, err := st.Logs().List(ctx, store.LogFilter{}, store.Page{})
			if err != nil {
				t.Fatal(err)
			}
			if u.Quota != 950 || u.UsedQuota != 50 || logs != 5 {
				t.Errorf("user quota %d used %d, logs %d; want 950, 50 and 5", u.Quota, u.UsedQuota, logs)
			}
			if bs, ok := wrapped.(*batchStore); ok && bs.callCount() != tc.wantCalls {
				t.Errorf("WriteBatch called %d times, want %d", bs.callCount(), tc.wantCalls)
			}
		})
	}
}
