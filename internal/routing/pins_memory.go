package routing

import (
	"context"
	"sync"
	"time"
)

// DefaultPinCapacity bounds the pins one node keeps in memory: beyond it
// the least recently used session loses its pin (and is routed afresh).
const DefaultPinCapacity = 100_000

// pinShards spreads the pins over independently locked shards, so calls
// of different sessions do not wait on one lock.
const pinShards = 64

// MemoryPins is the PinStore of one node: a bounded LRU per shard, each
// entry expiring ttl after its last use.
type MemoryPins struct {
	shards [pinShards]pinShard
	now    func() time.Time
}

type pinShard struct {
	mu  sync.Mutex
	m   map[Session]*pinNode
	cap int
	// head is the most recently used; head.prev the least.
	head pinNode
}

type pinNode struct {
	key        Session
	pin        Pin
	expires    int64 // unix nanoseconds
	prev, next *pinNode
}

// NewMemoryPins returns an in-memory pin store holding at most capacity
// sessions.
func NewMemoryPins(capacity int) *MemoryPins {
	p := &MemoryPins{now: time.Now}
	per := max(capacity/pinShards, 1)
	for i := range p.shards {
		s := &p.shards[i]
		s.m = map[Session]*pinNode{}
		s.cap = per
		s.head.prev, s.head.next = &s.head, &s.head
	}
	return p
}

// SetClock replaces the clock (tests).
func (p *MemoryPins) SetClock(now func() time.Time) { p.now = now }

func (p *MemoryPins) shard(key Session) *pinShard { return &p.shards[key.Hash%pinShards] }

// Get returns the session's pin and renews it.
func (p *MemoryPins) Get(_ context.Context, session Session, ttl time.Duration) (Pin, bool, error) {
	now := p.now().UnixNano()
	s := p.shard(session)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.m[session]
	if n == nil {
		return Pin{}, false, nil
	}
	if now >= n.expires {
		s.remove(n)
		return Pin{}, false, nil
	}
	n.expires = now + int64(ttl)
	s.front(n)
	return n.pin, true, nil
}

// Set pins the session, evicting the least recently used session of its
// shard when the shard is full.
func (p *MemoryPins) Set(_ context.Context, session Session, pin Pin, ttl time.Duration) error {
	expires := p.now().UnixNano() + int64(ttl)
	s := p.shard(session)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.m[session]; n != nil {
		n.pin, n.expires = pin, expires
		s.front(n)
		return nil
	}
	if len(s.m) >= s.cap {
		s.remove(s.head.prev)
	}
	n := &pinNode{key: session, pin: pin, expires: expires}
	s.m[session] = n
	n.prev, n.next = &s.head, s.head.next
	s.head.next.prev = n
	s.head.next = n
	return nil
}

// Len is how many pins the store holds, expired ones not yet dropped
// included.
func (p *MemoryPins) Len() int {
	total := 0
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		total += len(s.m)
		s.mu.Unlock()
	}
	return total
}

func (s *pinShard) front(n *pinNode) {
	if s.head.next == n {
		return
	}
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = &s.head, s.head.next
	s.head.next.prev = n
	s.head.next = n
}

func (s *pinShard) remove(n *pinNode) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
	delete(s.m, n.key)
}
