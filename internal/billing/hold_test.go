package billing

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// holdEnv is a service over a fresh database whose user has 1000 and whose
// limited key has 500.
type holdEnv struct {
	st      store.Store
	w       *Writer
	svc     *Service
	acct    Account
	userID  int64
	tokenID int64
}

func newHoldEnv(t *testing.T, balances func(store.Store) Balances) *holdEnv {
	t.Helper()
	st, uid, limited, _ := seedAccounts(t, 1000, 500)
	w := NewWriter(st, quietLog(), time.Millisecond, 256)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	svc := NewService(balances(st), w, 500000)
	if err := svc.TakeLease(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	return &holdEnv{st: st, w: w, svc: svc, acct: Account{UserID: uid, TokenID: limited}, userID: uid, tokenID: limited}
}

func (e *holdEnv) flush(t *testing.T) {
	t.Helper()
	if err := e.w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// check asserts the live and database balances of user and key.
func (e *holdEnv) check(t *testing.T, svc *Service, user, token int64) {
	t.Helper()
	ctx := context.Background()
	e.flush(t)
	u, _ := e.st.Users().Get(ctx, e.userID)
	tk, _ := e.st.Tokens().Get(ctx, e.tokenID)
	lu, _ := svc.Balances().User(ctx, e.userID)
	lt, _, _ := svc.Balances().Token(ctx, e.tokenID)
	if u.Quota != user || tk.Quota != token || lu != user || lt != token {
		t.Fatalf("database user %d key %d, live user %d key %d; want %d and %d", u.Quota, tk.Quota, lu, lt, user, token)
	}
}

func TestSweepReleasesTheHoldsOfADeadNodeOnce(t *testing.T) {
	type sweepCase struct {
		name      string
		balances  func(t *testing.T, st store.Store) Balances
		preloaded bool // the sweeping process had loaded the balances before the sweep
		shared    bool // the balances outlive the process (Redis)
	}
	mem := func(t *testing.T, st store.Store) Balances { return NewMemoryBalances(st) }
	cases := []sweepCase{
		{"into memory balances loaded before the sweep", mem, true, false},
		{"into memory balances loaded after it", mem, false, false},
	}
	for _, f := range factories(t) {
		if f.name == "redis" {
			cases = append(cases, sweepCase{"into redis balances that outlived the process", f.make, false, true})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newHoldEnv(t, func(st store.Store) Balances { return tc.balances(t, st) })
			ctx := context.Background()
			// The dead process: reserved twice, settled one, then vanished.
			if err := e.svc.TakeLease(ctx, -time.Second); err != nil {
				t.Fatal(err)
			}
			h1, _ := e.svc.Reserve(ctx, e.acct, "call-1", 100)
			_, _ = e.svc.Reserve(ctx, e.acct, "call-2", 50)
			h1.Settle(ctx, 30, store.UsageLog{})
			e.flush(t)
			// The restarted process: new node, balances from the database.
			next := NewService(NewMemoryBalances(e.st), e.w, 500000)
			if tc.shared {
				next = NewService(e.svc.Balances(), e.w, 500000) // Redis outlives the process
			}
			if tc.preloaded {
				if _, err := next.Balances().User(ctx, e.userID); err != nil {
					t.Fatal(err)
				}
				_, _, _ = next.Balances().Token(ctx, e.tokenID)
			}
			var total int
			for range 2 { // a second sweep (or another node's) finds nothing
				n, err := next.Sweep(ctx)
				if err != nil {
					t.Fatal(err)
				}
				total += n
			}
			if total != 1 {
				t.Fatalf("released %d holds, want 1", total)
			}
			e.check(t, next, 970, 470)
			rows, _, _ := e.st.Logs().List(ctx, store.LogFilter{Type: store.LogError}, store.Page{})
			if len(rows) != 1 || rows[0].RequestID != "call-2" || rows[0].Quota != 0 {
				t.Fatalf("error rows %+v", rows)
			}
			if hs, _ := e.st.Holds().List(ctx); len(hs) != 0 {
				t.Fatalf("open holds left: %+v", hs)
			}
		})
	}
}

func TestSweepLeavesLiveNodesAndKeptHoldsAlone(t *testing.T) {
	e := newHoldEnv(t, NewMemoryBalances)
	ctx := context.Background()
	_, _ = e.svc.Reserve(ctx, e.acct, "live", 100)
	kept, _ := e.svc.Reserve(ctx, e.acct, "task-1", 40)
	kept.Keep(&store.UsageLog{Type: store.LogConsume, UserID: e.userID, Quota: 40})
	e.flush(t)
	other := NewService(NewMemoryBalances(e.st), e.w, 500000)
	if n, err := other.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("Sweep = %d, %v; want nothing released", n, err)
	}
	if hs, _ := e.st.Holds().List(ctx); len(hs) != 2 {
		t.Fatalf("open holds %+v", hs)
	}
}

func TestRestoredHoldEndsOnceWhicheverProcessEndsIt(t *testing.T) {
	e := newHoldEnv(t, NewMemoryBalances)
	ctx := context.Background()
	h, _ := e.svc.Reserve(ctx, e.acct, "task-x", 100)
	h.Keep(&store.UsageLog{Type: store.LogConsume, UserID: e.userID, TokenID: e.tokenID, Quota: 100})
	e.flush(t)
	// Another process (the poller after a restart) ends it, twice at once.
	poller := NewService(NewMemoryBalances(e.st), e.w, 500000)
	a := poller.RestoreHold(e.acct, "task-x", 100)
	b := poller.RestoreHold(e.acct, "task-x", 100)
	won, err := a.SettleNow(ctx, 130, &store.UsageLog{Type: store.LogConsume, UserID: e.userID, TokenID: e.tokenID, Quota: 30})
	if err != nil || !won {
		t.Fatalf("first end: %v %v", won, err)
	}
	won, err = b.RefundNow(ctx, &store.UsageLog{Type: store.LogRefund, UserID: e.userID, Quota: 100})
	if err != nil || won {
		t.Fatalf("second end: %v %v", won, err)
	}
	e.check(t, poller, 870, 370)
}
