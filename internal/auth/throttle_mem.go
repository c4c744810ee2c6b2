package auth

import (
	"context"
	"sync"
	"time"
)

// maxMemoryCounters bounds the memory counter: past it, ended windows are
// swept, so a flood of made-up usernames cannot grow the map forever.
const maxMemoryCounters = 100_000

// MemoryCounter is a Counter for a single node.
type MemoryCounter struct {
	mu  sync.Mutex
	m   map[string]*window
	now func() time.Time
}

type window struct {
	n    int64
	ends time.Time
}

// NewMemoryCounter returns an empty counter.
func NewMemoryCounter() *MemoryCounter {
	return &MemoryCounter{m: map[string]*window{}, now: time.Now}
}

var _ Counter = (*MemoryCounter)(nil)

// Incr implements Counter.
func (c *MemoryCounter) Incr(_ context.Context, key string, d time.Duration) (int64, time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	w, ok := c.m[key]
	if !ok || !now.Before(w.ends) {
		if len(c.m) >= maxMemoryCounters {
			c.sweep(now)
		}
		w = &window{ends: now.Add(d)}
		c.m[key] = w
	}
	w.n++
	return w.n, w.ends.Sub(now), nil
}

// Decr implements Counter.
func (c *MemoryCounter) Decr(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.m[key]; ok && w.n > 0 && c.now().Before(w.ends) {
		w.n--
	}
	return nil
}

// Reset implements Counter.
func (c *MemoryCounter) Reset(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
	return nil
}

// sweep drops ended windows; if every window is live it drops them all
// rather than grow without bound, which forgives some failures under a
// flood but never runs out of memory.
func (c *MemoryCounter) sweep(now time.Time) {
	for k, w := range c.m {
		if !now.Before(w.ends) {
			delete(c.m, k)
		}
	}
	if len(c.m) >= maxMemoryCounters {
		clear(c.m)
	}
}
