package ratelimit

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// memBackend keeps counts in this process: a fixed set of shards, each a
// map under its own mutex, so requests of different subjects rarely meet
// on one lock and no lock is global.
type memBackend struct {
	seed   maphash.Seed
	shards [64]memShard
}

type memShard struct {
	mu      sync.Mutex
	windows map[ckey]*memWindow
	budgets map[string]*memBudget
	swept   int64 // minute of the last sweep
}

type memWindow struct {
	minute     int64
	curr, prev int64
}

type memBudget struct {
	used   int64
	expire time.Time
}

func newMemBackend() *memBackend {
	b := &memBackend{seed: maphash.MakeSeed()}
	for i := range b.shards {
		b.shards[i].windows = map[ckey]*memWindow{}
		b.shards[i].budgets = map[string]*memBudget{}
	}
	return b
}

func (b *memBackend) shard(key ckey) int {
	return int(maphash.Comparable(b.seed, key) % uint64(len(b.shards)))
}

func (b *memBackend) budgetShard(key string) int {
	return int(maphash.String(b.seed, key) % uint64(len(b.shards)))
}

// roll brings w to minute m.
func (w *memWindow) roll(m int64) {
	switch {
	case w.minute == m:
	case w.minute == m-1:
		w.prev, w.curr, w.minute = w.curr, 0, m
	default:
		w.prev, w.curr, w.minute = 0, 0, m
	}
}

func (s *memShard) window(key ckey, m int64) *memWindow {
	w := s.windows[key]
	if w == nil {
		w = &memWindow{minute: m}
		s.windows[key] = w
	}
	return w
}

// sweep drops idle windows once a minute per shard, so keys of past
// requests do not pile up.
func (s *memShard) sweep(m int64, now time.Time) {
	if s.swept == m {
		return
	}
	s.swept = m
	for k, w := range s.windows {
		if w.minute < m-1 && w.curr <= 0 {
			delete(s.windows, k)
		}
	}
	for k, bu := range s.budgets {
		if now.After(bu.expire) {
			delete(s.budgets, k)
		}
	}
}

func (b *memBackend) acquire(_ context.Context, now time.Time, checks []check, out []reading, _ string) (int, error) {
	m, frac := minuteOf(now)
	var idx, ord [maxChecks]int
	ids := idx[:len(checks)]
	for i := range checks {
		ids[i] = b.shard(checks[i].key)
	}
	order := b.lockShards(ord[:len(checks)], ids)
	defer b.unlockShards(order)
	for i := range checks {
		s := &b.shards[ids[i]]
		s.sweep(m, now)
		w := s.window(checks[i].key, m)
		if !checks[i].gauge {
			w.roll(m)
		}
		out[i] = reading{curr: w.curr, prev: w.prev}
		if !fits(&checks[i], out[i], frac) {
			return i, nil
		}
	}
	for i := range checks {
		b.shards[ids[i]].windows[checks[i].key].curr += checks[i].cost
	}
	return -1, nil
}

func (b *memBackend) adjust(_ context.Context, key ckey, minute, delta int64) error {
	s := &b.shards[b.shard(key)]
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windows[key]
	if w == nil {
		return nil
	}
	switch w.minute {
	case minute:
		w.curr = max(w.curr+delta, 0)
	case minute + 1:
		w.prev = max(w.prev+delta, 0)
	}
	return nil
}

func (b *memBackend) release(_ context.Context, key ckey, _ string) error {
	s := &b.shards[b.shard(key)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.windows[key]; w != nil && w.curr > 0 {
		w.curr--
	}
	return nil
}

// The memory backend journals nothing: its counters die with the process
// whose calls they hold, and a new process loads them from the usage log.
func (b *memBackend) budgetTake(ctx context.Context, takes []budgetTake, amount int64, load func(context.Context, *budgetTake) (int64, error), _ *journalTag) (int, int64, error) {
	for {
		failed, used, missing := b.tryBudgets(takes, amount)
		if missing < 0 {
			return failed, used, nil
		}
		// Loaded outside the locks: a database round trip must not stall
		// the other subjects of the shards.
		t := &takes[missing]
		used, err := load(ctx, t)
		if err != nil {
			return 0, 0, &storeErr{err}
		}
		s := &b.shards[b.budgetShard(t.key)]
		s.mu.Lock()
		if s.budgets[t.key] == nil {
			s.budgets[t.key] = &memBudget{used: used, expire: t.expire}
		}
		s.mu.Unlock()
	}
}

// tryBudgets takes amount from every counter of takes or from none, under
// the locks of all their shards (taken in order, so two calls cannot wait
// on each other). It returns the index of a counter not loaded yet, or -1
// and budgetTake's answer.
func (b *memBackend) tryBudgets(takes []budgetTake, amount int64) (failed int, used int64, missing int) {
	var idx, ord [maxBudgets]int
	ids := idx[:len(takes)]
	for i := range takes {
		ids[i] = b.budgetShard(takes[i].key)
	}
	order := b.lockShards(ord[:len(takes)], ids)
	defer b.unlockShards(order)
	var bb [maxBudgets]*memBudget
	bus := bb[:len(takes)]
	for i := range takes {
		if bus[i] = b.shards[ids[i]].budgets[takes[i].key]; bus[i] == nil {
			return 0, 0, i
		}
	}
	if amount > 0 {
		for i, bu := range bus {
			if bu.used+amount > takes[i].limit {
				return i, bu.used, -1
			}
		}
		for _, bu := range bus {
			bu.used += amount
		}
	}
	return -1, bus[0].used, -1
}

func (b *memBackend) budgetAdd(_ context.Context, key string, delta int64) (int64, error) {
	s := &b.shards[b.budgetShard(key)]
	s.mu.Lock()
	defer s.mu.Unlock()
	bu := s.budgets[key]
	if bu == nil {
		return 0, nil
	}
	bu.used += delta
	return bu.used, nil
}

// lockShards locks the distinct shards of ids in ascending order, so two
// callers holding several shards can never wait on each other, and returns
// them for unlockShards; order is the caller's buffer of len(ids), kept on
// its stack.
func (b *memBackend) lockShards(order, ids []int) []int {
	copy(order, ids)
	slices.Sort(order)
	order = slices.Compact(order)
	for _, i := range order {
		b.shards[i].mu.Lock()
	}
	return order
}

func (b *memBackend) unlockShards(order []int) {
	for _, i := range order {
		b.shards[i].mu.Unlock()
	}
}
