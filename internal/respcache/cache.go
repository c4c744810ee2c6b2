package respcache

import (
	"context"
	"encoding/binary"
	"time"
)

// Policy is one model entry's or key's response_cache object.
type Policy struct {
	TTL time.Duration
	// HitRatio is the share of the original charge a hit is billed.
	HitRatio float64
	// MaxEntryBytes bounds one stored answer.
	MaxEntryBytes int
}

// Defaults of a response_cache object that leaves a member out.
const (
	DefaultHitRatio   = 0.1
	DefaultMaxEntryKB = 256
)

// NewPolicy reads a response_cache object's members, with the defaults for
// those left at zero (hitRatio < 0 means unset as well).
func NewPolicy(ttlSeconds int, hitRatio float64, maxEntryKB int) Policy {
	if hitRatio <= 0 {
		hitRatio = DefaultHitRatio
	}
	if maxEntryKB <= 0 {
		maxEntryKB = DefaultMaxEntryKB
	}
	return Policy{TTL: time.Duration(ttlSeconds) * time.Second, HitRatio: hitRatio, MaxEntryBytes: maxEntryKB << 10}
}

// Entry is one complete, successful answer: what the relay replays (in
// whatever form it chose, e.g. its internal response as JSON) and what the
// original call was charged, in quota units, so a hit bills its share.
type Entry struct {
	Charge int64
	Answer []byte
}

// An entry is stored as its charge (8 bytes, big-endian) then the answer:
// a hit reads it without parsing, and the answer bytes are not copied.
const chargeBytes = 8

func (e Entry) encode() []byte {
	v := make([]byte, chargeBytes, chargeBytes+len(e.Answer))
	binary.BigEndian.PutUint64(v, uint64(e.Charge))
	return append(v, e.Answer...)
}

// HitCharge is what a hit costs at p: the original charge times the hit
// ratio, rounded half up, never below zero.
func (p Policy) HitCharge(e Entry) int64 {
	if e.Charge <= 0 {
		return 0
	}
	return int64(float64(e.Charge)*p.HitRatio + 0.5)
}

// Cache is a Store read and written in entries under a policy.
type Cache struct{ store Store }

// New is a cache over store.
func New(store Store) *Cache { return &Cache{store: store} }

// Lookup returns the entry under k (its answer shares the store's bytes:
// callers must not change it); a store error is a miss (the upstream
// answers instead) and is returned for logging.
func (c *Cache) Lookup(ctx context.Context, k Key) (Entry, bool, error) {
	v, ok, err := c.store.Get(ctx, k)
	if err != nil || !ok {
		return Entry{}, false, err
	}
	if len(v) <= chargeBytes {
		return Entry{}, false, nil
	}
	return Entry{Charge: int64(binary.BigEndian.Uint64(v)), Answer: v[chargeBytes:]}, true, nil
}

// Keep stores e under k for the policy's ttl unless it is larger than the
// policy allows; it reports whether it was stored.
func (c *Cache) Keep(ctx context.Context, k Key, e Entry, p Policy) (bool, error) {
	if p.TTL <= 0 {
		return false, nil
	}
	v := e.encode()
	if len(v) > p.MaxEntryBytes {
		return false, nil
	}
	if err := c.store.Put(ctx, k, v, p.TTL); err != nil {
		return false, err
	}
	return true, nil
}
