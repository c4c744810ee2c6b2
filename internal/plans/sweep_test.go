package plans

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// books is the billing side as the sweep sees it: the nodes that are gone
// and the holds whose settle was stored. It records what it was asked.
type books struct {
	gone     map[string]bool
	settled  map[string]bool
	released map[string]bool
	asked    []string
}

// HoldEnds answers the holds the settled map names as settled, the
// released map's as released.
func (b *books) HoldEnds(_ context.Context, holds []string) (map[string]store.HoldEnd, error) {
	b.asked = append(b.asked, holds...)
	out := map[string]store.HoldEnd{}
	for _, h := range holds {
		out[h] = store.HoldEnd{Settled: b.settled[h], Released: b.released[h]}
	}
	return out, nil
}

func (b *books) Abandoned(_ context.Context, node string) (bool, error) { return b.gone[node], nil }

// nodeNamed is e.node journaling its live draws under name; every node of
// a test shares the first one's Redis keys.
func (e *env) nodeNamed(t testing.TB, name string, peer *Service) *Service {
	t.Helper()
	o := Options{Store: e.st.Plans(), Now: func() time.Time { return e.now }, Node: name}
	if e.rdb != nil {
		o.Redis = e.rdb
	}
	s := New(o)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if peer == nil {
		e.isolate(s)
	} else if b, ok := s.be.(*redisBackend); ok {
		b.prefix = peer.be.(*redisBackend).prefix
	}
	return s
}

func hourUsed(t *testing.T, s *Service) int64 {
	t.Helper()
	held, err := s.Usage(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return held[0].Windows[0].Used
}

func TestTheSweepEndsTheDrawsOfADeadNodeExactlyOnce(t *testing.T) {
	cases := []struct {
		name string
		// dying is what the dead node did with its last call's draw of 30
		// before it stopped.
		dying     func(ctx context.Context, d *Draw)
		gone      bool
		settled   bool // the books stored the hold's settle
		wantUsed  int64
		wantAsked []string
		wantUndo  int
		wantLeft  int // records still journaled under the node
	}{
		{name: "reserved, never settled: taken back whole", dying: func(context.Context, *Draw) {}, gone: true,
			wantUsed: 15, wantAsked: []string{"h0"}, wantUndo: 1},
		{name: "settled and its settle stored: the charge stays", dying: func(ctx context.Context, d *Draw) { d.Settle(ctx, 25) },
			gone: true, settled: true, wantUsed: 40, wantAsked: []string{"h0", "h1"}},
		{name: "settled but its settle lost with the node: the charge goes, owed back should the row come", dying: func(ctx context.Context, d *Draw) { d.Settle(ctx, 25) },
			gone: true, wantUsed: 15, wantAsked: []string{"h0", "h1"}, wantUndo: 1, wantLeft: 1},
		{name: "handed to a durable ticket: the ticket's record ends it", dying: func(ctx context.Context, d *Draw) { d.Keep(ctx, "h1") },
			gone: true, wantUsed: 45, wantAsked: []string{"h0"}},
		{name: "a node still alive: its stored settle's record goes, its call in flight stays", dying: func(context.Context, *Draw) {},
			wantUsed: 45, wantAsked: []string{"h0"}, wantLeft: 1},
		{name: "a node still alive: a settle not stored yet keeps its record", dying: func(ctx context.Context, d *Draw) { d.Settle(ctx, 25) },
			wantUsed: 40, wantAsked: []string{"h0", "h1"}, wantLeft: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			backends(t, func(t *testing.T, e *env) {
				ctx := context.Background()
				dead := e.nodeNamed(t, "node-dead", nil)
				// A call that ended before the crash: 20 reserved, 15 charged.
				done, err := dead.Take(ctx, dead.Covering(user, "default", "m1"), user, 20, "h0")
				if err != nil || done == nil {
					t.Fatalf("first draw: %v %v", done, err)
				}
				done.Settle(ctx, 15)
				d, err := dead.Take(ctx, dead.Covering(user, "default", "m1"), user, 30, "h1")
				if err != nil || d == nil {
					t.Fatalf("second draw: %v %v", d, err)
				}
				c.dying(ctx, d)
				// The process stops here; another node sweeps.
				next := e.nodeNamed(t, "node-next", dead)
				b := &books{gone: map[string]bool{"node-dead": c.gone}, settled: map[string]bool{"h0": true, "h1": c.settled}}
				n, err := next.Sweep(ctx, b)
				if err != nil {
					t.Fatal(err)
				}
				if n != c.wantUndo {
					t.Errorf("the sweep took back %d draws, want %d", n, c.wantUndo)
				}
				if got := hourUsed(t, next); got != c.wantUsed {
					t.Errorf("the window counts %d after the sweep, want %d", got, c.wantUsed)
				}
				slices.Sort(b.asked)
				if !slices.Equal(b.asked, c.wantAsked) {
					t.Errorf("the books were asked about %v, want %v", b.asked, c.wantAsked)
				}
				if left, err := next.be.journal(ctx, "node-dead"); err != nil || len(left) != c.wantLeft {
					t.Errorf("%d records left under the node (err %v), want %d", len(left), err, c.wantLeft)
				}
				// A second sweep (another node, or the next tick) moves nothing.
				if n, err := e.nodeNamed(t, "node-third", dead).Sweep(ctx, b); err != nil || n != 0 {
					t.Errorf("a second sweep took back %d draws (err %v)", n, err)
				}
				if got := hourUsed(t, next); got != c.wantUsed {
					t.Errorf("the window counts %d after a second sweep, want %d", got, c.wantUsed)
				}
			})
		})
	}
}

func TestAKeptDrawIsFoundByItsTicketAndLeavesTheJournal(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.nodeNamed(t, "node-a", nil)
		d, err := s.Take(ctx, s.Covering(user, "default", "m1"), user, 30, "task:1")
		if err != nil || d == nil {
			t.Fatalf("draw: %v %v", d, err)
		}
		d.Keep(ctx, "task:1")
		if js, err := s.be.journal(ctx, "node-a"); err != nil || len(js) != 0 {
			t.Errorf("the kept draw is still journaled under its node: %v (err %v)", js, err)
		}
		r := e.nodeNamed(t, "node-b", s).Restore(ctx, "task:1")
		if r == nil || r.Amount() != 30 {
			t.Fatalf("the restored ticket found %v", r)
		}
		r.Settle(ctx, 12)
		r.Forget(ctx, "task:1")
		if got := hourUsed(t, s); got != 12 {
			t.Errorf("the window counts %d, want the ticket's charge 12", got)
		}
	})
}

// Reconcile counts a dead node's draws as open until the sweep ends them,
// and a settled draw not yet trimmed as settling; after the sweep the
// window is its rows alone.
func TestReconcileCountsOpenDrawsUntilTheSweepEndsThem(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		dead := e.nodeNamed(t, "node-dead", nil)
		stored, err := dead.Take(ctx, dead.Covering(user, "default", "m1"), user, 20, "h0")
		if err != nil || stored == nil {
			t.Fatal(stored, err)
		}
		e.settleWithRow(t, stored, 15)
		if _, err := dead.Take(ctx, dead.Covering(user, "default", "m1"), user, 30, "h1"); err != nil {
			t.Fatal(err)
		}
		next := e.nodeNamed(t, "node-next", dead)
		check := func(when string, live, rows, open, settling int64) {
			t.Helper()
			ws, err := next.Reconcile(ctx, nil)
			if err != nil || len(ws) != 2 {
				t.Fatalf("%s: %+v %v", when, ws, err)
			}
			w := ws[0]
			if !w.OK || w.Live != live || w.RowsSum != rows || w.Open != open || w.Settling != settling {
				t.Errorf("%s: %+v, want ok with live %d, rows %d, open %d, settling %d", when, w, live, rows, open, settling)
			}
		}
		check("before the sweep", 45, 15, 30, 15)
		b := &books{gone: map[string]bool{"node-dead": true}, settled: map[string]bool{"h0": true}}
		if _, err := next.Sweep(ctx, b); err != nil {
			t.Fatal(err)
		}
		check("after the sweep", 15, 15, 0, 0)
	})
}

// A ticket restored from a hold key whose draw is still journaled under a
// node (the node died before handing it over) finds no draw: the sweep
// ends it, so it is never ended twice.
func TestARestoredTicketLeavesAJournaledDrawToTheSweep(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		dead := e.nodeNamed(t, "node-dead", nil)
		if d, err := dead.Take(ctx, dead.Covering(user, "default", "m1"), user, 30, "batch:b1:m1"); err != nil || d == nil {
			t.Fatal(d, err)
		}
		next := e.nodeNamed(t, "node-next", dead)
		if r := next.Restore(ctx, "batch:b1:m1"); r != nil {
			t.Fatalf("a restored ticket took the journaled draw %+v", r)
		}
		if _, err := next.Sweep(ctx, &books{gone: map[string]bool{"node-dead": true}}); err != nil {
			t.Fatal(err)
		}
		if got := hourUsed(t, next); got != 0 {
			t.Errorf("the window counts %d, want 0", got)
		}
	})
}
