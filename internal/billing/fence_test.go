package billing

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A node stalls past its lease while it runs: another node's sweep takes
// it for dead, undoes in Redis the reserve it had not written yet and
// releases the hold it had. The stalled node then goes on: it settles the
// released call (the database refuses the end) and writes the queued
// reserve. The refused end takes its live move back at once, and the node
// rebuilds the live balances when it finds the fence mark at its next
// renewal, so live balances equal the database to the unit again.
func TestANodeTakenForDeadWhileItRunsBringsTheLiveBalancesBackToTheLedger(t *testing.T) {
	bal, st, uid, limited := redisJournalFixture(t, 1000, 500)
	ctx := context.Background()
	a, wA := leasedNode(t, bal, st, time.Hour) // writes only when flushed
	acct := Account{UserID: uid, TokenID: limited}
	released := reserveStored(t, a, wA, acct, "call-released", 100)
	queued, err := a.Reserve(ctx, acct, "call-queued", 300)
	if err != nil {
		t.Fatal(err)
	}
	// A stalls past its lease; B's sweep takes it for dead.
	if err := a.TakeLease(ctx, -time.Second); err != nil {
		t.Fatal(err)
	}
	sweepFromAnotherNode(t, bal, st, 1)
	// A goes on: both calls end, and its queue reaches the database.
	released.Settle(ctx, 40, store.UsageLog{UserID: uid, TokenID: limited, Model: "m"})
	queued.Settle(ctx, 120, store.UsageLog{UserID: uid, TokenID: limited, Model: "m"})
	if err := wA.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Its next renewal finds the fence mark; the rebuild follows.
	if err := a.TakeLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	a.checkFence(ctx)
	if !bal.(*redisBalances).dirty.Load() {
		t.Fatal("the renewal did not find the fence mark the sweep left")
	}
	if err := a.resync(ctx); err != nil {
		t.Fatal(err)
	}
	// The released call is free (its hold was refunded whole), the queued
	// one charged 120.
	assertLiveEqualsDatabase(t, ctx, bal, st, uid, limited, 1000-120, 500-120)
}

// An end refused because the sweep released its hold takes its own live
// move back at once, without waiting for a rebuild.
func TestAnEndRefusedBecauseItsHoldWasReleasedTakesBackItsLiveMove(t *testing.T) {
	bal, st, uid, limited := redisJournalFixture(t, 1000, 500)
	ctx := context.Background()
	a, wA := leasedNode(t, bal, st, time.Hour)
	h := reserveStored(t, a, wA, Account{UserID: uid, TokenID: limited}, "call", 100)
	if err := a.TakeLease(ctx, -time.Second); err != nil {
		t.Fatal(err)
	}
	sweepFromAnotherNode(t, bal, st, 1)
	h.Settle(ctx, 40, store.UsageLog{UserID: uid, TokenID: limited, Model: "m"})
	if err := wA.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if bal.(*redisBalances).dirty.Load() {
		t.Fatal("a refused end should not need a rebuild")
	}
	assertLiveEqualsDatabase(t, ctx, bal, st, uid, limited, 1000, 500)
}

// leasedNode is a node with a lease of a minute whose writer flushes
// every interval (time.Hour: only when told).
func leasedNode(t *testing.T, bal Balances, st store.Store, interval time.Duration) (*Service, *Writer) {
	t.Helper()
	w := NewWriter(st, quietLog(), interval, 1<<20)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	s := NewService(bal, w, 500000)
	if err := s.TakeLease(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	return s, w
}

// reserveStored reserves amount and writes the reserve to the database.
func reserveStored(t *testing.T, s *Service, w *Writer, acct Account, key string, amount int64) *Hold {
	t.Helper()
	h, err := s.Reserve(context.Background(), acct, key, amount)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

// sweepFromAnotherNode sweeps once from a new live node and wants it to
// release released holds.
func sweepFromAnotherNode(t *testing.T, bal Balances, st store.Store, released int) {
	t.Helper()
	b, _ := leasedNode(t, bal, st, time.Millisecond)
	if n, err := b.Sweep(context.Background()); err != nil || n != released {
		t.Fatalf("the sweep released %d holds (%v), want %d", n, err, released)
	}
}

func redisJournalFixture(t *testing.T, userQuota, tokenQuota int64) (Balances, store.Store, int64, int64) {
	t.Helper()
	for _, f := range factories(t) {
		if f.name == "redis" {
			st, uid, limited, _ := seedAccounts(t, userQuota, tokenQuota)
			return f.make(t, st), st, uid, limited
		}
	}
	t.Skip("set TURNPIKE_TEST_REDIS to run the Redis journal tests")
	return nil, nil, 0, 0
}

func assertLiveEqualsDatabase(t *testing.T, ctx context.Context, bal Balances, st store.Store, uid, tokenID, wantUser, wantToken int64) {
	t.Helper()
	u, _ := st.Users().Get(ctx, uid)
	tk, _ := st.Tokens().Get(ctx, tokenID)
	lu, _ := bal.User(ctx, uid)
	lt, _, _ := bal.Token(ctx, tokenID)
	if u.Quota != wantUser || tk.Quota != wantToken || lu != wantUser || lt != wantToken {
		t.Fatalf("database user %d key %d, live user %d key %d; want %d and %d", u.Quota, tk.Quota, lu, lt, wantUser, wantToken)
	}
}
