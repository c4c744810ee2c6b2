package respcache

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Store keeps entries for a while. Get reports a miss for an entry that
// expired; Put drops an entry larger than the store's bound.
type Store interface {
	Get(ctx context.Context, k Key) ([]byte, bool, error)
	Put(ctx context.Context, k Key, v []byte, ttl time.Duration) error
}

// shards spread the memory store's locks: a lookup takes one shard's lock,
// never a lock every call shares.
const shards = 16

// Memory is the one-node store: a least-recently-used list per shard,
// bounded by the total bytes of its entries.
type Memory struct {
	shard [shards]memShard
	now   func() time.Time
}

type memShard struct {
	mu    sync.Mutex
	ll    *list.List
	byKey map[Key]*list.Element
	bytes int64
	limit int64
}

type memEntry struct {
	key     Key
	val     []byte
	expires time.Time
}

// NewMemory keeps at most maxBytes of answers in all (split evenly across
// its shards); the least recently used go first.
func NewMemory(maxBytes int64) *Memory {
	m := &Memory{now: time.Now}
	for i := range m.shard {
		m.shard[i] = memShard{ll: list.New(), byKey: map[Key]*list.Element{}, limit: maxBytes / shards}
	}
	return m
}

func (m *Memory) shardOf(k Key) *memShard {
	if len(k) == 0 {
		return &m.shard[0]
	}
	return &m.shard[k[0]%shards]
}

// Get returns the entry's bytes (shared: callers must not change them).
func (m *Memory) Get(_ context.Context, k Key) ([]byte, bool, error) {
	s := m.shardOf(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byKey[k]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*memEntry)
	if !m.now().Before(e.expires) {
		s.remove(el)
		return nil, false, nil
	}
	s.ll.MoveToFront(el)
	return e.val, true, nil
}

// Put stores v for ttl, evicting the least recently used entries until the
// shard fits; an entry bigger than a whole shard is not kept.
func (m *Memory) Put(_ context.Context, k Key, v []byte, ttl time.Duration) error {
	s := m.shardOf(k)
	size := int64(len(v) + len(k))
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[k]; ok {
		s.remove(el)
	}
	if size > s.limit {
		return nil
	}
	for s.bytes+size > s.limit {
		s.remove(s.ll.Back())
	}
	s.byKey[k] = s.ll.PushFront(&memEntry{key: k, val: v, expires: m.now().Add(ttl)})
	s.bytes += size
	return nil
}

func (s *memShard) remove(el *list.Element) {
	e := el.Value.(*memEntry)
	s.ll.Remove(el)
	delete(s.byKey, e.key)
	s.bytes -= int64(len(e.val) + len(e.key))
}
