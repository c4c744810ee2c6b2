package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// lateEnv is two gateway processes over one database and one Redis: real
// billing (its leases, its sweep, its ledger) and period budgets counted
// under a prefix of the test's own, journaled under the billing node ids.
type lateEnv struct {
	now          *time.Time
	st           *sqlstore.Store
	acct         billing.Account
	billA, billB *billing.Service
	wA, wB       *billing.Writer
	limA, limB   *Service
	id           int64
}

func newLateEnv(t *testing.T) *lateEnv {
	t.Helper()
	return newLateEnvOn(t, sqlitetest.DSN(t))
}

// newLateEnvOn is newLateEnv over the database dsn names.
func newLateEnvOn(t *testing.T, dsn string) *lateEnv {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	limA, id := redisService(t, &now)
	st, err := sqlstore.OpenStore(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	u := &store.User{Username: "u", Role: store.RoleUser, Group: "default", Quota: 1 << 40}
	if err := st.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	e := &lateEnv{now: &now, st: st, acct: billing.Account{UserID: u.ID, Group: "default"}, limA: limA, id: id}
	e.billA, e.wA = billingProcess(t, st)
	e.billB, e.wB = billingProcess(t, st)
	e.limB = New(&fakeRepo{spent: map[string]int64{}}, limA.be.(*redisBackend).rdb, nil)
	e.limB.SetClock(func() time.Time { return *e.now })
	r := make([]byte, 6)
	_, _ = rand.Read(r)
	prefix := "turnpike:rl-test:" + hex.EncodeToString(r) + ":"
	for _, p := range []struct {
		s    *Service
		node string
	}{{limA, e.billA.Node()}, {e.limB, e.billB.Node()}} {
		p.s.be.(*redisBackend).prefix = prefix
		p.s.JournalAs(p.node)
		set(t, p.s, store.SubjectToken, strconv.FormatInt(id, 10), Limits{PeriodQuota: 1 << 40, Period: Month})
	}
	return e
}

// billingProcess is a billing service with a lease of a minute whose
// writer writes only when flushed.
func billingProcess(t *testing.T, st store.Store) (*billing.Service, *billing.Writer) {
	w := billing.NewWriter(st, slog.New(slog.DiscardHandler), time.Hour, 1<<16)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	s := billing.NewService(billing.NewMemoryBalances(st), w, 500000)
	if err := s.TakeLease(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	return s, w
}

// rowsSum is what the stored consume rows charged.
// callOnA starts call-1 on node A: its billing hold and its budget share
// of 100, the state every late-end test starts from.
func (e *lateEnv) callOnA(t *testing.T) (*billing.Hold, *BudgetHold) {
	t.Helper()
	hold, err := e.billA.Reserve(context.Background(), e.acct, "call-1", 100)
	must(t, err)
	share, err := e.limA.For(Subject{TokenID: e.id}).Hold(context.Background(), 100, "call-1")
	must(t, err)
	return hold, share
}

func (e *lateEnv) rowsSum(t *testing.T) int64 {
	t.Helper()
	rows, _, err := e.st.Logs().List(context.Background(), store.LogFilter{}, store.Page{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, r := range rows {
		if r.Type == store.LogConsume {
			sum += r.Quota
		}
	}
	return sum
}

// A node stalls past its lease mid-call; another node's billing sweep
// releases its hold if the hold was stored, and its budget sweep gives the
// share back. The stalled node then ends the call. Its late settle moves
// no counter at once: the budget comes to count exactly what the call's
// row says (the charge when the row is written, nothing when the database
// refuses it or the call failed) once a sweep has seen how the hold ended,
// and no later sweep moves it again.
func TestALateEndOfAShareASweepEndedCountsWhatItsRowSays(t *testing.T) {
	cases := []struct {
		name       string
		holdStored bool
		refund     bool
		wantRows   int64
	}{
		{name: "hold never stored: the late settle's row is written and counted", wantRows: 60},
		{name: "hold stored and released by the sweep: the late settle is refused and counts nothing", holdStored: true},
		{name: "the call failed: its late refund moves nothing", refund: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newLateEnv(t)
			ctx := context.Background()
			hold, err := e.billA.Reserve(ctx, e.acct, "call-1", 100)
			if err != nil {
				t.Fatal(err)
			}
			if c.holdStored {
				must(t, e.wA.Flush(ctx))
			}
			share, err := e.limA.For(Subject{TokenID: e.id}).Hold(ctx, 100, "call-1")
			if err != nil {
				t.Fatal(err)
			}
			must(t, e.billA.TakeLease(ctx, -time.Second)) // A stalls
			if _, err := e.billB.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := e.limB.SweepBudgets(ctx, e.billB); err != nil || n != 1 {
				t.Fatalf("the budget sweep ended %d shares (%v), want the stalled node's one", n, err)
			}
			if c.refund { // A goes on and ends the call as admission does
				hold.Refund(ctx, nil)
				share.Refund(ctx)
			} else {
				hold.Settle(ctx, 60, store.UsageLog{UserID: e.acct.UserID, Model: "m"})
				share.Settle(ctx, 60)
			}
			must(t, e.wA.Flush(ctx))
			must(t, e.billA.TakeLease(ctx, time.Minute))
			for i, sweep := range []struct {
				s    *Service
				bill *billing.Service
			}{{e.limB, e.billB}, {e.limB, e.billB}, {e.limA, e.billA}} {
				if _, err := sweep.s.SweepBudgets(ctx, sweep.bill); err != nil {
					t.Fatal(err)
				}
				if got, rows := periodUsed(t, e.limB, e.id), e.rowsSum(t); got != c.wantRows || rows != c.wantRows {
					t.Fatalf("after sweep %d the budget counts %d and the rows sum to %d, want both %d", i+1, got, rows, c.wantRows)
				}
			}
			if late, err := e.limB.be.(*redisBackend).rdb.HLen(ctx, e.limB.be.(*redisBackend).budgetLateKey()).Result(); err != nil || late != 0 {
				t.Fatalf("%d late records left (err %v)", late, err)
			}
		})
	}
}

// A node taken for dead that settles late and then really dies before its
// row is written leaves a late record no row will count: the sweep keeps
// it while the node's settle may still be on its way, and drops it,
// moving nothing, once the node has stayed gone past the grace.
func TestALateShareOfANodeThatThenDiesIsDroppedAfterTheGrace(t *testing.T) {
	e := newLateEnv(t)
	ctx := context.Background()
	hold, share := e.callOnA(t)
	must(t, e.billA.TakeLease(ctx, -time.Second))
	if n, err := e.limB.SweepBudgets(ctx, e.billB); err != nil || n != 1 {
		t.Fatalf("the budget sweep ended %d shares (%v), want 1", n, err)
	}
	share.Settle(ctx, 60) // late; the node dies before its writer writes
	hold.Settle(ctx, 60, store.UsageLog{UserID: e.acct.UserID, Model: "m"})
	rb := e.limB.be.(*redisBackend)
	for _, step := range []struct {
		after    time.Duration
		wantLeft int64
	}{{time.Minute, 1}, {2 * time.Minute, 0}} {
		*e.now = e.now.Add(step.after)
		if _, err := e.limB.SweepBudgets(ctx, e.billB); err != nil {
			t.Fatal(err)
		}
		if left, err := rb.rdb.HLen(ctx, rb.budgetLateKey()).Result(); err != nil || left != step.wantLeft {
			t.Fatalf("%d late records left (err %v), want %d", left, err, step.wantLeft)
		}
		if got := periodUsed(t, e.limB, e.id); got != 0 {
			t.Fatalf("the budget counts %d, want 0: no row was written", got)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
