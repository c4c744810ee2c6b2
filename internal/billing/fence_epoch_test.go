package billing

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
)

// The causes of the residue TestALiveNodeTakenForDeadWhileOthersServe-
// LeavesNoResidue finds, one by one.

// A node that adopts an epoch another node set acknowledges it too late
// to be counted; its acknowledgement must not stay behind and count for
// the next rebuild, which would then be set before that node wrote its
// queue: a balance loaded meanwhile would miss the queued entries.
func TestANodeThatJoinedAnEpochIsWaitedForAtTheNextRebuild(t *testing.T) {
	c := newCluster(t, sqlitetest.DSN(t), 1)
	b := c.node(time.Hour)
	c.adopt(b)
	late := c.node(time.Hour)
	c.adopt(late)
	c.reserve(late, 0, "queued", 100) // its entry waits in late's queue
	b.bal.dirty.Store(true)           // b's watcher rebuilds; late's does not run
	late.svc.rbMu.Lock()              // (it is busy: nothing of it answers)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	if err := b.svc.resync(ctx); err == nil {
		v, _ := b.bal.User(ctx, c.accts[0].user)
		t.Logf("a new epoch was set, and a balance loaded (%d), before the late node wrote its queue", v)
	}
	cancel()
	late.svc.rbMu.Unlock()
	c.adopt(late)
	c.checkCluster(b, late)
}

// A node whose lease lapsed while it ran is not waited for: the others set
// the new epoch without it and load balances that miss the entries still
// in its queue. When it then finds it was not counted, the epoch is
// rebuilt once more, after its queue reached the database.
func TestANodeLeftOutOfARebuildWhileItsLeaseLapsedHasItRebuiltAgain(t *testing.T) {
	c := newCluster(t, sqlitetest.DSN(t), 1)
	b := c.node(time.Hour)
	lapsed := c.node(time.Hour)
	c.adopt(b)
	c.adopt(lapsed)
	c.reserve(lapsed, 0, "queued", 100)
	c.lapse(lapsed)
	lapsed.svc.rbMu.Lock() // its watcher must not rebuild before b has
	b.bal.dirty.Store(true)
	if err := b.svc.resync(context.Background()); err != nil {
		t.Fatal(err) // set without the lapsed node
	}
	if _, err := b.bal.User(context.Background(), c.accts[0].user); err != nil {
		t.Fatal(err)
	}
	lapsed.svc.rbMu.Unlock()
	c.adopt(lapsed)
	c.checkCluster(b, lapsed)
}

// hookedStore runs afterWrite once after the next batch it stores, and
// beforeKinds once before it next says which entries are stored.
type hookedStore struct {
	*sqlstore.Store
	afterWrite  atomic.Pointer[func()]
	beforeKinds atomic.Pointer[func()]
}

func (h *hookedStore) EntryKinds(ctx context.Context, keys []string) (map[string]string, error) {
	if f := h.beforeKinds.Swap(nil); f != nil {
		(*f)()
	}
	return h.Store.EntryKinds(ctx, keys)
}

func (h *hookedStore) WriteItems(ctx context.Context, items []store.BillingItem) ([]bool, error) {
	written, err := h.Store.WriteItems(ctx, items)
	if f := h.afterWrite.Swap(nil); f != nil && err == nil {
		(*f)()
	}
	return written, err
}

// A move committed to the database first (a sweep's release) and to the
// live balance after is counted once also when another node loads that
// balance in between, as every balance is loaded right after a rebuild.
func TestACommittedMoveIsCountedOnceWhenItsBalanceLoadsInBetween(t *testing.T) {
	c := newCluster(t, sqlitetest.DSN(t), 1)
	hooked := &hookedStore{Store: c.st}
	sweeper := c.nodeOn(hooked, time.Hour)
	other := c.node(time.Hour)
	c.adopt(sweeper)
	c.adopt(other)
	// A hold of a process that died before the live balances were rebuilt:
	// stored, and in no balance Redis holds.
	a := c.accts[0]
	reserve := store.BillingItem{
		Entry: &store.LedgerEntry{Key: "dead-call:reserve", Kind: store.LedgerReserve, UserID: a.user, TokenID: a.token,
			Delta: -400, TokenDelta: -400, CreatedAt: time.Now().UTC()},
		Open: &store.Hold{Key: "dead-call", Owner: "node-dead", UserID: a.user, TokenID: a.token, Amount: 400, CreatedAt: time.Now().UTC()},
	}
	if _, err := c.st.WriteItems(context.Background(), []store.BillingItem{reserve}); err != nil {
		t.Fatal(err)
	}
	load := func() {
		if _, err := other.bal.User(context.Background(), a.user); err != nil {
			t.Error(err)
		}
		if _, _, err := other.bal.Token(context.Background(), a.token); err != nil {
			t.Error(err)
		}
	}
	hooked.afterWrite.Store(&load)
	if n, err := sweeper.svc.Sweep(context.Background()); err != nil || n != 1 {
		t.Fatalf("the sweep released %d holds (%v), want 1", n, err)
	}
	c.checkCluster(sweeper, other)
}

// A sweeper that stores a dead node's answered settle from the journal of
// an epoch it has left meanwhile (the live balances were rebuilt while it
// swept) moves the balances of the epoch in force with it: they were
// loaded from a database without it.
func TestAnAnsweredSettleStoredAfterARebuildCountsInTheNewBalances(t *testing.T) {
	c := newCluster(t, sqlitetest.DSN(t), 1)
	ctx := context.Background()
	hooked := &hookedStore{Store: c.st}
	sweeper, other, dead := c.nodeOn(hooked, time.Hour), c.node(time.Hour), c.node(time.Hour)
	for _, n := range []*clusterNode{sweeper, other, dead} {
		c.adopt(n)
	}
	h := c.reserve(dead, 0, "answered", 500)
	c.flush(dead)
	c.settle(h, 200) // journaled with its row, never written
	dead.stop()
	c.lapse(dead)
	rebuild := func() {
		other.bal.dirty.Store(true)
		if err := other.svc.resync(ctx); err != nil {
			t.Error(err)
		}
		deadline := time.Now().Add(3 * time.Second)
		for sweeper.bal.cur() != other.bal.cur() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := other.bal.User(ctx, c.accts[0].user); err != nil {
			t.Error(err)
		}
	}
	hooked.beforeKinds.Store(&rebuild)
	_, _ = sweeper.svc.Sweep(ctx) // it ends on the journal's stale epoch
	if u, _ := c.st.Users().Get(ctx, c.accts[0].user); u.Quota != clusterUserQuota-200 {
		t.Fatalf("database balance %d, want the answered call charged: %d", u.Quota, clusterUserQuota-200)
	}
	c.checkCluster(sweeper, other)
}
