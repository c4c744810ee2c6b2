package admin

import (
	"context"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A model entry and a key take the same response_cache object (CONTRACT
// §22), with the contract's defaults for members left out.
func TestResponseCacheAndStreamFailoverScenarios(t *testing.T) {
	e := newEnv(t)
	_, _ = e.createKey("alice", "alicekey", `{"name":"alice-1","response_cache":{"ttl_seconds":60}}`)
	e.run([]scenario{
		{name: "a model's cache and failover are stored with their defaults", who: "admin", method: "PUT", path: "/api/models/m1",
			body: `{"input_per_mtok":1,"response_cache":{"ttl_seconds":600},"stream_failover":true}`, status: 200,
			want: map[string]any{"response_cache.ttl_seconds": 600, "response_cache.hit_ratio": 0.1, "response_cache.max_entry_kb": 256,
				"stream_failover": true}},
		{name: "and read back", who: "admin", method: "GET", path: "/api/models/m1", status: 200,
			want: map[string]any{"response_cache.ttl_seconds": 600, "stream_failover": true}},
		{name: "every member as sent", who: "admin", method: "PUT", path: "/api/models/m2",
			body: `{"input_per_mtok":1,"response_cache":{"ttl_seconds":5,"hit_ratio":0.5,"max_entry_kb":8}}`, status: 200,
			want: map[string]any{"response_cache.hit_ratio": 0.5, "response_cache.max_entry_kb": 8}},
		{name: "a key shows its cache", who: "alice", method: "GET", path: "/api/tokens/{alicekey}", status: 200,
			want: map[string]any{"response_cache.ttl_seconds": 60, "response_cache.hit_ratio": 0.1}},
		{name: "a key's cache is changed", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"response_cache":{"ttl_seconds":30,"hit_ratio":0}}`, status: 200,
			want: map[string]any{"response_cache.ttl_seconds": 30, "response_cache.hit_ratio": 0}},
		{name: "null turns a key's cache off", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"response_cache":null}`, status: 200, want: map[string]any{"response_cache": nil}},
		{name: "ttl_seconds is required", who: "admin", method: "PUT", path: "/api/models/x", body: `{"response_cache":{"hit_ratio":0.2}}`, status: 400,
			want: map[string]any{"error.message": "response_cache.ttl_seconds is required"}},
		{name: "a hit ratio above 1 is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"response_cache":{"ttl_seconds":5,"hit_ratio":1.5}}`, status: 400},
		{name: "an entry bound of 0 is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"response_cache":{"ttl_seconds":5,"max_entry_kb":0}}`, status: 400},
		{name: "an unknown member is 400", who: "admin", method: "PUT", path: "/api/models/x", body: `{"response_cache":{"ttl_seconds":5,"shared":true}}`, status: 400},
		{name: "stream_failover must be a boolean", who: "admin", method: "PUT", path: "/api/models/x", body: `{"stream_failover":"yes"}`, status: 400},
		{name: "a key's cache is checked the same way", who: "alice", method: "PATCH", path: "/api/tokens/{alicekey}",
			body: `{"response_cache":{"ttl_seconds":-1}}`, status: 400},
	})
}

// The seed file takes the same objects on models and keys (tokens[]).
func TestSeedSetsResponseCacheOnModelsAndKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seed := loadSeed(t)
	seed.Models["gpt-4o-mini"] = config.SeedPrice{InputPerMTok: 1, StreamFailover: true,
		ResponseCache: map[string]any{"ttl_seconds": 120, "hit_ratio": 0.25}}
	seed.Tokens[0].ResponseCache = map[string]any{"ttl_seconds": 30}
	if err := Seed(ctx, e.d, seed); err != nil {
		t.Fatal(err)
	}
	price, _ := e.d.Store.Prices().Get(ctx, "gpt-4o-mini")
	want := store.ResponseCache{TTLSeconds: 120, HitRatio: 0.25, MaxEntryKB: 256}
	if price.ResponseCache == nil || *price.ResponseCache != want || !price.StreamFailover {
		t.Fatalf("model: %+v failover %v", price.ResponseCache, price.StreamFailover)
	}
	u, _ := e.d.Store.Users().GetByUsername(ctx, seed.Tokens[0].User)
	tok, _ := e.d.Store.Tokens().GetByName(ctx, u.ID, seed.Tokens[0].Name)
	if tok.ResponseCache == nil || *tok.ResponseCache != (store.ResponseCache{TTLSeconds: 30, HitRatio: 0.1, MaxEntryKB: 256}) {
		t.Fatalf("key: %+v", tok.ResponseCache)
	}
	seed.Tokens[0].ResponseCache = map[string]any{"ttl_seconds": 0}
	if err := Seed(ctx, e.d, seed); err == nil {
		t.Fatal("a key's ttl of 0 was seeded")
	}
}
