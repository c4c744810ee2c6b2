package plans

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// billingNode is one process's billing over the plan env's database,
// holding a lease of a minute; its writer writes only when flushed.
func (e *env) billingNode(t *testing.T) (*billing.Service, *billing.Writer) {
	t.Helper()
	w := billing.NewWriter(e.st, slog.New(slog.DiscardHandler), time.Hour, 1<<16)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	s := billing.NewService(billing.NewMemoryBalances(e.st), w, 500000)
	if err := s.TakeLease(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	return s, w
}

// twoNodes is a plan-paid call under way on node A ("call-1": its hold and
// a draw of 30 on user's plan), with node B beside it to sweep.
type twoNodes struct {
	billA, billB *billing.Service
	wA           *billing.Writer
	planA, planB *Service
	hold         *billing.Hold
	d            *Draw
}

// callOnA starts the call on A; storeHold writes its hold to the database
// before the draw is taken.
func (e *env) callOnA(t *testing.T, storeHold bool) twoNodes {
	t.Helper()
	ctx := context.Background()
	var n twoNodes
	n.billA, n.wA = e.billingNode(t)
	n.billB, _ = e.billingNode(t)
	n.planA = e.nodeNamed(t, n.billA.Node(), nil)
	n.planB = e.nodeNamed(t, n.billB.Node(), n.planA)
	var err error
	if n.hold, err = n.billA.Reserve(ctx, billing.Account{UserID: user, Group: "default"}, "call-1", 0); err != nil {
		t.Fatal(err)
	}
	if storeHold {
		must(t, n.wA.Flush(ctx))
	}
	n.d, err = n.planA.Take(ctx, n.planA.Covering(user, "default", "m1"), user, 30, "call-1")
	if err != nil || n.d == nil {
		t.Fatalf("draw: %v %v", n.d, err)
	}
	return n
}

// A node stalls past its lease in the middle of a plan-paid call; another
// node's sweeps take it for dead, release its hold if the hold was stored,
// and take its draw back. The stalled node then goes on and ends the call.
// Its late end moves no window at once: the window comes to count exactly
// what the call's row says (the charge when the row is written, nothing
// when the database refuses it or the call failed) once the sweep has seen
// how the hold ended, and no later sweep moves it again.
func TestALateEndOfADrawASweepTookBackCountsWhatItsRowSays(t *testing.T) {
	cases := []struct {
		name       string
		holdStored bool // the hold reached the database before the stall
		refund     bool // the call failed
		wantRows   int64
	}{
		{name: "hold never stored: the late settle's row is written and counted", wantRows: 25},
		{name: "hold stored and released by the sweep: the late settle is refused and counts nothing", holdStored: true},
		{name: "hold never stored, the call failed: its late refund moves nothing", refund: true},
		{name: "hold released, the call failed: its late refund moves nothing", holdStored: true, refund: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backends(t, func(t *testing.T, e *env) {
				ctx := context.Background()
				n := e.callOnA(t, c.holdStored)
				billA, wA, billB, planA, planB, hold, d := n.billA, n.wA, n.billB, n.planA, n.planB, n.hold, n.d
				// A stalls past its lease; B sweeps the books, then the plans.
				must(t, billA.TakeLease(ctx, -time.Second))
				if _, err := billB.Sweep(ctx); err != nil {
					t.Fatal(err)
				}
				if n, err := planB.Sweep(ctx, billB); err != nil || n != 1 {
					t.Fatalf("the sweep took back %d draws (%v), want the stalled node's one", n, err)
				}
				// A goes on: it ends the call as admission does and writes.
				if c.refund {
					d.Refund(ctx)
					hold.Refund(ctx, &store.UsageLog{UserID: user, Other: d.Mark(nil)})
				} else {
					d.Settle(ctx, 25)
					row := store.UsageLog{Type: store.LogConsume, UserID: user, Model: "m1", Quota: 25, Other: d.Mark(nil)}
					hold.SettleWith(ctx, 0, &row)
				}
				must(t, wA.Flush(ctx))
				must(t, billA.TakeLease(ctx, time.Minute))
				for i := range 3 { // B's next sweeps, then A's own
					sweeper := []*Service{planB, planB, planA}[i]
					if _, err := sweeper.Sweep(ctx, []*billing.Service{billB, billB, billA}[i]); err != nil {
						t.Fatal(err)
					}
					assertWindowIsItsRows(t, planB, c.wantRows, 0)
				}
				if left, err := planB.be.journal(ctx, billA.Node()); err != nil || len(left) != 0 {
					t.Errorf("records left under the stalled node: %+v (err %v)", left, err)
				}
			})
		})
	}
}

// A node stalls past its lease; another node's billing sweep releases its
// stored hold before any plan sweep runs. The node wakes, renews its lease
// and settles the call: its draw is still journaled, so the window counts
// the charge, but the database refuses the settle. The node is alive, yet
// the sweep takes the charge back, since the released hold says no row
// will ever count it.
func TestASettledDrawWhoseHoldWasReleasedIsTakenBackFromALiveNode(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		n := e.callOnA(t, true)
		billA, wA, billB, planA, planB, hold, d := n.billA, n.wA, n.billB, n.planA, n.planB, n.hold, n.d
		must(t, billA.TakeLease(ctx, -time.Second))
		if n, err := billB.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("the billing sweep released %d holds (%v), want 1", n, err)
		}
		must(t, billA.TakeLease(ctx, time.Minute))
		d.Settle(ctx, 25)
		row := store.UsageLog{Type: store.LogConsume, UserID: user, Model: "m1", Quota: 25, Other: d.Mark(nil)}
		hold.SettleWith(ctx, 0, &row)
		must(t, wA.Flush(ctx))
		for _, sweep := range []struct {
			s    *Service
			bill *billing.Service
		}{{planB, billB}, {planA, billA}, {planB, billB}} {
			if _, err := sweep.s.Sweep(ctx, sweep.bill); err != nil {
				t.Fatal(err)
			}
			assertWindowIsItsRows(t, planB, 0, 0)
		}
	})
}

// A node settles a plan-paid call and stalls past its lease before its
// writer writes the row (its hold never reached the database either).
// Another node's sweep finds the node abandoned and the settle unstored,
// so it takes the charge back, but keeps it owed as a late draw: when the
// stalled node goes on and writes the row, the next sweep counts it.
func TestASettledDrawTakenBackFromAStalledNodeIsCountedWhenItsRowComes(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		n := e.callOnA(t, false)
		billA, wA, billB, planB, hold, d := n.billA, n.wA, n.billB, n.planB, n.hold, n.d
		d.Settle(ctx, 25)
		row := store.UsageLog{Type: store.LogConsume, UserID: user, Model: "m1", Quota: 25, Other: d.Mark(nil)}
		hold.SettleWith(ctx, 0, &row)
		must(t, billA.TakeLease(ctx, -time.Second)) // stalls before its writer writes
		if _, err := billB.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := planB.Sweep(ctx, billB); err != nil || n != 1 {
			t.Fatalf("the sweep took back %d draws (%v), want 1", n, err)
		}
		assertWindowIsItsRows(t, planB, 0, 25)
		must(t, wA.Flush(ctx)) // A goes on
		must(t, billA.TakeLease(ctx, time.Minute))
		for range 2 {
			if _, err := planB.Sweep(ctx, billB); err != nil {
				t.Fatal(err)
			}
			assertWindowIsItsRows(t, planB, 25, 0)
		}
	})
}

// assertWindowIsItsRows wants the first window to count exactly its rows'
// sum, rows, with nothing open or settling and late owed by late draws.
func assertWindowIsItsRows(t *testing.T, s *Service, rows, late int64) {
	t.Helper()
	ws, err := s.Reconcile(context.Background(), nil)
	if err != nil || len(ws) == 0 {
		t.Fatalf("reconcile: %+v %v", ws, err)
	}
	w := ws[0]
	if !w.OK || w.Live != rows || w.RowsSum != rows || w.Open != 0 || w.Settling != 0 || w.Late != late {
		t.Fatalf("window %+v; want it to count its rows' %d, nothing open or settling, %d late", w, rows, late)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A node taken for dead that ends its call late and then really dies
// before its row is written leaves a late record no row will count: the
// sweep keeps it while the node's settle may still be on its way, and
// drops it, moving nothing, once the node has stayed gone past the grace.
func TestALateDrawOfANodeThatThenDiesIsDroppedAfterTheGrace(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		n := e.callOnA(t, false)
		billA, billB, planB, d := n.billA, n.billB, n.planB, n.d
		must(t, billA.TakeLease(ctx, -time.Second))
		if n, err := planB.Sweep(ctx, billB); err != nil || n != 1 {
			t.Fatalf("the sweep took back %d draws (%v), want 1", n, err)
		}
		d.Settle(ctx, 25) // late; the node dies before its writer writes
		for _, step := range []struct {
			after    time.Duration
			wantLeft int
			wantLate int64
		}{{time.Minute, 1, 25}, {2 * time.Minute, 0, 0}} {
			e.now = e.now.Add(step.after)
			if _, err := planB.Sweep(ctx, billB); err != nil {
				t.Fatal(err)
			}
			if left, err := planB.be.journal(ctx, billA.Node()); err != nil || len(left) != step.wantLeft {
				t.Errorf("%d records left under the dead node (err %v), want %d", len(left), err, step.wantLeft)
			}
			assertWindowIsItsRows(t, planB, 0, step.wantLate)
		}
	})
}
