package app_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// cachingProvider is a fake OpenAI-compatible provider with a prompt cache
// per key, as real providers keep one per account: a request's cached
// tokens are its longest leading run of messages that the same key has
// seen before. Each message is 100 prompt tokens. Keys in refuse are
// answered 401.
type cachingProvider struct {
	*httptest.Server
	mu     sync.Mutex
	seen   map[string]map[[32]byte]bool // key → message prefixes
	calls  []providerCall
	refuse map[string]bool
}

type providerCall struct {
	key            string
	prompt, cached int
}

const tokensPerMessage = 100

func newCachingProvider(t testing.TB) *cachingProvider {
	p := &cachingProvider{seen: map[string]map[[32]byte]bool{}, refuse: map[string]bool{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *cachingProvider) serve(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		// The Responses API's conversation.
		Input []json.RawMessage `json:"input"`
	}
	raw, _ := io.ReadAll(r.Body)
	responses := strings.HasSuffix(r.URL.Path, "/responses")
	err := json.Unmarshal(raw, &body)
	if responses {
		body.Messages = body.Input
	}
	if err != nil || len(body.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad body"}}`, 400)
		return
	}
	p.mu.Lock()
	if p.refuse[key] {
		p.calls = append(p.calls, providerCall{key: key})
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	cache := p.seen[key]
	if cache == nil {
		cache = map[[32]byte]bool{}
		p.seen[key] = cache
	}
	h := sha256.New()
	cachedMsgs, hit := 0, true
	for i, m := range body.Messages {
		h.Write(m)
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		// The last message is new by nature: only what came before it
		// can be read from the cache.
		if hit && i < len(body.Messages)-1 && cache[sum] {
			cachedMsgs = i + 1
		} else {
			hit = false
		}
		cache[sum] = true
	}
	call := providerCall{key: key, prompt: len(body.Messages) * tokensPerMessage, cached: cachedMsgs * tokensPerMessage}
	p.calls = append(p.calls, call)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if responses {
		fmt.Fprintf(w, `{"id":"resp_1","object":"response","status":"completed","model":"m","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}],`+
			`"usage":{"input_tokens":%d,"output_tokens":10,"total_tokens":%d,"input_tokens_details":{"cached_tokens":%d}}}`, call.prompt, call.prompt+10, call.cached)
		return
	}
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":10,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`,
		call.prompt, call.prompt+10, call.cached)
}

// take returns the calls so far and forgets them.
func (p *cachingProvider) take() []providerCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.calls
	p.calls = nil
	return out
}

const affinityRoot, affinityKey = "affinity-root-token-0123", "sk-affinity-client"

// keyedChannels are two channels of three keys each on the provider.
func keyedChannels(url string) []config.SeedChannel {
	weight := 1
	var out []config.SeedChannel
	for _, name := range []string{"east", "west"} {
		out = append(out, config.SeedChannel{Name: name, Type: "openai", BaseURL: url, Models: []string{"m"}, Groups: []string{"default"},
			Weight: &weight, Key: name + "-key-0000000000a\n" + name + "-key-0000000000b\n" + name + "-key-0000000000c"})
	}
	return out
}

func affinityGateway(t testing.TB, price config.SeedPrice, extra ...testkit.Option) (*testkit.Gateway, *cachingProvider) {
	p := newCachingProvider(t)
	opts := append([]testkit.Option{
		testkit.WithRootToken(affinityRoot),
		testkit.WithUsers(config.SeedUser{Username: "ann", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "ann", Key: affinityKey}),
		testkit.WithChannels(keyedChannels(p.URL)...),
		testkit.WithModels(map[string]config.SeedPrice{"m": price}),
	}, extra...)
	return testkit.Start(t, opts...), p
}

// turn is one request of a session: path, body and headers.
type turn struct {
	path    string
	body    map[string]any
	headers map[string]string
}

func (tr turn) send(t testing.TB, g *testkit.Gateway, requestID string) (int, string) {
	t.Helper()
	b, _ := json.Marshal(tr.body)
	req, _ := http.NewRequest("POST", g.URL+tr.path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+affinityKey)
	req.Header.Set("X-Request-Id", requestID)
	for k, v := range tr.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// messages is a conversation of n user turns (the assistant's answers
// between them), opened by first.
func messages(first string, n int) []map[string]any {
	out := []map[string]any{{"role": "system", "content": "You are terse."}, {"role": "user", "content": first}}
	for i := 1; i < n; i++ {
		out = append(out, map[string]any{"role": "assistant", "content": "ok"}, map[string]any{"role": "user", "content": fmt.Sprintf("and %d?", i)})
	}
	return out
}

// rowOther waits for the usage row of requestID and returns its other.
func rowOther(t testing.TB, g *testkit.Gateway, requestID string) map[string]any {
	t.Helper()
	var found map[string]any
	testkit.WaitFor(3*time.Second, 20*time.Millisecond, func() bool {
		_, body := g.Do(t, "GET", "/api/logs?page_size=100", affinityRoot, nil)
		items, _ := body["items"].([]any)
		for _, it := range items {
			row := it.(map[string]any)
			if row["request_id"] == requestID {
				found, _ = row["other"].(map[string]any)
				return true
			}
		}
		return false
	})
	if found == nil {
		t.Fatalf("no usage row for %s", requestID)
	}
	return found
}

func TestEachSessionSourcePinsASessionToOneKey(t *testing.T) {
	// Each turn of an explicitly named session opens a different
	// conversation, so only the id ties the turns together.
	cases := []struct {
		name string
		turn func(session string, i int) turn
	}{
		{"prompt_cache_key", func(s string, i int) turn {
			return turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "prompt_cache_key": s,
				"messages": messages(fmt.Sprintf("topic %d", i), 1)}}
		}},
		{"metadata.user_id on the messages surface", func(s string, i int) turn {
			return turn{path: "/v1/messages", headers: map[string]string{"anthropic-version": "2023-06-01"}, body: map[string]any{"model": "m", "max_tokens": 50, "metadata": map[string]any{"user_id": s},
				"messages": []map[string]any{{"role": "user", "content": fmt.Sprintf("topic %d", i)}}}}
		}},
		{"prompt_cache_key on /v1/responses", func(s string, i int) turn {
			return turn{path: "/v1/responses", body: map[string]any{"model": "m", "prompt_cache_key": s, "store": false,
				"input": []map[string]any{{"role": "user", "content": fmt.Sprintf("topic %d", i)}}}}
		}},
		{"the conversation's prefix on /v1/responses", func(s string, i int) turn {
			input := []map[string]any{{"role": "user", "content": "about " + s}}
			for j := range i {
				input = append(input, map[string]any{"role": "assistant", "content": "ok"}, map[string]any{"role": "user", "content": fmt.Sprintf("and %d?", j)})
			}
			return turn{path: "/v1/responses", body: map[string]any{"model": "m", "instructions": "be terse", "store": false, "input": input}}
		}},
		{"X-Turnpike-Session header", func(s string, i int) turn {
			return turn{path: "/v1/chat/completions", headers: map[string]string{"X-Turnpike-Session": s},
				body: map[string]any{"model": "m", "messages": messages(fmt.Sprintf("topic %d", i), 1)}}
		}},
		{"user", func(s string, i int) turn {
			return turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "user": s,
				"messages": messages(fmt.Sprintf("topic %d", i), 1)}}
		}},
		{"the prompt's prefix", func(s string, i int) turn {
			return turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "messages": messages("about "+s, i+1)}}
		}},
	}
	g, p := affinityGateway(t, config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 1})
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Six sessions over six keys: by chance alone some would
			// change keys between turns.
			for s := range 6 {
				session := fmt.Sprintf("session-%d-%d", ci, s)
				var keys []string
				for i := range 4 {
					id := fmt.Sprintf("%s-turn-%d", session, i)
					if code, body := tc.turn(session, i).send(t, g, id); code != 200 {
						t.Fatalf("%s: %d %s", id, code, body)
					}
					calls := p.take()
					if len(calls) != 1 {
						t.Fatalf("%s: %d upstream calls", id, len(calls))
					}
					keys = append(keys, calls[0].key)
					want := "hit"
					if i == 0 {
						want = "miss"
					}
					if got := rowOther(t, g, id)["affinity"]; got != want {
						t.Fatalf("%s: other.affinity %v, want %s", id, got, want)
					}
				}
				for _, k := range keys[1:] {
					if k != keys[0] {
						t.Fatalf("%s went to keys %v; want one key", session, keys)
					}
				}
			}
		})
	}
}

func TestARefusedPinnedKeyRepinsWithoutAClientError(t *testing.T) {
	g, p := affinityGateway(t, config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 1})
	tr := turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "user": "repin-me", "messages": messages("hello", 1)}}
	if code, body := tr.send(t, g, "r0"); code != 200 {
		t.Fatalf("first call: %d %s", code, body)
	}
	pinned := p.take()[0].key
	p.mu.Lock()
	p.refuse[pinned] = true
	p.mu.Unlock()
	if code, body := tr.send(t, g, "r1"); code != 200 {
		t.Fatalf("the pinned key's 401 reached the client: %d %s", code, body)
	}
	calls := p.take()
	if len(calls) != 2 || calls[0].key != pinned || calls[1].key == pinned {
		t.Fatalf("calls %+v: want the pinned key refused, then another key", calls)
	}
	if got := rowOther(t, g, "r1")["affinity"]; got != "repin" {
		t.Fatalf("other.affinity %v, want repin", got)
	}
	if code, _ := tr.send(t, g, "r2"); code != 200 {
		t.Fatalf("third call: %d", code)
	}
	if again := p.take(); len(again) != 1 || again[0].key != calls[1].key {
		t.Fatalf("after the repin the session went to %+v, want %s", again, calls[1].key)
	}
	if got := rowOther(t, g, "r2")["affinity"]; got != "hit" {
		t.Fatalf("other.affinity %v after the repin, want hit", got)
	}
	resp := g.DoRaw(t, "GET", "/metrics", affinityRoot, nil)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, series := range []string{`turnpike_affinity_total{model="m",result="miss"} 1`,
		`turnpike_affinity_total{model="m",result="repin"} 1`, `turnpike_affinity_total{model="m",result="hit"} 1`} {
		if !strings.Contains(string(raw), series) {
			t.Errorf("no %s in the metrics", series)
		}
	}
}

func TestAnExpiredPinIsAMiss(t *testing.T) {
	g, p := affinityGateway(t, config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 1,
		Affinity: map[string]any{"enabled": true, "ttl_seconds": 1}})
	tr := turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "user": "short-lived", "messages": messages("hello", 1)}}
	for i, want := range []string{"miss", "hit"} {
		if code, _ := tr.send(t, g, fmt.Sprintf("e%d", i)); code != 200 {
			t.Fatal(code)
		}
		if got := rowOther(t, g, fmt.Sprintf("e%d", i))["affinity"]; got != want {
			t.Fatalf("call %d: other.affinity %v, want %s", i, got, want)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	if code, _ := tr.send(t, g, "e2"); code != 200 {
		t.Fatal(code)
	}
	if got := rowOther(t, g, "e2")["affinity"]; got != "miss" {
		t.Fatalf("after the ttl: other.affinity %v, want miss", got)
	}
	p.take()
}

func TestAffinityOffLeavesNoPinAndTheRowSaysNothing(t *testing.T) {
	g, p := affinityGateway(t, config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 1, Affinity: affinityOff,
		Routing: map[string]any{"strategy": "least_busy"}})
	tr := turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "user": "u", "messages": messages("hello", 1)}}
	if code, _ := tr.send(t, g, "off0"); code != 200 {
		t.Fatal(code)
	}
	other := rowOther(t, g, "off0")
	if _, ok := other["affinity"]; ok || other["strategy"] != "least_busy" {
		t.Fatalf("other %v: want no affinity and strategy least_busy", other)
	}
	p.take()
}

func TestPinsHoldAcrossNodesSharingRedis(t *testing.T) {
	if os.Getenv("TURNPIKE_TEST_REDIS") == "" {
		t.Skip("set TURNPIKE_TEST_REDIS (redis://127.0.0.1:6379/0) to check pins shared by two nodes")
	}
	p := newCachingProvider(t)
	a, b := twoNodes(t,
		testkit.WithRootToken(affinityRoot),
		testkit.WithUsers(config.SeedUser{Username: "ann", Password: "pw-longer", Role: "user", Group: "default", Quota: 1_000_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "ann", Key: affinityKey}),
		testkit.WithChannels(keyedChannels(p.URL)...),
		testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1, OutputPerMTok: 1}}))
	// A session of its own, so earlier runs against the same Redis left
	// no pin for it.
	run := time.Now().UnixNano()
	for s := range 4 {
		tr := turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "prompt_cache_key": fmt.Sprintf("nodes-%d-%d", run, s),
			"messages": messages("hello", 1)}}
		var keys []string
		for i, node := range []*testkit.Gateway{a, b, a, b} {
			id := fmt.Sprintf("n-%d-%d-%d", run, s, i)
			if code, body := tr.send(t, node, id); code != 200 {
				t.Fatalf("%s: %d %s", id, code, body)
			}
			keys = append(keys, p.take()[0].key)
			want := "hit"
			if i == 0 {
				want = "miss"
			}
			if got := rowOther(t, node, id)["affinity"]; got != want {
				t.Fatalf("%s: other.affinity %v, want %s", id, got, want)
			}
		}
		for _, k := range keys {
			if k != keys[0] {
				t.Fatalf("session %d went to keys %v across the nodes", s, keys)
			}
		}
	}
}

func TestTheCacheReportAddsUpWhatTheProviderCached(t *testing.T) {
	g, p := affinityGateway(t, config.SeedPrice{InputPerMTok: 1, OutputPerMTok: 1})
	start := time.Now().Add(-time.Second)
	var calls []providerCall
	for s := range 4 {
		for i := range 3 {
			tr := turn{path: "/v1/chat/completions", body: map[string]any{"model": "m", "messages": messages(fmt.Sprintf("report %d", s), i+1)}}
			if code, body := tr.send(t, g, fmt.Sprintf("rep-%d-%d", s, i)); code != 200 {
				t.Fatalf("%d %s", code, body)
			}
			calls = append(calls, p.take()...)
		}
	}
	rowOther(t, g, "rep-3-2") // every row is written
	// What the provider saw, by the report's keys.
	want := map[string]map[string][2]int64{"channel": {}, "key": {}, "model": {}}
	for _, c := range calls {
		channel := c.key[:strings.Index(c.key, "-")]
		index := map[byte]string{'a': "0", 'b': "1", 'c': "2"}[c.key[len(c.key)-1]]
		for by, k := range map[string]string{"channel": channel, "key": channel + "#" + index, "model": "m"} {
			v := want[by][k]
			want[by][k] = [2]int64{v[0] + int64(c.prompt), v[1] + int64(c.cached)}
		}
	}
	cached := int64(0)
	for _, v := range want["model"] {
		cached = v[1]
	}
	if cached == 0 {
		t.Fatal("the provider cached nothing: the sessions did not stay on their keys")
	}
	windows := []string{"", fmt.Sprintf("&since=%d", start.Unix()), "&since=" + start.UTC().Format(time.RFC3339) + "&until=" + time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}
	for by, byKey := range want {
		for _, window := range windows {
			code, body := g.Do(t, "GET", "/api/reports/cache?group_by="+by+window, affinityRoot, nil)
			items, _ := body["items"].([]any)
			if code != 200 || len(items) != len(byKey) {
				t.Fatalf("group_by=%s%s: %d %v, want %d items", by, window, code, body, len(byKey))
			}
			for _, it := range items {
				item := it.(map[string]any)
				w, ok := byKey[item["key"].(string)]
				input, read := int64(item["input_tokens"].(float64)), int64(item["cache_read_tokens"].(float64))
				if !ok || input != w[0] || read != w[1] || item["hit_ratio"].(float64) != float64(w[1])/float64(w[0]) {
					t.Fatalf("group_by=%s item %v, want input %d cache read %d", by, item, w[0], w[1])
				}
			}
		}
	}
	// A window before the calls holds none of them.
	code, body := g.Do(t, "GET", fmt.Sprintf("/api/reports/cache?until=%d", start.Add(-time.Hour).Unix()), affinityRoot, nil)
	if items, _ := body["items"].([]any); code != 200 || len(items) != 0 {
		t.Fatalf("an earlier window: %d %v", code, body)
	}
	for _, bad := range []string{"group_by=user", "since=yesterday", "since=2030-01-01T00:00:00Z&until=2029-01-01T00:00:00Z"} {
		code, body := g.Do(t, "GET", "/api/reports/cache?"+bad, affinityRoot, nil)
		if code != 400 {
			t.Fatalf("%s: %d %v, want 400", bad, code, body)
		}
	}
	if code, _ := g.Do(t, "GET", "/api/reports/cache", affinityKey, nil); code != 401 && code != 403 {
		t.Fatalf("an API key read the report: %d", code)
	}
}
