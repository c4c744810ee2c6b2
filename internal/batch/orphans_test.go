package batch

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// A create keeps its tickets and then inserts its batch. A process that
// died in between left kept holds that no batch names: the runner refunds
// them once they are older than a create can take, exactly once, and
// leaves alone a batch's own holds, a young hold (a create under way on
// another node) and holds that are not a batch's.
func TestTheHoldsOfACreateThatDiedBeforeItsBatchWasRecordedAreRefunded(t *testing.T) {
	ctx := context.Background()
	st, err := sqlstore.OpenStore(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u := &store.User{Username: "alice", PasswordHash: "h", Role: store.RoleUser, Group: "default", Status: store.StatusEnabled, Quota: 10_000}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	w := billing.NewWriter(st, slog.New(slog.DiscardHandler), time.Millisecond, 16)
	defer w.Close(ctx)
	svc := billing.NewService(billing.NewMemoryBalances(st), w, 500_000)
	if err := svc.TakeLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	s := &Service{Deps: Deps{Batches: st.Batches(), Holds: st.Holds(), Billing: svc, Logger: slog.New(slog.DiscardHandler)}}
	acct := billing.Account{UserID: u.ID, Group: "default"}
	keep := func(key string, amount int64) {
		tk, err := s.gate().Hold(ctx, acct, "m1", key, amount, nil)
		if err != nil {
			t.Fatal(err)
		}
		tk.Keep(nil)
	}
	keep("batch:batch_died:m1", 3000)   // its create died before the insert
	keep("batch:batch_alive:m1", 2000)  // its batch exists
	keep(store.TaskHoldPrefix+"x", 500) // a task's, not a batch's
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	alive := &store.Batch{PublicID: "batch_alive", Kind: "openai", UserID: u.ID, Group: "default", Endpoint: "/v1/chat/completions",
		InputFileID: "file-x", CompletionWindow: "24h", Mode: modeGateway, Status: store.BatchInProgress}
	if err := st.Batches().InsertBatch(ctx, alive); err != nil {
		t.Fatal(err)
	}
	quota := func() int64 {
		got, err := st.Users().Get(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Quota
	}
	if n, err := s.refundOrphans(ctx, time.Now()); err != nil || n != 0 || quota() != 10_000-5500 {
		t.Fatalf("young holds: refunded %d %v, quota %d", n, err, quota())
	}
	later := time.Now().Add(orphanGrace + time.Second)
	for round, want := range []int{1, 0} {
		if n, err := s.refundOrphans(ctx, later); err != nil || n != want {
			t.Fatalf("round %d: refunded %d %v, want %d", round, n, err, want)
		}
	}
	if q := quota(); q != 10_000-2500 {
		t.Errorf("quota %d, want the dead create's 3000 back: %d", q, 10_000-2500)
	}
	open, err := st.Holds().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, h := range open {
		keys = append(keys, h.Key)
	}
	if len(keys) != 2 || keys[0] != "batch:batch_alive:m1" && keys[1] != "batch:batch_alive:m1" {
		t.Errorf("open holds %v, want the live batch's and the task's", keys)
	}
}
