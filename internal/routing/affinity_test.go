package routing

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestEachSessionSourceWinsOverTheOnesAfterIt(t *testing.T) {
	all := SessionSources{PromptCacheKey: "pck", MetadataUserID: "meta", Header: "hdr", User: "usr"}
	cases := []struct {
		name    string
		src     SessionSources
		id, frm string
	}{
		{"prompt_cache_key first", all, "pck", SessionFromPromptCacheKey},
		{"then metadata.user_id", SessionSources{MetadataUserID: "meta", Header: "hdr", User: "usr"}, "meta", SessionFromMetadataUserID},
		{"then the header", SessionSources{Header: "hdr", User: "usr"}, "hdr", SessionFromHeader},
		{"then user", SessionSources{User: "usr"}, "usr", SessionFromUser},
		{"none", SessionSources{}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if id, from := tc.src.First(); id != tc.id || from != tc.frm {
				t.Fatalf("First() = %q from %q, want %q from %q", id, from, tc.id, tc.frm)
			}
		})
	}
}

func conversation(system, firstUser string, turns ...string) *ir.Request {
	req := &ir.Request{Model: "m", System: []ir.Part{{Kind: ir.PartText, Text: system}},
		Tools:    []ir.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: firstUser}}}}}
	for _, t := range turns {
		req.Messages = append(req.Messages, ir.Message{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartText, Text: "ok"}}},
			ir.Message{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: t}}})
	}
	return req
}

func TestThePrefixSessionIsOneConversationAcrossItsTurns(t *testing.T) {
	base := SessionKey(1, "default", "m", SessionSources{}, conversation("be brief", "hello"))
	if got := SessionKey(1, "default", "m", SessionSources{}, conversation("be brief", "hello", "and then?", "more")); got != base {
		t.Fatal("a later turn of the same conversation is another session")
	}
	others := map[string]Session{
		"another system prompt": SessionKey(1, "default", "m", SessionSources{}, conversation("be verbose", "hello")),
		"another first message": SessionKey(1, "default", "m", SessionSources{}, conversation("be brief", "good day")),
		"another model":         SessionKey(1, "default", "m2", SessionSources{}, conversation("be brief", "hello")),
		"another group":         SessionKey(1, "vip", "m", SessionSources{}, conversation("be brief", "hello")),
		"an explicit id":        SessionKey(1, "default", "m", SessionSources{User: "u1"}, conversation("be brief", "hello")),
	}
	noTools := conversation("be brief", "hello")
	noTools.Tools = nil
	others["other tools"] = SessionKey(1, "default", "m", SessionSources{}, noTools)
	for name, k := range others {
		if k == base {
			t.Errorf("%s gives the same session", name)
		}
	}
	// An explicit id is the session whatever the prompt.
	if SessionKey(1, "default", "m", SessionSources{User: "u1"}, conversation("a", "b")) !=
		SessionKey(1, "default", "m", SessionSources{User: "u1"}, conversation("c", "d")) {
		t.Error("an explicit id does not name one session across prompts")
	}
}

func TestSessionKeyAllocatesNothing(t *testing.T) {
	req := conversation("be brief", "hello", "more")
	if n := testing.AllocsPerRun(100, func() { SessionKey(1, "default", "m", SessionSources{}, req) }); n != 0 {
		t.Fatalf("%v allocations per key", n)
	}
}

// pinStores are the stores under test: memory always, Redis when
// TURNPIKE_TEST_REDIS is set. Each gets a clock it can move (Redis keeps
// real time, so its ttl case sleeps).
func pinStores(t *testing.T) map[string]PinStore {
	stores := map[string]PinStore{"memory": NewMemoryPins(1000)}
	if rdb := testRedis(t); rdb != nil {
		stores["redis"] = NewRedisPins(rdb, "turnpike-test-"+t.Name()+":")
	}
	return stores
}

func testRedis(t *testing.T) redis.UniversalClient {
	raw := os.Getenv("TURNPIKE_TEST_REDIS")
	if raw == "" {
		return nil
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("TURNPIKE_TEST_REDIS: %v", err)
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("TURNPIKE_TEST_REDIS is set but Redis does not answer: %v", err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func TestPinsAreRenewedByUseAndExpireAfterTheirTTL(t *testing.T) {
	for name, ps := range pinStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ttl := 300 * time.Millisecond
			session := Session{User: 1, Hash: uint64(time.Now().UnixNano())}
			if _, ok, err := ps.Get(ctx, session, ttl); ok || err != nil {
				t.Fatalf("a new session has a pin (%v)", err)
			}
			want := Pin{ChannelID: 7, KeyIndex: 2}
			if err := ps.Set(ctx, session, want, ttl); err != nil {
				t.Fatal(err)
			}
			// Used every 200 ms, the pin outlives its 300 ms ttl.
			for range 3 {
				time.Sleep(200 * time.Millisecond)
				got, ok, err := ps.Get(ctx, session, ttl)
				if err != nil || !ok || got != want {
					t.Fatalf("renewed pin = %+v %v %v, want %+v", got, ok, err, want)
				}
			}
			time.Sleep(400 * time.Millisecond)
			if _, ok, _ := ps.Get(ctx, session, ttl); ok {
				t.Fatal("the pin outlived its ttl")
			}
		})
	}
}

func TestASessionBelongsToItsUser(t *testing.T) {
	prompt := conversation("be brief", "hello")
	ids := map[string]SessionSources{
		"the prompt's prefix": {},
		"prompt_cache_key":    {PromptCacheKey: "k"},
		"metadata.user_id":    {MetadataUserID: "m"},
		"the session header":  {Header: "h"},
		"user":                {User: "u"},
	}
	for name, src := range ids {
		t.Run(name, func(t *testing.T) {
			a, b := SessionKey(1, "default", "m", src, prompt), SessionKey(2, "default", "m", src, prompt)
			if a == b {
				t.Fatal("two users sending the same session are one session")
			}
			for kind, ps := range pinStores(t) {
				ctx := context.Background()
				if err := ps.Set(ctx, a, Pin{ChannelID: 4, KeyIndex: 1}, time.Minute); err != nil {
					t.Fatal(err)
				}
				if p, ok, err := ps.Get(ctx, b, time.Minute); ok || err != nil {
					t.Fatalf("%s: user 2 found user 1's pin %+v (%v)", kind, p, err)
				}
				if err := ps.Set(ctx, b, Pin{ChannelID: 9}, time.Minute); err != nil {
					t.Fatal(err)
				}
				if p, ok, _ := ps.Get(ctx, a, time.Minute); !ok || p.ChannelID != 4 {
					t.Fatalf("%s: user 2 re-pinned user 1's session: %+v %v", kind, p, ok)
				}
			}
		})
	}
	// The same hash under two users is still two sessions: the user is not
	// only an input of a hash a chosen id could collide with.
	ps := NewMemoryPins(DefaultPinCapacity)
	ctx := context.Background()
	_ = ps.Set(ctx, Session{User: 1, Hash: 42}, Pin{ChannelID: 1}, time.Minute)
	if _, ok, _ := ps.Get(ctx, Session{User: 2, Hash: 42}, time.Minute); ok {
		t.Fatal("a colliding hash reached another user's pin")
	}
}

func TestMemoryPinsForgetTheLeastRecentlyUsedWhenFull(t *testing.T) {
	ps := NewMemoryPins(pinShards) // one pin per shard
	ctx := context.Background()
	// Sessions 1 and 1+pinShards share a shard.
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	older, newer := Session{User: 1, Hash: 1}, Session{User: 1, Hash: 1 + pinShards}
	must(ps.Set(ctx, older, Pin{ChannelID: 1}, time.Minute))
	must(ps.Set(ctx, newer, Pin{ChannelID: 2}, time.Minute))
	if _, ok, _ := ps.Get(ctx, older, time.Minute); ok {
		t.Fatal("the older session kept its pin in a full shard")
	}
	if p, ok, _ := ps.Get(ctx, newer, time.Minute); !ok || p.ChannelID != 2 {
		t.Fatalf("the newer session lost its pin: %+v %v", p, ok)
	}
	if ps.Len() != 1 {
		t.Fatalf("Len = %d", ps.Len())
	}
}

func TestAnUnreachableRedisIsAnErrorNotAPin(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	ps := NewRedisPins(rdb, "x:")
	_, ok, err := ps.Get(context.Background(), Session{User: 1, Hash: 1}, time.Minute)
	if ok || err == nil || errors.Is(err, redis.Nil) {
		t.Fatalf("Get = %v, %v; want an error", ok, err)
	}
}

func TestAPinIsUsedOnlyWhenItsKeyIsHealthyAndServesTheCall(t *testing.T) {
	h := NewHealth(nil, nil)
	r := NewRouter(h)
	multi := ch(1, 0, 1, "enabled")
	multi.Key = "k0\nk1\nk2"
	r.Swap(NewTable([]store.Channel{multi, ch(2, 0, 1, "disabled")}))
	o := PlanOptions{Group: "default", Model: "m", Max: 3}
	if c, ok := r.Table().Pinned(h, o, Pin{ChannelID: 1, KeyIndex: 2}); !ok || c.Key != "k2" || c.KeyIndex != 2 {
		t.Fatalf("healthy pin: %v %+v", ok, c)
	}
	h.coolKey(r.Table().Channel(1), 2, "429", time.Minute)
	cases := []struct {
		name string
		pin  Pin
		o    PlanOptions
	}{
		{"cooling key", Pin{ChannelID: 1, KeyIndex: 2}, o},
		{"key index past the list", Pin{ChannelID: 1, KeyIndex: 3}, o},
		{"disabled channel", Pin{ChannelID: 2}, o},
		{"unknown channel", Pin{ChannelID: 9}, o},
		{"another group", Pin{ChannelID: 1}, PlanOptions{Group: "vip", Model: "m"}},
		{"filtered out", Pin{ChannelID: 1}, PlanOptions{Group: "default", Model: "m", Filter: func(*Channel) bool { return false }}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if c, ok := r.Table().Pinned(h, tc.o, tc.pin); ok {
				t.Fatalf("pin used: %+v", c)
			}
		})
	}
}

func TestAttemptsTryThePinnedKeyFirstAndMoveOnWhenItIsRefused(t *testing.T) {
	h := NewHealth(nil, nil)
	r := NewRouter(h)
	multi := ch(1, 0, 1, "enabled")
	multi.Key = "k0\nk1"
	r.Swap(NewTable([]store.Channel{multi}))
	pin := r.Table().Channel(1).WithKey(1)
	var sent []string
	last, exhausted := Attempts{Health: h, RetryCount: 2, Pin: pin}.Try(context.Background(), r.Plan("default", "m", 3, nil), nil,
		func(c *Channel) error {
			sent = append(sent, c.Key)
			if c.Key == "k1" {
				return &ir.Error{Status: 401, UpstreamStatus: 401, Kind: ir.KindAuthentication, Message: "bad key"}
			}
			return nil
		}, nil)
	if last != nil || exhausted || len(sent) != 2 || sent[0] != "k1" || sent[1] != "k0" {
		t.Fatalf("sent %v, last %v, exhausted %v; want the pinned k1 refused, then k0 serving", sent, last, exhausted)
	}
	if h.Routable(1, 1) {
		t.Fatal("the refused pinned key is still routable")
	}
}
