package admin

import (
	"encoding/json"
	"math"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Bounds of a response_cache object (CONTRACT §22). A day of ttl and 8 MiB
// an entry are far past what a cache of model answers is worth, and keep a
// mistyped figure from pinning memory for weeks.
const (
	maxCacheTTL        = 24 * 3600
	maxCacheEntryKB    = 8 << 10
	defaultCacheHit    = 0.1
	defaultCacheEntry  = 256
	responseCacheField = "response_cache"
)

// readResponseCache decodes the response_cache member of a price or key
// body: nil when it is absent or null (the cache is off for it). Members
// left out take the contract's defaults (hit_ratio 0.1, max_entry_kb 256);
// ttl_seconds is required, since an entry kept for no time is no cache.
func readResponseCache(f fields) (*store.ResponseCache, error) {
	if !f.has(responseCacheField) || f.isNull(responseCacheField) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if _, err := get(f, responseCacheField, &obj); err != nil || obj == nil {
		return nil, badField(responseCacheField, "must be an object with ttl_seconds, hit_ratio and max_entry_kb")
	}
	rf := fields{}
	for k, v := range obj {
		if k != "ttl_seconds" && k != "hit_ratio" && k != "max_entry_kb" {
			return nil, badField(responseCacheField, "has unknown field %s; allowed fields are ttl_seconds, hit_ratio, max_entry_kb", k)
		}
		rf[responseCacheField+"."+k] = v
	}
	rc := store.ResponseCache{HitRatio: defaultCacheHit, MaxEntryKB: defaultCacheEntry}
	if ok, err := get(rf, "response_cache.ttl_seconds", &rc.TTLSeconds); err != nil || !ok {
		return nil, firstErr(err, badField("response_cache.ttl_seconds", "is required"))
	}
	if rc.TTLSeconds < 1 || rc.TTLSeconds > maxCacheTTL {
		return nil, badField("response_cache.ttl_seconds", "must be a whole number of seconds from 1 to %d", maxCacheTTL)
	}
	if _, err := get(rf, "response_cache.hit_ratio", &rc.HitRatio); err != nil {
		return nil, err
	}
	if rc.HitRatio < 0 || rc.HitRatio > 1 || math.IsNaN(rc.HitRatio) {
		return nil, badField("response_cache.hit_ratio", "must be a number from 0 to 1")
	}
	if _, err := get(rf, "response_cache.max_entry_kb", &rc.MaxEntryKB); err != nil {
		return nil, err
	}
	if rc.MaxEntryKB < 1 || rc.MaxEntryKB > maxCacheEntryKB {
		return nil, badField("response_cache.max_entry_kb", "must be a whole number of KiB from 1 to %d", maxCacheEntryKB)
	}
	return &rc, nil
}

// seedResponseCache checks a key's response_cache object of the seed file
// with the API's rules; nil when the entry states none.
func seedResponseCache(m map[string]any) (*store.ResponseCache, error) {
	if m == nil {
		return nil, nil
	}
	raw, err := json.Marshal(map[string]any{responseCacheField: m})
	if err != nil {
		return nil, err
	}
	f, err := parseFields(raw, []string{responseCacheField})
	if err != nil {
		return nil, err
	}
	return readResponseCache(f)
}
