package routing

import (
	"sync"
	"sync/atomic"
	"time"
)

// chanStats is what this node knows of a channel's load and speed, for the
// least_busy and latency strategies. Counters are per node: nodes do not
// share them, so least_busy balances each node's own calls (which, behind
// a balancer that spreads calls evenly, balances the whole).
type chanStats struct {
	inflight atomic.Int64
	// ttfb is the moving average of time to first byte in nanoseconds; 0
	// until the first observation.
	ttfb atomic.Int64
}

// ttfbWeight is the weight of a new observation in the moving average:
// about the last ten answers count.
const ttfbWeight = 0.2

// Stats holds the per-channel counters by channel id. They outlive routing
// snapshots (an administrator's edit does not forget what was learnt);
// Router.Swap hands each snapshot's channels their counters, so routing
// reads them without a map lookup.
type Stats struct{ m sync.Map } // int64 → *chanStats

func (s *Stats) of(id int64) *chanStats {
	if v, ok := s.m.Load(id); ok {
		return v.(*chanStats)
	}
	v, _ := s.m.LoadOrStore(id, &chanStats{})
	return v.(*chanStats)
}

// stats is the channel's counters; a channel of a snapshot no router
// installed (tests, a plan made before Swap) shares one unused value.
func (c *Channel) stats() *chanStats {
	if st := c.ring().stats; st != nil {
		return st
	}
	return &orphanStats
}

var orphanStats chanStats

// Begin counts an attempt on the channel as in flight until End.
func (c *Channel) Begin() { c.stats().inflight.Add(1) }

// End ends what Begin counted.
func (c *Channel) End() { c.stats().inflight.Add(-1) }

// InFlight is how many attempts on the channel this node has under way.
func (c *Channel) InFlight() int64 { return c.stats().inflight.Load() }

// ObserveFirstByte feeds the channel's moving average of time to first
// byte. Concurrent observers may lose one another's update; an average
// does not need every sample.
func (c *Channel) ObserveFirstByte(d time.Duration) {
	st := c.stats()
	old := st.ttfb.Load()
	if old == 0 {
		st.ttfb.Store(max(int64(d), 1))
		return
	}
	st.ttfb.Store(max(old+int64(ttfbWeight*float64(int64(d)-old)), 1))
}

// FirstByte is the channel's moving average of time to first byte, 0
// before any answer.
func (c *Channel) FirstByte() time.Duration { return time.Duration(c.stats().ttfb.Load()) }
