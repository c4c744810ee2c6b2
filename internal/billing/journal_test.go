package billing

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A node dies with entries still queued: a reserve that never reached the
// database (the call was never answered), the settle of a hold whose
// reserve did, a call reserved and settled with neither stored, and a call
// that reserved nothing (a plan paid it) settled with its row. The
// answered calls are charged: another node's sweep writes their settles and
// usage rows from the Redis journal (with the lost reserve before its
// settle) instead of refunding them, and gives back the unanswered call's
// move, so the shared live balances equal the database to the unit.
func TestRedisJournalChargesAnsweredCallsAndGivesBackTheRest(t *testing.T) {
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
	both, err := a.Reserve(ctx, acct, "call-both-lost", 50)
	if err != nil {
		t.Fatal(err)
	}
	both.Settle(ctx, 25, store.UsageLog{UserID: uid, TokenID: limited, Model: "m"})
	zero, err := a.Reserve(ctx, acct, "call-zero", 0)
	if err != nil {
		t.Fatal(err)
	}
	zero.Settle(ctx, 0, store.UsageLog{UserID: uid, TokenID: limited, Model: "planned"})
	if u, _ := bal.User(ctx, uid); u != 1000-40-300-25 {
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
	if u.Quota != 935 || tk.Quota != 435 || lu != 935 || lt != 435 {
		t.Fatalf("database user %d key %d, live user %d key %d; want 935 and 435", u.Quota, tk.Quota, lu, lt)
	}
	byUser, byToken := consumed(t, st)
	if byUser[uid] != 65 || byToken[limited] != 65 {
		t.Fatalf("consume rows sum to %d (key %d), want the two answered calls' 65", byUser[uid], byToken[limited])
	}
	zeroRows, _, err := st.Logs().List(ctx, store.LogFilter{Type: store.LogConsume, Model: "planned"}, store.Page{Page: 1, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	rows := len(zeroRows)
	if rows != 1 {
		t.Fatalf("the call that reserved nothing has %d consume rows, want 1: it was answered", rows)
	}
	if n, _ := st.Holds().Lapsed(ctx, time.Now().Add(time.Hour), "", 10); len(n) != 0 {
		t.Fatalf("holds left open: %+v", n)
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
