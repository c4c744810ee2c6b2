package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	badProviderKey  = "sk-provider-key-refused-0000"
	goodProviderKey = "sk-provider-key-accepted-1111"
)

// keyedProvider is an OpenAI-compatible upstream that refuses the keys in
// refused with 401 (quoting the key, as providers do) and answers any other.
type keyedProvider struct {
	*httptest.Server
	mu      sync.Mutex
	refused map[string]bool
	sent    []string
}

func newKeyedProvider(t *testing.T, refused ...string) *keyedProvider {
	p := &keyedProvider{refused: map[string]bool{}}
	for _, k := range refused {
		p.refused[k] = true
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		p.mu.Lock()
		p.sent = append(p.sent, key)
		refused := p.refused[key]
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if refused {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, key)
			return
		}
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *keyedProvider) accept(key string) { p.mu.Lock(); delete(p.refused, key); p.mu.Unlock() }

// take returns the keys sent since the last call.
func (p *keyedProvider) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.sent
	p.sent = nil
	return out
}

// channelKeys reads the keys member of a channel from the admin API.
func channelKeys(t *testing.T, g *testkit.Gateway, id int64) []map[string]any {
	t.Helper()
	code, body := g.Do(t, "GET", fmt.Sprintf("/api/channels/%d", id), healthRoot, nil)
	if code != 200 {
		t.Fatalf("get channel: %d %v", code, body)
	}
	var out []map[string]any
	for _, k := range body["keys"].([]any) {
		out = append(out, k.(map[string]any))
	}
	return out
}

func wantKeyStates(t *testing.T, g *testkit.Gateway, id int64, states ...string) {
	t.Helper()
	keys := channelKeys(t, g, id)
	got := make([]string, len(keys))
	for i, k := range keys {
		got[i] = fmt.Sprint(k["state"])
	}
	if !slices.Equal(got, states) {
		t.Fatalf("key states %v, want %v", got, states)
	}
}

func TestARefusedKeyIsTakenOutWhileTheChannelGoesOnWithTheOthers(t *testing.T) {
	up := newKeyedProvider(t, badProviderKey)
	ch := healthChannel("multi", up.URL, []string{"m"}, map[string]any{"key_selection": "round_robin", "probe_interval_seconds": 60})
	ch.Key = badProviderKey + "\n" + goodProviderKey + "\n"
	g, clock := healthGateway(t, nil, ch)
	var mu sync.Mutex
	var events []routing.HealthEvent
	g.App.Router.Health.SetOnChange(func(ev routing.HealthEvent) { mu.Lock(); events = append(events, ev); mu.Unlock() })
	id := channelID(t, g, "multi")

	// Round robin starts at key 0, which the provider refuses: the call goes
	// on with key 1 of the same channel and is served.
	if code, body := chat(t, g, "m"); code != 200 {
		t.Fatalf("first call: %d %v", code, body)
	}
	if got := up.take(); !slices.Equal(got, []string{badProviderKey, goodProviderKey}) {
		t.Fatalf("first call sent %q", got)
	}
	wantKeyStates(t, g, id, "auto_disabled", "healthy")
	wantState(t, g, clock, "multi", "healthy", 0)
	keys := channelKeys(t, g, id)
	if keys[0]["masked"] != "sk-p...0000" || !strings.Contains(fmt.Sprint(keys[0]["reason"]), "401") ||
		strings.Contains(fmt.Sprint(keys), badProviderKey) {
		t.Fatalf("keys %v: want key 0 masked, refused with 401, never shown whole", keys)
	}
	mu.Lock()
	if len(events) != 1 || events[0].KeyIndex != 0 || events[0].State != "auto_disabled" || events[0].ChannelName != "multi" {
		t.Fatalf("events %+v, want one channel_down for key 0", events)
	}
	mu.Unlock()

	// The next calls use the other key only.
	for range 4 {
		if code, body := chat(t, g, "m"); code != 200 {
			t.Fatalf("later call: %d %v", code, body)
		}
	}
	if got := up.take(); !slices.Equal(got, []string{goodProviderKey, goodProviderKey, goodProviderKey, goodProviderKey}) {
		t.Fatalf("later calls sent %q", got)
	}
	resp := g.DoRaw(t, "GET", "/metrics", healthRoot, nil)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `turnpike_channel_state{channel="multi",state="healthy"} 1`) {
		t.Fatal("metrics do not show the channel healthy while a key is left")
	}

	// The probe of the refused key sends that key; it is still refused.
	clock.advance(time.Minute)
	g.App.Router.Health.RunProbes(context.Background())
	if got := up.take(); !slices.Equal(got, []string{badProviderKey}) {
		t.Fatalf("probe sent %q", got)
	}
	wantKeyStates(t, g, id, "auto_disabled", "healthy")

	// An administrator re-enables key 0: round robin uses it again.
	if code, body := g.Do(t, "PATCH", fmt.Sprintf("/api/channels/%d", id), healthRoot,
		map[string]any{"key_states": map[string]any{"9": "enabled"}}); code != 400 || !strings.Contains(fmt.Sprint(body), "key_states.9") {
		t.Fatalf("unknown key: %d %v", code, body)
	}
	up.accept(badProviderKey)
	if code, body := g.Do(t, "PATCH", fmt.Sprintf("/api/channels/%d", id), healthRoot,
		map[string]any{"key_states": map[string]any{"0": "enabled"}}); code != 200 {
		t.Fatalf("re-enable: %d %v", code, body)
	}
	wantKeyStates(t, g, id, "healthy", "healthy")
	for range 4 {
		chat(t, g, "m")
	}
	if got := up.take(); !slices.Contains(got, badProviderKey) || !slices.Contains(got, goodProviderKey) {
		t.Fatalf("after re-enabling, calls sent %q; want both keys", got)
	}
}

func TestAChannelWhoseKeysAreAllRefusedLeavesRoutingUntilAProbeBringsOneBack(t *testing.T) {
	up := newKeyedProvider(t, badProviderKey, goodProviderKey)
	ch := healthChannel("multi", up.URL, []string{"m"}, map[string]any{"probe_interval_seconds": 60})
	ch.Key = badProviderKey + "\n" + goodProviderKey
	g, clock := healthGateway(t, nil, ch)
	id := channelID(t, g, "multi")
	if code, _ := chat(t, g, "m"); code != 502 {
		t.Fatalf("every key refused answered %d, want 502", code)
	}
	wantKeyStates(t, g, id, "auto_disabled", "auto_disabled")
	wantState(t, g, clock, "multi", "auto_disabled", 0)
	up.take()
	if code, _ := chat(t, g, "m"); code != 503 || len(up.take()) != 0 {
		t.Fatalf("a channel with no usable key was used: %d", code)
	}
	up.accept(goodProviderKey)
	clock.advance(time.Minute)
	g.App.Router.Health.RunProbes(context.Background())
	if got := up.take(); len(got) != 2 {
		t.Fatalf("probes sent %q, want one per key", got)
	}
	wantKeyStates(t, g, id, "auto_disabled", "healthy")
	wantState(t, g, clock, "multi", "healthy", 0)
	if code, _ := chat(t, g, "m"); code != 200 {
		t.Fatalf("after the probe: %d", code)
	}
	if got := up.take(); !slices.Equal(got, []string{goodProviderKey}) {
		t.Fatalf("after the probe, the call sent %q", got)
	}
}
