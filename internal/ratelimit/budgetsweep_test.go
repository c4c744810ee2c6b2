package ratelimit

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// fakeBooks answers the budget sweep as the ledger would, and records
// which owners and holds it was asked about.
type fakeBooks struct {
	gone   map[string]bool
	ends   map[string]store.HoldEnd
	owners []string
	holds  []string
}

func (f *fakeBooks) Abandoned(_ context.Context, owner string) (bool, error) {
	f.owners = append(f.owners, owner)
	return f.gone[owner], nil
}

func (f *fakeBooks) HoldEnds(_ context.Context, holds []string) (map[string]store.HoldEnd, error) {
	f.holds = append(f.holds, holds...)
	return f.ends, nil
}

// twoRedisNodes are two services counting in one Redis under a prefix of
// their own (so that no other test's owners are swept), journaling as
// owners "dead-<id>" and "live-<id>", with the same budget on key id.
func twoRedisNodes(t *testing.T, limit int64) (dead, live *Service, id int64) {
	now := time.Now()
	dead, id = redisService(t, &now)
	live = New(&fakeRepo{spent: map[string]int64{}}, dead.be.(*redisBackend).rdb, nil)
	sid := strconv.FormatInt(id, 10)
	prefix := "turnpike:rl-test:" + sid + ":"
	dead.be.(*redisBackend).prefix, live.be.(*redisBackend).prefix = prefix, prefix
	dead.JournalAs("dead-" + sid)
	live.JournalAs("live-" + sid)
	for _, s := range []*Service{dead, live} {
		set(t, s, store.SubjectToken, sid, Limits{PeriodQuota: limit, Period: Month})
	}
	return dead, live, id
}

func periodUsed(t *testing.T, s *Service, id int64) int64 {
	t.Helper()
	st, err := s.Period(context.Background(), store.SubjectToken, id)
	if err != nil {
		t.Fatal(err)
	}
	return st.Used
}

// A node that dies mid-call leaves its calls' estimates in the shared
// counter. The sweep ends each exactly as the ledger says the call ended:
// a settled call counts its charge, a released or never-stored one
// nothing, a share a durable record kept stays for that record to end
// (however it ended it, unless the sweep released the hold before the
// hand-over was stored); a second sweep, and the dead owner's late end,
// move nothing more.
func TestBudgetSweepEndsADeadNodesSharesAsTheLedgerSaysTheirCallsEnded(t *testing.T) {
	dead, live, id := twoRedisNodes(t, 1000)
	ctx := context.Background()
	sub := Subject{TokenID: id}
	var late *BudgetHold
	for _, hold := range []string{"settled", "released", "kept", "kept-settled", "never-stored", "kept-released", "kept-refunded"} {
		h, err := dead.For(sub).Hold(ctx, 100, hold)
		if err != nil {
			t.Fatal(err)
		}
		switch hold {
		case "kept", "kept-settled", "kept-released", "kept-refunded":
			h.Keep(ctx)
		case "released":
			late = h
		}
	}
	if got := periodUsed(t, live, id); got != 700 {
		t.Fatalf("after seven holds of 100 the counter is %d, want 700", got)
	}
	deadOwner := "dead-" + strconv.FormatInt(id, 10)
	books := &fakeBooks{gone: map[string]bool{deadOwner: true}, ends: map[string]store.HoldEnd{
		"settled":       {Settled: true, Charge: 30},
		"kept":          {Kept: true},
		"kept-settled":  {Settled: true, Charge: 70},
		"released":      {Released: true},
		"kept-released": {Released: true},
	}}
	n, err := live.SweepBudgets(ctx, books)
	if err != nil || n != 4 {
		t.Fatalf("sweep ended %d shares (%v), want 4: settled, released, never-stored, kept-released", n, err)
	}
	// 30 charged + the three kept shares left (100 each), which their records end.
	if got := periodUsed(t, live, id); got != 330 {
		t.Fatalf("after the sweep the counter is %d, want 330", got)
	}
	slices.Sort(books.holds)
	if want := []string{"kept", "kept-refunded", "kept-released", "kept-settled", "never-stored", "released", "settled"}; !slices.Equal(books.holds, want) {
		t.Fatalf("the books were asked about %v, want %v", books.holds, want)
	}
	if !slices.Contains(books.owners, deadOwner) || slices.Contains(books.owners, "live-"+strconv.FormatInt(id, 10)) {
		t.Fatalf("the books were asked about owners %v: want the dead node, never the sweeper itself", books.owners)
	}
	if n, err := live.SweepBudgets(ctx, books); err != nil || n != 0 {
		t.Fatalf("a second sweep ended %d (%v), want 0", n, err)
	}
	late.Refund(ctx) // the owner was alive after all: its end finds the record gone
	if got := periodUsed(t, live, id); got != 330 {
		t.Fatalf("a late end after the sweep moved the counter to %d, want 330", got)
	}
	// The durable record ends a kept share in any process, once.
	r := live.For(sub).Restore(time.Now(), 100, "kept-settled", deadOwner)
	r.Settle(ctx, 70)
	if got := periodUsed(t, live, id); got != 300 {
		t.Fatalf("after the kept share settled at 70 the counter is %d, want 300", got)
	}
	if left, _ := live.be.(*redisBackend).budgetRecords(ctx, deadOwner); len(left) != 2 || left["kept"] == "" || left["kept-refunded"] == "" {
		t.Fatalf("the dead owner's journal holds %v, want only the kept shares no record has ended", left)
	}
}

// A node whose lease still runs is not swept: its calls are in flight;
// only its settled shares' records go once their settles are stored.
func TestBudgetSweepLeavesTheSharesOfALiveNode(t *testing.T) {
	dead, live, id := twoRedisNodes(t, 1000)
	ctx := context.Background()
	h, err := dead.For(Subject{TokenID: id}).Hold(ctx, 100, "in-flight")
	if err != nil {
		t.Fatal(err)
	}
	books := &fakeBooks{gone: map[string]bool{}}
	if n, err := live.SweepBudgets(ctx, books); err != nil || n != 0 || len(books.holds) != 0 {
		t.Fatalf("sweep of a live node ended %d (%v) and asked about %v", n, err, books.holds)
	}
	h.Settle(ctx, 40)
	if got := periodUsed(t, live, id); got != 40 {
		t.Fatalf("the live node's settle left the counter at %d, want 40", got)
	}
	// Its record stays, settled at the charge, until a sweep finds the
	// settle stored; then only the record goes.
	owner := "dead-" + strconv.FormatInt(id, 10)
	if left, _ := live.be.(*redisBackend).budgetRecords(ctx, owner); len(left) != 1 || !strings.HasPrefix(left["in-flight"], settledMark+"40 ") {
		t.Fatalf("the settled share's record is %v, want it settled at 40", left)
	}
	books.ends = map[string]store.HoldEnd{"in-flight": {Settled: true, Charge: 40}}
	if n, err := live.SweepBudgets(ctx, books); err != nil || n != 0 {
		t.Fatalf("the sweep of a stored settle ended %d shares (%v), want 0: it only drops the record", n, err)
	}
	if left, _ := live.be.(*redisBackend).budgetRecords(ctx, owner); len(left) != 0 || periodUsed(t, live, id) != 40 {
		t.Fatalf("after the sweep saw the settle stored, records %v and the counter %d, want none and 40", left, periodUsed(t, live, id))
	}
}
