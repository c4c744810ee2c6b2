package billing

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A node dies with entries still queued: a reserve that never reached the
// database, and the settle of a hold whose reserve did. Another node's
// sweep releases the stored hold and, through the Redis journal, gives back
// the two moves the database never saw, so the shared live balances equal
// the database again, to the unit.
func TestRedisJournalGivesBackMovesLostWithTheirNode(t *testing.T) {
	var shared *balancesFactory
	for _, f := range factories(t) {
		if f.name == "redis" {
			shared = &f
		}
	}
	if shared == nil {
		t.Skip("set TURNPIKE_TEST_REDIS to run the Redis journal test")
	}
	ctx := context.Background()
	st, uid, limited, _ := seedAccounts(t, 1000, 500)
	bal := shared.make(t, st)
	wA := NewWriter(st, quietLog(), time.Hour, 1<<20) // writes only when flushed
	a := NewService(bal, wA, 500000)
	if err := a.TakeLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	acct := Account{UserID: uid, TokenID: limited}
	stored, err := a.Reserve(ctx, acct, "call-stored", 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := wA.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reserve(ctx, acct, "call-lost", 300); err != nil {
		t.Fatal(err)
	}
	stored.Settle(ctx, 40, store.UsageLog{UserID: uid, TokenID: limited, Model: "m"})
	if u, _ := bal.User(ctx, uid); u != 1000-40-300 {
		t.Fatalf("live user balance %d before the crash", u)
	}
	// Node A dies: its lease ends and its queue is never written.
	if err := a.TakeLease(ctx, -time.Second); err != nil {
		t.Fatal(err)
	}
	wB := NewWriter(st, quietLog(), time.Millisecond, 256)
	t.Cleanup(func() { _ = wB.Close(context.Background()) })
	b := NewService(bal, wB, 500000)
	if err := b.TakeLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second sweep finds nothing more to do
		if _, err := b.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := st.Users().Get(ctx, uid)
	tk, _ := st.Tokens().Get(ctx, limited)
	lu, _ := bal.User(ctx, uid)
	lt, _, _ := bal.Token(ctx, limited)
	if u.Quota != 1000 || tk.Quota != 500 || lu != 1000 || lt != 500 {
		t.Fatalf("database user %d key %d, live user %d key %d; want 1000 and 500", u.Quota, tk.Quota, lu, lt)
	}
	if nodes, _ := bal.(Journal).Nodes(ctx); len(nodes) != 0 {
		// B's own journal is trimmed by its writer; A's is gone.
		for _, n := range nodes {
			if n == a.Node() {
				t.Fatalf("node A's journal still listed: %v", nodes)
			}
		}
	}
}
