package billing

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Three nodes on one database and Redis; two keep serving while the
// third's lease renewal comes late, so their sweeps take it for dead while
// it runs, with holds of it in every state: written, reserved and stored,
// reserved and queued, settled in Redis and queued. It then goes on, ends
// its calls and renews; one of the serving nodes also loses the live
// balances while the third's lease has lapsed. Once all is quiet and swept,
// every node's live balance equals the database's and the ledger's sum, to
// the unit, for every user and key.
func TestALiveNodeTakenForDeadWhileOthersServeLeavesNoResidue(t *testing.T) {
	for _, b := range clusterBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			c := newCluster(t, b.dsn(t), 3)
			// The nodes start one after another, as processes do.
			nb := c.node(5 * time.Millisecond)
			c.adopt(nb)
			nc := c.node(5 * time.Millisecond)
			c.adopt(nc)
			na := c.node(time.Hour)
			c.adopt(na)
			for _, n := range []*clusterNode{nb, nc} {
				n.w.SetPairWindow(20 * time.Millisecond)
			}
			var stop atomic.Bool
			var serving sync.WaitGroup
			for i, n := range []*clusterNode{nb, nc, nb, nc, nb, nc} {
				serving.Add(1)
				c.loop(func(ctx context.Context) { defer serving.Done(); c.serve(ctx, n, &stop, uint64(i)) })
			}
			for _, h := range c.stallAndResume(na, nb) {
				c.settle(h, 7)
			}
			// Its late renewal finds the fence mark while the others serve.
			c.renew(na)
			time.Sleep(150 * time.Millisecond)
			stop.Store(true)
			serving.Wait()
			c.quiesce(na, nb, nc)
			c.checkCluster(na, nb, nc)
		})
	}
}

// stallAndResume leaves holds of a in every state, lets a's lease lapse
// while b and the other node serve and sweep, has b lose the live balances
// meanwhile, and lets a go on (without renewing yet). It returns a's holds
// still open.
func (c *cluster) stallAndResume(a, b *clusterNode) []*Hold {
	c.t.Helper()
	written := c.reserve(a, 0, "a-written", 300)
	c.settle(written, 120)
	stored := c.reserve(a, 1, "a-stored", 400)
	c.flush(a)
	queued := c.reserve(a, 2, "a-queued", 500)
	answered := c.reserve(a, 0, "a-answered", 600)
	c.settle(answered, 250)
	c.lapse(a)
	if _, err := b.svc.Sweep(context.Background()); err != nil {
		c.t.Fatalf("the sweep of a serving node: %v", err)
	}
	c.wantReleased(stored.Key())
	// A serving node loses the live balances while a's lease has lapsed:
	// the new epoch is set without a.
	b.bal.dirty.Store(true)
	time.Sleep(50 * time.Millisecond)
	// a goes on: its stored call ends (refused: released), its queue
	// reaches the database.
	c.settle(stored, 90)
	c.flush(a)
	return []*Hold{queued}
}

// serve reserves and settles on random accounts through n until stop,
// sweeping now and then as the lease loop does, with calls that last a
// little so that some are in flight whatever happens.
func (c *cluster) serve(done context.Context, n *clusterNode, stop *atomic.Bool, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	for i := 0; !stop.Load() && done.Err() == nil; i++ {
		a := c.acct(rng.IntN(len(c.accts)))
		amount := int64(50 + rng.IntN(1000))
		h, err := n.svc.Reserve(ctx, a, n.svc.NewRequestKey("c"), amount)
		if err != nil { // a 503 while the balances are rebuilt
			time.Sleep(time.Millisecond)
			continue
		}
		time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond)
		if rng.IntN(10) == 0 {
			h.Refund(ctx, nil)
		} else {
			c.settle(h, int64(rng.IntN(int(amount)+100)))
		}
		if i%20 == 0 {
			_, _ = n.svc.Sweep(ctx)
		}
	}
}

// wantReleased wants the hold key no longer open: a sweep released it.
func (c *cluster) wantReleased(key string) {
	c.t.Helper()
	holds, err := c.st.Holds().List(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	for _, h := range holds {
		if h.Key == key {
			c.t.Fatalf("hold %s of the stalled node is still open after a sweep", key)
		}
	}
}

// quiesce writes every queue and sweeps from every node.
func (c *cluster) quiesce(nodes ...*clusterNode) {
	c.t.Helper()
	for _, n := range nodes {
		c.flush(n)
	}
	for _, n := range nodes {
		if _, err := n.svc.Sweep(context.Background()); err != nil {
			c.t.Logf("sweep after the quiet: %v", err)
		}
	}
}
