package ratelimit

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// book is the env's key budget as a reconcile reads it: a limiter over
// the env's database (its rows) and Redis (under the env's prefix).
func (e *lateEnv) book(t *testing.T) PeriodBook {
	t.Helper()
	ctx := context.Background()
	rb := e.limA.be.(*redisBackend)
	lim := New(e.st.Traffic(), rb.rdb, nil)
	lim.be.(*redisBackend).prefix = rb.prefix
	lim.SetClock(func() time.Time { return *e.now })
	set(t, lim, store.SubjectToken, strconv.FormatInt(e.id, 10), Limits{PeriodQuota: 1 << 40, Period: Month})
	w, err := lim.Waiting(ctx)
	must(t, err)
	b, ok, err := lim.PeriodBooks(ctx, store.SubjectToken, e.id, w)
	if err != nil || !ok {
		t.Fatalf("period books: %v (budget found %v)", err, ok)
	}
	return b
}

// The reconcile of a budget waits for what the sweep has yet to decide: a
// late end whose row is stored before the sweep counts it leaves the
// counter behind the rows by its charge, and a settled share whose row is
// still queued leaves it ahead by its charge, with no hold open in the
// database to explain it. Both fit while they wait, and the counter
// equals the rows once the sweep has run. (On main the first read behind
// the rows, live 0 against 60, and failed the check.)
func TestABudgetsBooksAllowWhatLateAndSettledSharesWaitFor(t *testing.T) {
	cases := []struct {
		name    string
		late    bool
		waiting PeriodBook
	}{
		{"a late end whose row is stored", true, PeriodBook{Live: 0, Stored: 60, Late: 60}},
		{"a settled share whose row is queued", false, PeriodBook{Live: 60, Stored: 0, Settling: 60}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lateStores(t, func(t *testing.T, e *lateEnv) {
				ctx := context.Background()
				hold, share := e.callOnA(t)
				if c.late {
					must(t, e.billA.TakeLease(ctx, -time.Second))
					if n, err := e.limB.SweepBudgets(ctx, e.billB); err != nil || n != 1 {
						t.Fatalf("the budget sweep ended %d shares (%v), want 1", n, err)
					}
					must(t, e.billA.TakeLease(ctx, time.Minute))
				}
				hold.Settle(ctx, 60, store.UsageLog{UserID: e.acct.UserID, TokenID: e.id, Model: "m"})
				share.Settle(ctx, 60)
				if c.late {
					must(t, e.wA.Flush(ctx))
				}
				if b := e.book(t); b != c.waiting || !b.Fits(0) {
					t.Fatalf("while the end waits the book is %+v (fits %v), want %+v and fitting", b, b.Fits(0), c.waiting)
				}
				must(t, e.wA.Flush(ctx))
				if _, err := e.limB.SweepBudgets(ctx, e.billB); err != nil {
					t.Fatal(err)
				}
				if b, want := e.book(t), (PeriodBook{Live: 60, Stored: 60}); b != want || !b.Fits(0) {
					t.Fatalf("after the sweep the book is %+v, want %+v", b, want)
				}
			})
		})
	}
}

// A counter fits its rows ahead by at most what is open or settling and
// behind by at most what is owed late; one unit more either way does not.
func TestAPeriodBookFitsOnlyWithinWhatWaits(t *testing.T) {
	cases := []struct {
		name string
		b    PeriodBook
		open int64
		want bool
	}{
		{"equal", PeriodBook{Live: 50, Stored: 50}, 0, true},
		{"ahead by what is open", PeriodBook{Live: 150, Stored: 50}, 100, true},
		{"ahead by what is open and settling", PeriodBook{Live: 190, Stored: 50, Settling: 40}, 100, true},
		{"ahead by one more", PeriodBook{Live: 191, Stored: 50, Settling: 40}, 100, false},
		{"behind by what is owed late", PeriodBook{Live: 20, Stored: 50, Late: 30}, 0, true},
		{"behind by one more", PeriodBook{Live: 19, Stored: 50, Late: 30}, 0, false},
		{"behind with nothing late, however much is open", PeriodBook{Live: 49, Stored: 50, Settling: 10}, 100, false},
	}
	for _, c := range cases {
		if got := c.b.Fits(c.open); got != c.want {
			t.Errorf("%s: %+v with %d open fits %v, want %v", c.name, c.b, c.open, got, c.want)
		}
	}
}
