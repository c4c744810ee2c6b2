package routing

import (
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// firstShares plans n times and counts which channel comes first.
func firstShares(r *Router, o PlanOptions, n int) map[int64]int {
	got := map[int64]int{}
	for range n {
		got[r.Table().PlanWith(r.Health, o)[0].ID]++
	}
	return got
}

func TestStrategiesPreferTheirBestChannel(t *testing.T) {
	cases := []struct {
		name     string
		strategy string
		// skew makes channel 2 the best one for the strategy.
		skew func(r *Router)
		cost func(*Channel) float64
		// want is the least share of first places channel 2 must get.
		want, most float64
	}{
		{"least_busy picks the fewest in flight", StrategyLeastBusy, func(r *Router) {
			for range 5 {
				r.Table().Channel(1).Begin()
				r.Table().Channel(3).Begin()
			}
			r.Table().Channel(2).Begin()
		}, nil, 1, 1},
		{"latency picks the fastest first byte and explores about 5%", StrategyLatency, func(r *Router) {
			r.Table().Channel(1).ObserveFirstByte(800 * time.Millisecond)
			r.Table().Channel(2).ObserveFirstByte(100 * time.Millisecond)
			r.Table().Channel(3).ObserveFirstByte(400 * time.Millisecond)
		}, nil, 0.92, 0.98},
		{"cost picks the cheapest channel", StrategyCost, func(*Router) {}, func(c *Channel) float64 {
			return map[int64]float64{1: 10, 2: 4, 3: 8}[c.ID]
		}, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRouter(NewHealth(nil, nil))
			r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "enabled"), ch(2, 0, 1, "enabled"), ch(3, 0, 1, "enabled")}))
			tc.skew(r)
			const n = 4000
			got := firstShares(r, PlanOptions{Group: "default", Model: "m", Max: 3, Strategy: tc.strategy, Cost: tc.cost}, n)
			share := float64(got[2]) / n
			if share < tc.want || share > tc.most {
				t.Fatalf("channel 2 first in %.3f of plans (%v), want %.2f–%.2f", share, got, tc.want, tc.most)
			}
			if tc.strategy == StrategyLatency && (got[1] == 0 || got[3] == 0) {
				t.Fatalf("exploration never tried the slower channels: %v", got)
			}
		})
	}
}

func TestStrategiesOrderTheRestOfTheTier(t *testing.T) {
	r := NewRouter(NewHealth(nil, nil))
	r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "enabled"), ch(2, 0, 1, "enabled"), ch(3, 0, 1, "enabled")}))
	cost := func(c *Channel) float64 { return map[int64]float64{1: 3, 2: 1, 3: 2}[c.ID] }
	plan := r.Table().PlanWith(r.Health, PlanOptions{Group: "default", Model: "m", Max: 3, Strategy: StrategyCost, Cost: cost})
	if got := ids(plan); got[0] != 2 || got[1] != 3 || got[2] != 1 {
		t.Fatalf("cost plan %v, want [2 3 1]", got)
	}
}

func TestStrategiesRespectHealthAndPriority(t *testing.T) {
	for _, strategy := range Strategies {
		t.Run(strategy, func(t *testing.T) {
			h := NewHealth(nil, nil)
			r := NewRouter(h)
			// Channel 2 is best by every measure but cooling; channel 4 is
			// better still but of a lower priority.
			r.Swap(NewTable([]store.Channel{ch(1, 5, 1, "enabled"), ch(2, 5, 1, "enabled"), ch(3, 5, 1, "enabled"), ch(4, 0, 1, "enabled")}))
			for id, ttfb := range map[int64]time.Duration{1: time.Second, 2: time.Millisecond, 3: time.Second, 4: time.Microsecond} {
				r.Table().Channel(id).ObserveFirstByte(ttfb)
			}
			r.Table().Channel(1).Begin()
			r.Table().Channel(3).Begin()
			h.CoolDown(2, "503")
			cost := func(c *Channel) float64 { return map[int64]float64{1: 5, 2: 1, 3: 5, 4: 0.1}[c.ID] }
			for range 200 {
				plan := r.Table().PlanWith(h, PlanOptions{Group: "default", Model: "m", Max: 4, Strategy: strategy, Cost: cost})
				got := ids(plan)
				if len(got) != 3 || got[2] != 4 || (got[0] != 1 && got[0] != 3) {
					t.Fatalf("plan %v: want channels 1 and 3 (any order), then 4, never the cooling 2", got)
				}
			}
		})
	}
}

func TestLatencyAverageMovesTowardsNewAnswers(t *testing.T) {
	r := NewRouter(NewHealth(nil, nil))
	r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "enabled")}))
	c := r.Table().Channel(1)
	c.ObserveFirstByte(time.Second)
	for range 30 {
		c.ObserveFirstByte(100 * time.Millisecond)
	}
	if got := c.FirstByte(); got > 110*time.Millisecond {
		t.Fatalf("average %v after 30 fast answers; a recovered channel must come back", got)
	}
}

func TestCountersOutliveASnapshotSwap(t *testing.T) {
	r := NewRouter(NewHealth(nil, nil))
	r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "enabled")}))
	r.Table().Channel(1).Begin()
	r.Table().Channel(1).WithKey(0).ObserveFirstByte(time.Second)
	r.Swap(NewTable([]store.Channel{ch(1, 0, 1, "enabled")}))
	if c := r.Table().Channel(1); c.InFlight() != 1 || c.FirstByte() != time.Second {
		t.Fatalf("after swap: in flight %d, first byte %v", c.InFlight(), c.FirstByte())
	}
}
