package relay

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// nativeResponses is an upstream speaking the Responses API whose stream
// ends with the whole Response, as the OpenAI API's does; it records what
// it was sent.
type nativeResponses struct {
	mu     sync.Mutex
	bodies []gjson.Result
}

func (f *nativeResponses) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := record(t, r)
		f.mu.Lock()
		f.bodies = append(f.bodies, gjson.ParseBytes(s.raw))
		f.mu.Unlock()
		whole := respObject("resp_up", s.json("model").String(), `,"usage":`+respUsage)
		if !s.json("stream").Bool() {
			writeJSONString(w, whole)
			return
		}
		writeSSE(w,
			[2]string{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_up","object":"response","status":"in_progress","output":[]}}`},
			[2]string{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello there"}`},
			[2]string{"response.completed", fmt.Sprintf(`{"type":"response.completed","sequence_number":2,"response":%s}`, whole)})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *nativeResponses) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// responsesCacheEnv has gpt-4o-mini with a minute's response cache on one
// channel: a native Responses one, or a chat one the calls are converted
// for. calls counts what the upstream was asked.
func responsesCacheEnv(t *testing.T, upstream string) (e *env, calls func() int) {
	e = newEnv(t)
	e.relay.Cache = respcache.New(respcache.NewMemory(1 << 20))
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000, ResponseCache: minuteCache()})
	if upstream == "native" {
		f := &nativeResponses{}
		e.channel("up", f.serve(t).URL, nil)
		return e, f.calls
	}
	f := &fakeOpenAI{}
	e.channel("up", newFake(t, f).URL, func(c *store.Channel) { c.Settings = map[string]any{"responses": "chat"} })
	return e, f.calls
}

// A repeated self-contained Responses request is answered from the cache
// whichever kind of channel answered it first and however it was asked:
// as a Response object, or as the whole event stream when the repeat
// streams, with the repeat's own echoed fields; the upstream is asked
// once, each hit is billed hit_ratio of the first charge on a row with no
// channel and no upstream cost (CONTRACT §22).
func TestARepeatedResponsesRequestIsAnsweredFromTheCache(t *testing.T) {
	const body = `{"model":"gpt-4o-mini","input":"Hi","store":false,"max_output_tokens":300%s}`
	for _, upstream := range []string{"native", "chat"} {
		for _, firstStreams := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s channel, first streamed %v", upstream, firstStreams), func(t *testing.T) {
				e, calls := responsesCacheEnv(t, upstream)
				before := e.balance()
				first := fmt.Sprintf(body, map[bool]string{true: `,"stream":true`}[firstStreams])
				resp, got := e.sendChat("/v1/responses", first, nil)
				if resp.StatusCode != 200 || resp.Header.Get(CacheHeader) != "miss" || !strings.Contains(got, "Hello there") {
					t.Fatalf("first call: %d %q %s", resp.StatusCode, resp.Header.Get(CacheHeader), got)
				}
				original := before - e.balance()
				waitFor(t, func() bool { return responsesCached(e, first) })

				resp, again := e.sendChat("/v1/responses", fmt.Sprintf(body, `,"metadata":{"run":"2"}`), nil)
				r := gjson.Parse(again)
				if resp.Header.Get(CacheHeader) != "hit" || r.Get("object").String() != "response" || r.Get("status").String() != "completed" ||
					r.Get("output.0.content.0.text").String() != "Hello there" || r.Get("metadata.run").String() != "2" ||
					!strings.HasPrefix(r.Get("id").String(), "resp_") {
					t.Fatalf("JSON hit: %q\n%s", resp.Header.Get(CacheHeader), again)
				}

				resp, streamed := e.sendChat("/v1/responses", fmt.Sprintf(body, `,"stream":true,"user":"bob"`), nil)
				names := sseEventNames(streamed)
				if resp.Header.Get(CacheHeader) != "hit" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
					len(names) < 4 || names[0] != "response.created" || names[len(names)-1] != "response.completed" ||
					!slices.Contains(names, "response.output_text.delta") || !strings.Contains(streamed, "Hello there") {
					t.Fatalf("streamed hit: %q %v\n%s", resp.Header.Get(CacheHeader), names, streamed)
				}
				if calls() != 1 {
					t.Fatalf("upstream asked %d times, want once", calls())
				}
				hitCharge := (original + 5) / 10
				if charged := before - e.balance(); charged != original+2*hitCharge {
					t.Fatalf("charged %d, want %d + 2×%d", charged, original, hitCharge)
				}
				row, other := e.lastConsume()
				if other["response_cache"] != "hit" || row.ChannelID != 0 || other["upstream_cost_usd"] != "0" || row.Quota != hitCharge ||
					other["endpoint"] != "responses" || row.PromptTokens != 1000 || row.CompletionTokens != 500 {
					t.Fatalf("hit row: channel %d quota %d tokens %d/%d other %v", row.ChannelID, row.Quota, row.PromptTokens, row.CompletionTokens, other)
				}
			})
		}
	}
}

// responsesCached says whether the cache holds the answer to body.
func responsesCached(e *env, body string) bool {
	k, err := respcache.KeyIn(responsesKeySpace, "default", "gpt-4o-mini", []byte(body))
	if err != nil {
		return false
	}
	_, ok, _ := e.relay.Cache.Lookup(e.t.Context(), k)
	return ok
}

// What the cache passes by on /v1/responses: a request that may be stored
// or that depends on stored state (its answer is one the client may fetch
// or continue by id, which a hit never is), and a client's no-cache.
// Each is asked of the upstream every time and says bypass.
func TestResponsesRequestsTheCachePassesBy(t *testing.T) {
	cases := []struct {
		name, body string
		headers    map[string]string
	}{
		{"stored by default", `{"model":"gpt-4o-mini","input":"Hi"}`, nil},
		{"stored", `{"model":"gpt-4o-mini","input":"Hi","store":true}`, nil},
		{"continuing a stored response", `{"model":"gpt-4o-mini","input":"Hi","store":false,"previous_response_id":"resp_up"}`, nil},
		{"no-cache", `{"model":"gpt-4o-mini","input":"Hi","store":false}`, map[string]string{"Cache-Control": "no-cache"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, calls := responsesCacheEnv(t, "native")
			for i := 0; i < 2; i++ {
				resp, got := e.sendChat("/v1/responses", tc.body, tc.headers)
				if resp.StatusCode != 200 || resp.Header.Get(CacheHeader) != "bypass" {
					t.Fatalf("call %d: %d %q %s", i, resp.StatusCode, resp.Header.Get(CacheHeader), got)
				}
			}
			if calls() != 2 {
				t.Fatalf("upstream asked %d times, want 2", calls())
			}
			if _, other := e.lastConsume(); other["response_cache"] != nil {
				t.Fatalf("a bypassed call's row says %v", other["response_cache"])
			}
		})
	}
}

// A no-cache request still refreshes the entry, which the next plain
// request is answered from.
func TestANoCacheResponsesRequestRefreshesTheEntry(t *testing.T) {
	e, calls := responsesCacheEnv(t, "chat")
	body := `{"model":"gpt-4o-mini","input":"Hi","store":false}`
	e.sendChat("/v1/responses", body, map[string]string{"Cache-Control": "no-cache"})
	waitFor(t, func() bool { return responsesCached(e, body) })
	resp, _ := e.sendChat("/v1/responses", body, nil)
	if resp.Header.Get(CacheHeader) != "hit" || calls() != 1 {
		t.Fatalf("after no-cache: %q, %d calls", resp.Header.Get(CacheHeader), calls())
	}
}

// What the cache must not keep on /v1/responses: a converted stream that
// broke off, and a native stream whose terminal event repeats no output
// (the answer is in the deltas alone, which a native stream does not
// record). The next equal request is asked of the upstream again.
func TestTheResponsesCacheKeepsOnlyWholeAnswers(t *testing.T) {
	body := `{"model":"gpt-4o-mini","input":"Hi","store":false,"stream":true}`
	cases := []struct {
		name  string
		setup func(e *env) (calls func() int, mend func())
	}{
		{"a converted stream that broke off", func(e *env) (func() int, func()) {
			f := &fakeOpenAI{text: "one two three", breakOff: true}
			e.channel("up", newFake(e.t, f).URL, func(c *store.Channel) { c.Settings = map[string]any{"responses": "chat"} })
			return f.calls, func() { f.mu.Lock(); f.breakOff = false; f.mu.Unlock() }
		}},
		{"a native stream ending bare", func(e *env) (func() int, func()) {
			f := &fakeResponsesAPI{}
			e.responsesChannel("up", f)
			return f.calls, func() {}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.relay.Cache = respcache.New(respcache.NewMemory(1 << 20))
			e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 100, OutputPerMTok: 1000, ResponseCache: minuteCache()})
			calls, mend := tc.setup(e)
			e.sendChat("/v1/responses", body, nil)
			// Entries are stored off the request's path: give a wrongly
			// kept one the time a right one takes to land.
			waitFor(t, func() bool { return responsesCached(e, body) })
			if responsesCached(e, body) {
				t.Fatal("the answer was kept")
			}
			mend()
			resp, got := e.sendChat("/v1/responses", body, nil)
			if resp.Header.Get(CacheHeader) != "miss" || calls() != 2 {
				t.Fatalf("second call %q after %d upstream calls:\n%s", resp.Header.Get(CacheHeader), calls(), got)
			}
		})
	}
}
