// Package routing decides which channels a call may use and in which order:
// the highest priority tier first, weighted random inside a tier, channels in
// cooling or auto-disabled channels skipped (a channel with several keys
// while any of its keys is usable; see keys.go). It reads an immutable snapshot swapped atomically, so
// choosing a channel takes no lock.
package routing

import (
	"math/rand/v2"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Channel is a routable channel. The snapshot's own value holds the whole
// key list in Key; the value an attempt uses (PickKey, WithKey) holds one
// key of it, and KeyIndex says which.
type Channel struct {
	store.Channel
	// Policy is the channel's health settings, read once per snapshot.
	Policy Policy
	// KeyIndex is the position of Key in the channel's key list (0 on the
	// snapshot's own value).
	KeyIndex int
	// keys is the key list, parsed once per snapshot (keys.go).
	keys *keyRing
}

// MapModel applies the channel's model mapping.
func (c *Channel) MapModel(model string) string {
	if m, ok := c.ModelMapping[model]; ok && m != "" {
		return m
	}
	return model
}

type tier struct {
	priority int64
	channels []*Channel
}

// Table is one immutable routing snapshot.
type Table struct {
	// index maps group → model → tiers, highest priority first.
	index map[string]map[string][]tier
	byID  map[int64]*Channel
}

// NewTable builds a snapshot from every channel; disabled channels and
// channels with no weight are left out of routing but kept by id.
func NewTable(channels []store.Channel) *Table {
	t := &Table{index: map[string]map[string][]tier{}, byID: map[int64]*Channel{}}
	for i := range channels {
		c := newChannel(Channel{Channel: channels[i]})
		t.byID[c.ID] = c
		if c.Status != store.StatusEnabled {
			continue
		}
		for _, g := range c.Groups {
			models := t.index[g]
			if models == nil {
				models = map[string][]tier{}
				t.index[g] = models
			}
			for _, m := range c.Models {
				models[m] = addToTier(models[m], c)
			}
		}
	}
	return t
}

func addToTier(tiers []tier, c *Channel) []tier {
	for i := range tiers {
		if tiers[i].priority == c.Priority {
			tiers[i].channels = append(tiers[i].channels, c)
			return tiers
		}
	}
	tiers = append(tiers, tier{priority: c.Priority, channels: []*Channel{c}})
	sort.Slice(tiers, func(i, j int) bool { return tiers[i].priority > tiers[j].priority })
	return tiers
}

// Channel returns a channel by id.
func (t *Table) Channel(id int64) *Channel { return t.byID[id] }

// Channels returns every channel of the snapshot, enabled or not.
func (t *Table) Channels() []*Channel {
	out := make([]*Channel, 0, len(t.byID))
	for _, c := range t.byID {
		out = append(out, c)
	}
	return out
}

// Models lists the models a group can reach, sorted.
func (t *Table) Models(group string) []string {
	out := make([]string, 0, len(t.index[group]))
	for m := range t.index[group] {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Serving lists the enabled channels that serve model for group, in no
// particular order.
func (t *Table) Serving(group, model string) []*Channel {
	var out []*Channel
	for _, tr := range t.index[group][model] {
		out = append(out, tr.channels...)
	}
	return out
}

// Serves reports whether any enabled channel serves model for group.
func (t *Table) Serves(group, model string) bool { return len(t.index[group][model]) > 0 }

// Router holds the current snapshot, channel health, the channels' load
// and speed counters and the sessions' pins.
type Router struct {
	table  atomic.Pointer[Table]
	Health *Health
	stats  Stats
	// Pins keeps cache affinity (affinity.go); nil turns it off.
	Pins PinStore
}

// NewRouter returns a router with an empty table. Health finds channels
// (their names and policies) through the router's current snapshot.
func NewRouter(h *Health) *Router {
	r := &Router{Health: h, Pins: NewMemoryPins(DefaultPinCapacity)}
	r.table.Store(NewTable(nil))
	lookup := func(id int64) *Channel { return r.Table().Channel(id) }
	h.lookup.Store(&lookup)
	return r
}

// Swap installs a new snapshot, handing its channels their counters.
func (r *Router) Swap(t *Table) {
	for id, c := range t.byID {
		c.ring().stats = r.stats.of(id)
	}
	r.table.Store(t)
}

// Table returns the current snapshot.
func (r *Router) Table() *Table { return r.table.Load() }

// Plan returns up to max channels to try for model in group, in order. A
// filter, when given, drops channels that cannot serve this kind of call.
func (r *Router) Plan(group, model string, max int, filter func(*Channel) bool) []*Channel {
	return r.table.Load().Plan(r.Health, group, model, max, filter)
}

// Plan is Router.Plan on this snapshot, for a request that pinned it: the
// admission that checked the model is served and the plan then agree even
// when an administrator's change swaps the snapshot in between.
func (t *Table) Plan(h *Health, group, model string, max int, filter func(*Channel) bool) []*Channel {
	return t.PlanWith(h, PlanOptions{Group: group, Model: model, Max: max, Filter: filter})
}

// pickWeighted draws an index with probability proportional to weight;
// channels with weight 0 are drawn only when every weight is 0.
func pickWeighted(pool []*Channel) int {
	total := 0
	for _, c := range pool {
		total += max(c.Weight, 0)
	}
	if total == 0 {
		return rand.IntN(len(pool))
	}
	n := rand.IntN(total)
	for i, c := range pool {
		n -= max(c.Weight, 0)
		if n < 0 {
			return i
		}
	}
	return len(pool) - 1
}
