package ratelimit

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
)

// lateStores runs a two-node test over SQLite, and over PostgreSQL and
// MariaDB when their test servers are set (Redis is needed by all).
func lateStores(t *testing.T, run func(t *testing.T, e *lateEnv)) {
	t.Run("sqlite", func(t *testing.T) { run(t, newLateEnvOn(t, sqlitetest.DSN(t))) })
	for _, db := range []struct {
		name, env string
		create    func(testing.TB, string) string
	}{{"postgres", "TURNPIKE_TEST_POSTGRES", testdb.Postgres}, {"mysql", "TURNPIKE_TEST_MYSQL", testdb.MySQL}} {
		t.Run(db.name, func(t *testing.T) {
			base := os.Getenv(db.env)
			if base == "" {
				t.Skip(db.env + " not set")
			}
			if os.Getenv("TURNPIKE_TEST_REDIS") == "" {
				t.Skip("TURNPIKE_TEST_REDIS not set")
			}
			run(t, newLateEnvOn(t, db.create(t, base)))
		})
	}
}

// sweepAll runs the budget sweeps of B, B again and A, and wants the
// budget to count exactly what the stored rows charged after each.
func (e *lateEnv) sweepAll(t *testing.T, what string) {
	t.Helper()
	for i, sweep := range []struct {
		s    *Service
		bill *billing.Service
	}{{e.limB, e.billB}, {e.limB, e.billB}, {e.limA, e.billA}} {
		if _, err := sweep.s.SweepBudgets(context.Background(), sweep.bill); err != nil {
			t.Fatal(err)
		}
		if got, rows := periodUsed(t, e.limB, e.id), e.rowsSum(t); got != rows {
			t.Fatalf("%s: after sweep %d the budget counts %d but the rows sum to %d", what, i+1, got, rows)
		}
	}
}

// journalLeft is how many journal records (of both nodes) and late
// records are left.
func (e *lateEnv) journalLeft(t *testing.T) (records, late int) {
	t.Helper()
	rb := e.limB.be.(*redisBackend)
	for _, owner := range []string{e.billA.Node(), e.billB.Node()} {
		recs, err := rb.budgetRecords(context.Background(), owner)
		must(t, err)
		records += len(recs)
	}
	n, err := rb.rdb.HLen(context.Background(), rb.budgetLateKey()).Result()
	must(t, err)
	return records, int(n)
}

// A node stalls past its lease; another node's billing sweep releases its
// stored hold before any budget sweep runs. The node wakes (renewing its
// lease or not) and settles the call: its share's record is still there,
// so the budget counts the charge, but the database refuses the settle.
// The budget sweep takes the charge back, live node or not, since the
// released hold says no row will ever count it. (On main the settle
// dropped the record and the charge stayed counted with no row.)
func TestASettledShareWhoseHoldWasReleasedIsTakenBack(t *testing.T) {
	for _, renews := range []bool{true, false} {
		t.Run("renews its lease "+strconv.FormatBool(renews), func(t *testing.T) {
			lateStores(t, func(t *testing.T, e *lateEnv) {
				ctx := context.Background()
				hold, err := e.billA.Reserve(ctx, e.acct, "call-1", 100)
				must(t, err)
				must(t, e.wA.Flush(ctx))
				share, err := e.limA.For(Subject{TokenID: e.id}).Hold(ctx, 100, "call-1")
				must(t, err)
				must(t, e.billA.TakeLease(ctx, -time.Second))
				if n, err := e.billB.Sweep(ctx); err != nil || n != 1 {
					t.Fatalf("the billing sweep released %d holds (%v), want 1", n, err)
				}
				if renews {
					must(t, e.billA.TakeLease(ctx, time.Minute))
				}
				hold.Settle(ctx, 60, store.UsageLog{UserID: e.acct.UserID, Model: "m"})
				share.Settle(ctx, 60)
				must(t, e.wA.Flush(ctx))
				if rows := e.rowsSum(t); rows != 0 {
					t.Fatalf("the refused settle stored rows of %d", rows)
				}
				e.sweepAll(t, "released hold")
				if recs, late := e.journalLeft(t); recs != 0 || late != 0 {
					t.Fatalf("%d journal and %d late records left, want none", recs, late)
				}
			})
		})
	}
}

// A node settles a call and stalls past its lease before its writer
// writes the row (its hold never reached the database either). Another
// node's budget sweep finds it abandoned and the settle unstored, so it
// takes the charge back but keeps it owed as a late record: counted when
// the stalled node goes on and writes the row, dropped after the grace
// when it really died. (On main the settle dropped the record, and the
// dead node's charge stayed counted with no row.)
func TestASettledShareOfAStalledNodeCountsWhatItsRowSays(t *testing.T) {
	for _, wakes := range []bool{true, false} {
		t.Run("wakes "+strconv.FormatBool(wakes), func(t *testing.T) {
			lateStores(t, func(t *testing.T, e *lateEnv) {
				ctx := context.Background()
				hold, share := e.callOnA(t)
				hold.Settle(ctx, 60, store.UsageLog{UserID: e.acct.UserID, Model: "m"})
				share.Settle(ctx, 60)
				must(t, e.billA.TakeLease(ctx, -time.Second)) // stalls before its writer writes
				if _, err := e.billB.Sweep(ctx); err != nil {
					t.Fatal(err)
				}
				if n, err := e.limB.SweepBudgets(ctx, e.billB); err != nil || n != 1 {
					t.Fatalf("the budget sweep took back %d shares (%v), want 1", n, err)
				}
				if got := periodUsed(t, e.limB, e.id); got != 0 {
					t.Fatalf("the budget counts %d before the row is written, want 0", got)
				}
				if wakes {
					must(t, e.wA.Flush(ctx))
					must(t, e.billA.TakeLease(ctx, time.Minute))
				} else {
					*e.now = e.now.Add(lateGrace + time.Second)
				}
				e.sweepAll(t, "stalled node")
				if want := map[bool]int64{true: 60, false: 0}[wakes]; e.rowsSum(t) != want {
					t.Fatalf("rows sum to %d, want %d", e.rowsSum(t), want)
				}
				if recs, late := e.journalLeft(t); recs != 0 || late != 0 {
					t.Fatalf("%d journal and %d late records left, want none", recs, late)
				}
			})
		})
	}
}

// Calls on two nodes end while the budget sweeps run, and one node is
// taken for dead in the middle: its calls whose holds were stored are
// released (their settles refused), the others' shares given back, some
// before and some after their late settles. Once the writers have written
// and the sweeps have seen it, the budget counts exactly what the stored
// rows charged, to the unit, and no record is left.
func TestABudgetCountsItsRowsExactlyWhenCallsEndDuringSweepsAndANodeIsTakenForDead(t *testing.T) {
	lateStores(t, func(t *testing.T, e *lateEnv) {
		ctx := context.Background()
		const calls = 48
		type call struct {
			hold  *billing.Hold
			share *BudgetHold
			onA   bool
		}
		cs := make([]call, calls)
		start := func(from, to int) {
			var wg sync.WaitGroup
			for i := from; i < to; i++ {
				wg.Go(func() {
					bill, lim, key := e.billB, e.limB, "call-"+strconv.Itoa(i)
					if cs[i].onA = i%2 == 0; cs[i].onA {
						bill, lim = e.billA, e.limA
					}
					var err error
					if cs[i].hold, err = bill.Reserve(ctx, e.acct, key, 100); err != nil {
						t.Error(err)
						return
					}
					if cs[i].share, err = lim.For(Subject{TokenID: e.id}).Hold(ctx, 100, key); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		start(0, calls/2)
		must(t, e.wA.Flush(ctx)) // the first half of A's holds are stored
		start(calls/2, calls)
		if t.Failed() {
			t.FailNow()
		}
		must(t, e.billA.TakeLease(ctx, -time.Second)) // A stalls
		if _, err := e.billB.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.limB.SweepBudgets(ctx, e.billB); err != nil {
					t.Error(err)
					return
				}
			}
		})
		var ends sync.WaitGroup
		for i := range cs {
			ends.Go(func() {
				c := cs[i]
				if i%5 == 4 {
					c.hold.Refund(ctx, nil)
					c.share.Refund(ctx)
					return
				}
				charge := int64(i%97 + 1)
				c.hold.Settle(ctx, charge, store.UsageLog{UserID: e.acct.UserID, Model: "m"})
				c.share.Settle(ctx, charge)
			})
		}
		ends.Wait()
		close(stop)
		wg.Wait()
		must(t, e.wA.Flush(ctx))
		must(t, e.wB.Flush(ctx))
		must(t, e.billA.TakeLease(ctx, time.Minute))
		e.sweepAll(t, "after the writers wrote")
		if rows := e.rowsSum(t); rows == 0 {
			t.Fatal("no row was stored: the test proves nothing")
		}
		if recs, late := e.journalLeft(t); recs != 0 || late != 0 {
			t.Fatalf("%d journal and %d late records left, want none", recs, late)
		}
	})
}
