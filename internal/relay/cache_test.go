package relay

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// cachedEnv is an env whose model keeps answers for a minute at a hit
// ratio of 0.1, served by one OpenAI-compatible fake.
func cachedEnv(t *testing.T, f *fakeOpenAI, rc *store.ResponseCache) *env {
	e := newEnv(t)
	e.relay.Cache = respcache.New(respcache.NewMemory(1 << 20))
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000, ResponseCache: rc})
	e.channel("up", newFake(t, f).URL, nil)
	return e
}

func minuteCache() *store.ResponseCache {
	return &store.ResponseCache{TTLSeconds: 60, HitRatio: 0.1, MaxEntryKB: 256}
}

// sendChat posts body to path with extra headers and returns the answer.
func (e *env) sendChat(path, body string, headers map[string]string) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, readAll(resp)
}

// A repeated request is answered from the cache in every dialect, as a
// stream when the second asks for one (whatever the first was), with the
// header, at hit_ratio of the first charge, on a row with no channel and no
// upstream cost; the upstream is asked once (CONTRACT §22).
func TestARepeatedRequestIsAnsweredFromTheCacheAtItsHitRatio(t *testing.T) {
	cases := []struct {
		name, path, plain, stream, streamPath string
		streamMark                            string
	}{
		{"openai", "/v1/chat/completions",
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`,
			`{"stream":true,"user":"bob","metadata":{"a":"b"},"messages":[{"content":"Hi","role":"user"}],"model":"gpt-4o-mini"}`, "", "data: [DONE]"},
		{"messages", "/v1/messages",
			`{"model":"gpt-4o-mini","max_tokens":100,"messages":[{"role":"user","content":"Hi"}]}`,
			`{"model":"gpt-4o-mini","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`, "", "event: message_stop"},
		{"alternate", "/v1beta/models/gpt-4o-mini:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`,
			`{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`, "/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse", `"finishReason":"STOP"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeOpenAI{text: "Cached words here"}
			e := cachedEnv(t, f, minuteCache())
			before := e.balance()
			resp, first := e.sendChat(tc.path, tc.plain, nil)
			if resp.StatusCode != 200 || resp.Header.Get(CacheHeader) != "miss" || !strings.Contains(first, "Cached words here") {
				t.Fatalf("first call: %d %q %s", resp.StatusCode, resp.Header.Get(CacheHeader), first)
			}
			original := before - e.balance()
			// Entries are stored off the request's path.
			waitFor(t, func() bool { ok, _ := cacheHas(e, tc.path, tc.plain); return ok })

			resp, again := e.sendChat(tc.path, tc.plain, nil)
			if resp.Header.Get(CacheHeader) != "hit" {
				t.Fatalf("second call: %q\n%s\nfirst:\n%s", resp.Header.Get(CacheHeader), again, first)
			}
			if !strings.Contains(again, "Cached words here") {
				t.Fatalf("hit lost the content: %s", again)
			}
			path := tc.path
			if tc.streamPath != "" {
				path = tc.streamPath
			}
			resp, streamed := e.sendChat(path, tc.stream, nil)
			if resp.Header.Get(CacheHeader) != "hit" || !strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") ||
				!strings.Contains(streamed, tc.streamMark) || !strings.Contains(streamed, "Cached words here") {
				t.Fatalf("streamed hit: %q %q\n%s", resp.Header.Get(CacheHeader), resp.Header.Get("Content-Type"), streamed)
			}
			if f.calls() != 1 {
				t.Fatalf("upstream asked %d times, want once", f.calls())
			}
			hitCharge := (original + 5) / 10
			if charged := before - e.balance(); charged != original+2*hitCharge {
				t.Fatalf("charged %d, want %d + 2×%d", charged, original, hitCharge)
			}
			row, other := e.lastConsume()
			if other["response_cache"] != "hit" || row.ChannelID != 0 || other["upstream_cost_usd"] != "0" || row.Quota != hitCharge {
				t.Fatalf("hit row: channel %d quota %d other %v", row.ChannelID, row.Quota, other)
			}
		})
	}
}

// cacheHas says whether the cache holds the answer to body at path's
// model, for the test's key group.
func cacheHas(e *env, path, body string) (bool, error) {
	model := "gpt-4o-mini"
	k, err := respcache.KeyOf("default", model, []byte(body))
	if err != nil {
		return false, err
	}
	_, ok, err := e.relay.Cache.Lookup(context.Background(), k)
	return ok, err
}

// What the cache must not keep, and how a client steers past it.
func TestTheCacheKeepsOnlyWholeAnswersAndHonoursNoCache(t *testing.T) {
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`
	t.Run("a stream that broke off is not kept", func(t *testing.T) {
		f := &fakeOpenAI{text: "one two three", breakOff: true}
		e := cachedEnv(t, f, minuteCache())
		_, got := e.sendChat("/v1/chat/completions", body, nil)
		if !strings.Contains(got, `"error"`) {
			t.Fatalf("no error event: %s", got)
		}
		f.mu.Lock()
		f.breakOff = false
		f.mu.Unlock()
		resp, _ := e.sendChat("/v1/chat/completions", body, nil)
		if resp.Header.Get(CacheHeader) != "miss" || f.calls() != 2 {
			t.Fatalf("a truncated answer was served from the cache: %q, %d calls", resp.Header.Get(CacheHeader), f.calls())
		}
	})
	t.Run("an answer past max_entry_kb is not kept", func(t *testing.T) {
		f := &fakeOpenAI{text: strings.Repeat("long ", 400)}
		e := cachedEnv(t, f, &store.ResponseCache{TTLSeconds: 60, HitRatio: 0.1, MaxEntryKB: 1})
		e.sendChat("/v1/chat/completions", body, nil)
		e.sendChat("/v1/chat/completions", body, nil)
		if f.calls() != 2 {
			t.Fatalf("upstream asked %d times, want 2", f.calls())
		}
	})
	t.Run("no-cache bypasses the lookup and refreshes the entry", func(t *testing.T) {
		f := &fakeOpenAI{text: "fresh"}
		e := cachedEnv(t, f, minuteCache())
		e.sendChat("/v1/chat/completions", body, nil)
		waitFor(t, func() bool { ok, _ := cacheHas(e, "", body); return ok })
		resp, _ := e.sendChat("/v1/chat/completions", body, map[string]string{"Cache-Control": "no-cache"})
		if resp.Header.Get(CacheHeader) != "bypass" || f.calls() != 2 {
			t.Fatalf("no-cache: %q, %d calls", resp.Header.Get(CacheHeader), f.calls())
		}
	})
	t.Run("a model and key without a cache get no header", func(t *testing.T) {
		f := &fakeOpenAI{}
		e := cachedEnv(t, f, nil)
		resp, _ := e.sendChat("/v1/chat/completions", body, nil)
		if h := resp.Header.Get(CacheHeader); h != "" || f.calls() != 1 {
			t.Fatalf("header %q with the cache off", h)
		}
	})
	t.Run("a key turns it on for a model that has none", func(t *testing.T) {
		f := &fakeOpenAI{}
		e := cachedEnv(t, f, nil)
		e.token.ResponseCache = minuteCache()
		if err := e.st.Tokens().Update(context.Background(), e.token); err != nil {
			t.Fatal(err)
		}
		e.relay.Keys.Invalidate()
		e.sendChat("/v1/chat/completions", body, nil)
		waitFor(t, func() bool { ok, _ := cacheHas(e, "", body); return ok })
		resp, _ := e.sendChat("/v1/chat/completions", body, nil)
		if resp.Header.Get(CacheHeader) != "hit" || f.calls() != 1 {
			t.Fatalf("key cache: %q, %d calls", resp.Header.Get(CacheHeader), f.calls())
		}
	})
}
