package billing

import (
	"context"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
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
