package billing

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// lockedBuffer is a log sink safe for the writer's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestIdempotencyKeyConflicts(t *testing.T) {
	reserveOf := func(userID, tokenID int64, key string, amount int64) store.BillingItem {
		return store.BillingItem{
			Entry: &store.LedgerEntry{Key: key + ":reserve", Kind: store.LedgerReserve, UserID: userID, TokenID: tokenID, Delta: -amount, TokenDelta: -amount},
			Open:  &store.Hold{Key: key, Owner: "node", UserID: userID, TokenID: tokenID, Amount: amount, CreatedAt: time.Now().UTC()},
		}
	}
	reserve := func(userID, tokenID int64, key string) store.BillingItem { return reserveOf(userID, tokenID, key, 5) }
	flaky := func(s store.Store) store.Store { return &flakyStore{Store: s} }
	cases := []struct {
		name     string
		wrap     func(store.Store) store.Store
		second   func(userID, tokenID int64) store.BillingItem
		want     uint64
		wantLine bool
	}{
		{"a reserve whose fresh key holds another amount is an alarm", flaky,
			func(u, tk int64) store.BillingItem { return reserveOf(u, tk, "dup", 7) }, 1, true},
		{"a reserve whose fresh key holds another account's entry is an alarm", flaky,
			func(u, tk int64) store.BillingItem { return reserve(u, 0, "dup") }, 1, true},
		{"a top-up whose fresh key is already recorded is an alarm", flaky,
			func(u, tk int64) store.BillingItem {
				return store.BillingItem{Entry: &store.LedgerEntry{Key: "dup:reserve", Kind: store.LedgerTopUp, UserID: u, Delta: 5}}
			}, 1, true},
		{"the very same reserve again is a replay, no alarm", flaky,
			func(u, tk int64) store.BillingItem { return reserve(u, tk, "dup") }, 0, false},
		{"through a store that does not offer Entries the very same reserve is still a replay",
			func(s store.Store) store.Store { return &plainBatchStore{Store: s} },
			func(u, tk int64) store.BillingItem { return reserve(u, tk, "dup") }, 0, false},
		{"through a store that does not offer Entries another amount is still an alarm",
			func(s store.Store) store.Store { return &plainBatchStore{Store: s} },
			func(u, tk int64) store.BillingItem { return reserveOf(u, tk, "dup", 7) }, 1, true},
		{"a batch replayed after a commit reported failed finds its own keys silently",
			func(s store.Store) store.Store { return &flakyStore{Store: s, failures: 1, ambiguous: true} },
			func(u, tk int64) store.BillingItem { return reserve(u, tk, "other") }, 0, false},
		{"an end whose hold was already ended is no alarm", flaky,
			func(u, tk int64) store.BillingItem {
				return store.BillingItem{Entry: &store.LedgerEntry{Key: "gone:refund", Kind: store.LedgerRefund, UserID: u, TokenID: tk, Delta: 5, TokenDelta: 5},
					Close: "gone"}
			}, 0, false},
		{"fresh keys are no alarm", flaky,
			func(u, tk int64) store.BillingItem { return reserve(u, tk, "new") }, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, userID, tokenID, _ := seedAccounts(t, 1000, 500)
			var logs lockedBuffer
			w := NewWriter(tc.wrap(st), slog.New(slog.NewTextHandler(&logs, nil)), time.Hour, 1<<20)
			w.setBackoff(time.Millisecond, time.Millisecond)
			ctx := context.Background()
			w.Item(reserve(userID, tokenID, "dup"))
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			w.Item(tc.second(userID, tokenID))
			if err := w.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if got := w.Conflicts(); got != tc.want {
				t.Errorf("conflicts = %d, want %d; log:\n%s", got, tc.want, logs.String())
			}
			line := strings.Contains(logs.String(), "level=ERROR msg=\"idempotency key conflict")
			if line != tc.wantLine {
				t.Errorf("error line logged = %v, want %v; log:\n%s", line, tc.wantLine, logs.String())
			}
		})
	}
}

func TestRequestKeysAreUniqueAndCarryTheirPrefix(t *testing.T) {
	s := NewService(nil, nil, 1)
	seen := map[string]bool{}
	for range 10000 {
		k := s.NewRequestKey("chat")
		if !strings.HasPrefix(k, "chat-") || len(k) != len("chat-")+36 || seen[k] {
			t.Fatalf("key %q: malformed or repeated", k)
		}
		seen[k] = true
	}
}

// plainBatchStore offers store.BatchWriter but not RecordedEntries.
type plainBatchStore struct{ store.Store }

func (p *plainBatchStore) WriteItems(ctx context.Context, items []store.BillingItem) ([]bool, error) {
	return p.Store.(store.BatchWriter).WriteItems(ctx, items)
}

func (p *plainBatchStore) WriteBatch(ctx context.Context, entries []store.LedgerEntry, logs []store.UsageLog) error {
	return p.Store.(store.BatchWriter).WriteBatch(ctx, entries, logs)
}
