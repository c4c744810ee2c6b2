package respcache

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestKeyIgnoresDeliveryAndCallerButNothingElse(t *testing.T) {
	base := `{"model":"m","messages":[{"role":"user","content":"Hi"}],"temperature":0.5}`
	k0, err := KeyOf("default", "m", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, group, model, body string
		same                     bool
	}{
		{"members in another order and other spacing", "default", "m", `{ "temperature":0.5, "messages":[{"content":"Hi","role":"user"}], "model":"m" }`, true},
		{"stream, stream_options, user and metadata", "default", "m", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"user":"u1","metadata":{"a":"b"},"messages":[{"role":"user","content":"Hi"}],"temperature":0.5}`, true},
		{"another group", "vip", "m", base, false},
		{"another model", "default", "m2", base, false},
		{"another temperature", "default", "m", strings.Replace(base, "0.5", "0.50001", 1), false},
		{"a number written otherwise", "default", "m", strings.Replace(base, "0.5", "5e-1", 1), false},
		{"another message", "default", "m", strings.Replace(base, "Hi", "Hi!", 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := KeyOf(tt.group, tt.model, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if (k == k0) != tt.same {
				t.Fatalf("same key = %v, want %v", k == k0, tt.same)
			}
		})
	}
}

func TestKeyRefusesWhatIsNotAnObject(t *testing.T) {
	for _, body := range []string{``, `[]`, `null`, `"x"`, `{"a":`} {
		if _, err := KeyOf("g", "m", []byte(body)); err != ErrNotObject {
			t.Errorf("%q: err = %v, want ErrNotObject", body, err)
		}
	}
}

func TestMemoryHitsMissesAndExpires(t *testing.T) {
	m := NewMemory(1 << 20)
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	ctx := context.Background()
	if _, ok, _ := m.Get(ctx, "k"); ok {
		t.Fatal("hit on an empty store")
	}
	_ = m.Put(ctx, "k", []byte("v"), time.Minute)
	if v, ok, _ := m.Get(ctx, "k"); !ok || string(v) != "v" {
		t.Fatalf("got %q %v, want v", v, ok)
	}
	now = now.Add(time.Minute)
	if _, ok, _ := m.Get(ctx, "k"); ok {
		t.Fatal("an entry past its ttl was served")
	}
}

func TestMemoryBoundsItsBytesAndEvictsTheLeastRecentlyUsed(t *testing.T) {
	m := NewMemory(shards * 100) // 100 bytes a shard
	ctx := context.Background()
	// Keys of one shard: the same first byte.
	a, b, c := Key("a1"), Key("a2"), Key("a3")
	val := bytes.Repeat([]byte("x"), 38) // 40 bytes with the key
	_ = m.Put(ctx, a, val, time.Hour)
	_ = m.Put(ctx, b, val, time.Hour)
	_, _, _ = m.Get(ctx, a) // a is now the most recent
	_ = m.Put(ctx, c, val, time.Hour)
	if _, ok, _ := m.Get(ctx, b); ok {
		t.Fatal("the least recently used entry was kept past the bound")
	}
	for _, k := range []Key{a, c} {
		if _, ok, _ := m.Get(ctx, k); !ok {
			t.Fatalf("%s was evicted", k)
		}
	}
	if s := m.shardOf(a); s.bytes > s.limit {
		t.Fatalf("shard holds %d bytes, bound %d", s.bytes, s.limit)
	}
	_ = m.Put(ctx, "a4", bytes.Repeat([]byte("x"), 200), time.Hour)
	if _, ok, _ := m.Get(ctx, "a4"); ok {
		t.Fatal("an entry larger than the bound was kept")
	}
}

func TestCacheKeepsOnlyWhatFitsTheEntryBound(t *testing.T) {
	c := New(NewMemory(1 << 20))
	ctx := context.Background()
	p := NewPolicy(60, 0, 1) // 1 KB a entry
	small := Entry{Charge: 1000, Answer: []byte(`"short"`)}
	big := Entry{Charge: 1000, Answer: []byte(`"` + strings.Repeat("x", 2000) + `"`)}
	if ok, err := c.Keep(ctx, "s", small, p); !ok || err != nil {
		t.Fatalf("small entry not kept: %v", err)
	}
	if ok, _ := c.Keep(ctx, "b", big, p); ok {
		t.Fatal("an entry over max_entry_kb was kept")
	}
	if e, ok, _ := c.Lookup(ctx, "s"); !ok || e.Charge != 1000 || string(e.Answer) != `"short"` {
		t.Fatalf("lookup = %+v %v", e, ok)
	}
	if _, ok, _ := c.Lookup(ctx, "b"); ok {
		t.Fatal("the oversized entry is served")
	}
}

func TestHitChargeIsTheRatioOfTheOriginal(t *testing.T) {
	tests := []struct {
		ratio  float64
		charge int64
		want   int64
	}{
		{0, 12345, 1235}, // default 0.1, half up
		{0.1, 10, 1},
		{0.5, 3, 2},
		{1, 777, 777},
		{0.1, 0, 0},
	}
	for _, tt := range tests {
		if got := NewPolicy(60, tt.ratio, 0).HitCharge(Entry{Charge: tt.charge}); got != tt.want {
			t.Errorf("ratio %v of %d = %d, want %d", tt.ratio, tt.charge, got, tt.want)
		}
	}
}

// Two gateway nodes with one Redis see each other's entries.
func TestRedisEntriesAreSharedBetweenInstances(t *testing.T) {
	url := os.Getenv("TURNPIKE_TEST_REDIS")
	if url == "" {
		t.Skip("TURNPIKE_TEST_REDIS not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mk := func() (*Cache, *redis.Client) {
		rdb := redis.NewClient(opt)
		t.Cleanup(func() { rdb.Close() })
		return New(NewRedis(rdb, "tptest:")), rdb
	}
	a, rdb := mk()
	b, _ := mk()
	k := Key("shared-" + time.Now().Format("150405.000000"))
	t.Cleanup(func() { rdb.Del(ctx, "tptest:rc:"+string(k)) })
	if ok, err := a.Keep(ctx, k, Entry{Charge: 42, Answer: []byte(`{"x":1}`)}, NewPolicy(60, 0, 0)); !ok || err != nil {
		t.Fatalf("keep: %v %v", ok, err)
	}
	e, ok, err := b.Lookup(ctx, k)
	if err != nil || !ok || e.Charge != 42 {
		t.Fatalf("the other instance got %+v %v %v", e, ok, err)
	}
	if ttl := rdb.TTL(ctx, "tptest:rc:"+string(k)).Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("ttl in Redis = %v, want the policy's minute", ttl)
	}
}

func FuzzKeyOf(f *testing.F) {
	f.Add([]byte(`{"model":"m","stream":true,"messages":[]}`))
	f.Add([]byte(`{"a":1e999}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		k1, err1 := KeyOf("g", "m", body)
		k2, err2 := KeyOf("g", "m", body)
		if k1 != k2 || (err1 == nil) != (err2 == nil) {
			t.Fatal("KeyOf is not deterministic")
		}
		if err1 == nil && len(k1) != 64 {
			t.Fatalf("key %q is not a SHA-256", k1)
		}
	})
}

// BenchmarkLookupHit is the hot path of a cache hit: the request's key and
// the memory store's read of a 4 KB answer.
func BenchmarkLookupHit(b *testing.B) {
	c := New(NewMemory(64 << 20))
	ctx := context.Background()
	body := []byte(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"What is the capital of France?"}],"temperature":0}`)
	k, _ := KeyOf("default", "gpt-4o-mini", body)
	_, _ = c.Keep(ctx, k, Entry{Charge: 1234, Answer: []byte(`"` + strings.Repeat("a", 4096) + `"`)}, NewPolicy(3600, 0, 0))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k, _ := KeyOf("default", "gpt-4o-mini", body)
		if _, ok, _ := c.Lookup(ctx, k); !ok {
			b.Fatal("miss")
		}
	}
}

// A surface's space keeps its bodies apart from the same bytes sent to
// another surface; the empty space is KeyOf's, so existing entries stay.
func TestKeySpacesKeepSurfacesApart(t *testing.T) {
	body := []byte(`{"model":"m","input":"Hi"}`)
	plain, _ := KeyOf("g", "m", body)
	empty, _ := KeyIn("", "g", "m", body)
	a, _ := KeyIn("responses", "g", "m", body)
	b, _ := KeyIn("responses", "g", "m", []byte(`{"input":"Hi","stream":true,"model":"m"}`))
	if plain != empty || a == plain || a != b {
		t.Fatalf("KeyOf %s, empty space %s, responses %s and %s", plain, empty, a, b)
	}
}
