package billing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// newPairEnv is newHoldEnv whose writer parks reserves for window.
func newPairEnv(t *testing.T, window time.Duration) *holdEnv {
	t.Helper()
	e := newHoldEnv(t, func(st store.Store) Balances { return NewMemoryBalances(st) })
	e.w.SetPairWindow(window)
	return e
}

func (e *holdEnv) holdRows(t *testing.T) int {
	t.Helper()
	hs, err := e.st.Holds().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(hs)
}

// entryKinds answers which of keys the ledger holds, and of what kind.
func (e *holdEnv) entryKinds(t *testing.T, keys ...string) map[string]string {
	t.Helper()
	kinds, err := e.st.(LedgerKinds).EntryKinds(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}

// A call that ends within the pair window is stored as one ledger entry
// with its usage row, and its hold never gets a row; the balances are
// exactly what a reserve and a settle stored apart give.
func TestACallEndedWithinThePairWindowIsStoredAsOneEntryWithoutAHoldRow(t *testing.T) {
	e := newPairEnv(t, time.Hour)
	ctx := context.Background()
	h, err := e.svc.Reserve(ctx, e.acct, "call-1", 300)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // many ticks of the writer
	if n := e.holdRows(t); n != 0 {
		t.Fatalf("%d hold rows while the reserve waits for its end", n)
	}
	if !h.Settle(ctx, 120, store.UsageLog{Model: "m"}) {
		t.Fatal("settle refused")
	}
	e.check(t, e.svc, 880, 380)
	if n := e.holdRows(t); n != 0 {
		t.Fatalf("%d hold rows after the settle", n)
	}
	kinds := e.entryKinds(t, "call-1:reserve", "call-1:settle")
	if len(kinds) != 1 || kinds["call-1:reserve"] == "" {
		t.Fatalf("ledger entries %v, want the reserve's key alone carrying the net movement", kinds)
	}
	if _, _, rows := books(t, e.st, e.userID); rows != 1 {
		t.Fatalf("%d consume rows, want 1", rows)
	}
}

// A reserve whose call outlasts the window is stored with its hold row, so
// that a crash from then on is refunded by the sweep as before.
func TestAReserveOlderThanThePairWindowIsStoredWithItsHold(t *testing.T) {
	e := newPairEnv(t, 30*time.Millisecond)
	ctx := context.Background()
	h, err := e.svc.Reserve(ctx, e.acct, "call-1", 300)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); e.holdRows(t) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reserve was not stored after its window")
		}
	}
	if !h.Settle(ctx, 120, store.UsageLog{Model: "m"}) {
		t.Fatal("settle refused")
	}
	e.check(t, e.svc, 880, 380)
	if n := e.holdRows(t); n != 0 {
		t.Fatalf("%d hold rows after the settle", n)
	}
	if kinds := e.entryKinds(t, "call-1:reserve", "call-1:settle"); len(kinds) != 2 {
		t.Fatalf("ledger entries %v, want the reserve and the settle", kinds)
	}
}

// Whoever needs the database to hold everything queued gets the parked
// reserves too: a Flush, a hand-over (Keep), a synchronous end, shutdown.
func TestParkedReservesAreStoredByWhateverNeedsTheirHolds(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		act  func(t *testing.T, e *holdEnv, h *Hold)
	}{
		{"a flush", func(t *testing.T, e *holdEnv, _ *Hold) { e.flush(t) }},
		{"a hand-over to a durable record", func(t *testing.T, e *holdEnv, h *Hold) {
			h.Keep(nil)
			e.flush(t)
		}},
		{"shutdown", func(t *testing.T, e *holdEnv, _ *Hold) {
			if err := e.w.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newPairEnv(t, time.Hour)
			h, err := e.svc.Reserve(ctx, e.acct, "call-1", 300)
			if err != nil {
				t.Fatal(err)
			}
			tc.act(t, e, h)
			if n := e.holdRows(t); n != 1 {
				t.Fatalf("%d hold rows, want the reserve's", n)
			}
			if u, _ := e.st.Users().Get(ctx, e.userID); u.Quota != 700 {
				t.Fatalf("database user quota %d, want 700", u.Quota)
			}
		})
	}
	t.Run("a synchronous end of a kept hold", func(t *testing.T) {
		e := newPairEnv(t, time.Hour)
		h, err := e.svc.Reserve(ctx, e.acct, "task-1", 300)
		if err != nil {
			t.Fatal(err)
		}
		h.Keep(nil)
		won, err := h.SettleNow(ctx, 100, &store.UsageLog{Type: store.LogConsume, UserID: e.userID, TokenID: e.tokenID, Quota: 100})
		if err != nil || !won {
			t.Fatalf("SettleNow: %v %v", won, err)
		}
		e.check(t, e.svc, 900, 400)
		if n := e.holdRows(t); n != 0 {
			t.Fatalf("%d hold rows after the end", n)
		}
	})
}

// Under concurrency, with calls shorter and longer than the window, every
// unit is accounted for exactly and no hold is left open.
func TestPairedAndUnpairedCallsKeepTheBooksExactUnderConcurrency(t *testing.T) {
	e := newPairEnv(t, 15*time.Millisecond)
	ctx := context.Background()
	const calls = 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	var charged int64
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := e.svc.Reserve(ctx, e.acct, fmt.Sprintf("call-%d", i), 2)
			if err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
			if i%5 == 0 {
				h.Refund(ctx, nil)
				return
			}
			charge := int64(1 + i%2)
			if h.Settle(ctx, charge, store.UsageLog{Model: "m"}) {
				mu.Lock()
				charged += charge
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	e.check(t, e.svc, 1000-charged, 500-charged)
	if n := e.holdRows(t); n != 0 {
		t.Fatalf("%d hold rows left open", n)
	}
	if _, used, rows := books(t, e.st, e.userID); used != charged || rows != calls-calls/5 {
		t.Fatalf("used %d in %d rows, want %d in %d", used, rows, charged, calls-calls/5)
	}
}
