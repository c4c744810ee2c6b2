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
	order := ord[:len(checks)]
	copy(order, ids)
	slices.Sort(order)
	order = slices.Compact(order)
	for _, i := range order {
		b.shards[i].mu.Lock()
	}
	defer func() {
		for _, i := range order {
			b.shards[i].mu.Unlock()
		}
	}()
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

func (b *memBackend) budgetTake(ctx context.Context, key string, limit, amount int64, expire time.Time, load func(context.Context) (int64, error)) (int64, bool, error) {
	s := &b.shards[b.budgetShard(key)]
	for {
		s.mu.Lock()
		if bu := s.budgets[key]; bu != nil {
			defer s.mu.Unlock()
			if amount > 0 && bu.used+amount > limit {
				return bu.used, false, nil
			}
			bu.used += amount
			return bu.used, true, nil
		}
		s.mu.Unlock()
		// Loaded outside the lock: a database round trip must not stall
		// the other subjects of the shard.
		used, err := load(ctx)
		if err != nil {
			return 0, false, &storeErr{err}
		}
		s.mu.Lock()
		if s.budgets[key] == nil {
			s.budgets[key] = &memBudget{used: used, expire: expire}
		}
		s.mu.Unlock()
	}
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
