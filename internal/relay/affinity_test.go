package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// countingUpstream answers every chat call after delay and counts the
// calls it got.
type countingUpstream struct {
	mu    sync.Mutex
	calls int
}

func (u *countingUpstream) server(t *testing.T, delay time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		u.calls++
		u.mu.Unlock()
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (u *countingUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls
}

// failingPins is a pin store that cannot be reached.
type failingPins struct{ gets, sets int }

func (f *failingPins) Get(context.Context, routing.Session, time.Duration) (routing.Pin, bool, error) {
	f.gets++
	return routing.Pin{}, false, errors.New("dial tcp: connection refused")
}

func (f *failingPins) Set(context.Context, routing.Session, routing.Pin, time.Duration) error {
	f.sets++
	return errors.New("dial tcp: connection refused")
}

func TestAFailingPinStoreCostsThePinNeverTheCall(t *testing.T) {
	e := newEnv(t)
	pins := &failingPins{}
	e.router.Pins = pins
	up := &countingUpstream{}
	e.channel("only", up.server(t, 0).URL, nil)
	resp := e.post("/v1/chat/completions", testKey, `{"model":"gpt-4o-mini","user":"u1","messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	if resp.StatusCode != 200 || up.count() != 1 {
		t.Fatalf("status %d after %d upstream calls", resp.StatusCode, up.count())
	}
	if _, other := e.lastConsume(); other["affinity"] != "miss" || other["strategy"] != "weighted" {
		t.Fatalf("other %v: want affinity miss, strategy weighted", other)
	}
	if pins.gets != 1 || pins.sets != 1 {
		t.Fatalf("pin store asked %d times, written %d times", pins.gets, pins.sets)
	}
}

func TestStrategiesRouteRealCalls(t *testing.T) {
	half, most := 0.5, 0.9
	cases := []struct {
		name     string
		strategy string
		// fast and slow channels' upstream costs
		fast, slow *store.ChannelCost
		delay      time.Duration
		// wantFast is the least share of calls the preferred channel gets.
		wantFast float64
	}{
		{"latency learns which channel answers first", routing.StrategyLatency, nil, nil, 150 * time.Millisecond, 0.8},
		{"cost follows the channel's discount", routing.StrategyCost,
			&store.ChannelCost{Discount: &half}, &store.ChannelCost{Discount: &most}, 0, 1},
		{"cost follows the channel's own price of the model", routing.StrategyCost,
			&store.ChannelCost{Prices: map[string]store.CostPrice{"gpt-4o-mini": {InputPerMTok: 0.05, OutputPerMTok: 0.2}}}, nil, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60,
				Affinity: &store.Affinity{Enabled: false}, Routing: &store.RoutingChoice{Strategy: tc.strategy}})
			fast, slow := &countingUpstream{}, &countingUpstream{}
			e.channel("fast", fast.server(t, 0).URL, func(c *store.Channel) { c.Cost = tc.fast })
			e.channel("slow", slow.server(t, tc.delay).URL, func(c *store.Channel) { c.Cost = tc.slow })
			const n = 40
			for i := range n {
				resp := e.post("/v1/chat/completions", testKey, fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"q%d"}]}`, i))
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("call %d: %d", i, resp.StatusCode)
				}
			}
			if share := float64(fast.count()) / n; share < tc.wantFast {
				t.Fatalf("preferred channel served %d of %d calls (slow %d)", fast.count(), n, slow.count())
			}
			if _, other := e.lastConsume(); other["strategy"] != tc.strategy {
				t.Fatalf("other.strategy %v", other["strategy"])
			}
		})
	}
}

func TestLeastBusySendsTheNextCallToTheIdleChannel(t *testing.T) {
	e := newEnv(t)
	e.price("gpt-4o-mini", store.ModelPrice{InputPerMTok: 0.15, OutputPerMTok: 0.60,
		Affinity: &store.Affinity{Enabled: false}, Routing: &store.RoutingChoice{Strategy: routing.StrategyLeastBusy}})
	release := make(chan struct{})
	var mu sync.Mutex
	busy := map[string]int{}
	hold := func(name string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			busy[name]++
			mu.Unlock()
			<-release
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	e.channel("a", hold("a").URL, nil)
	e.channel("b", hold("b").URL, nil)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := e.post("/v1/chat/completions", testKey, fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"q%d"}]}`, i))
			resp.Body.Close()
		}()
		// Each call is in flight before the next is planned.
		deadline := time.Now().Add(2 * time.Second)
		for {
			mu.Lock()
			n := busy["a"] + busy["b"]
			mu.Unlock()
			if n == i+1 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	mu.Lock()
	a, b := busy["a"], busy["b"]
	mu.Unlock()
	close(release)
	wg.Wait()
	if a != 3 || b != 3 {
		t.Fatalf("six concurrent calls split %d/%d; least_busy keeps them even", a, b)
	}
}

func TestOnlyAnswersTeachTheLatencyStrategy(t *testing.T) {
	e := newEnv(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(503)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	t.Cleanup(refusing.Close)
	up := &countingUpstream{}
	bad := e.channel("refusing", refusing.URL, func(c *store.Channel) { c.Priority = 10 })
	good := e.channel("answering", up.server(t, 0).URL, nil)
	resp := e.post("/v1/chat/completions", testKey, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	table := e.router.Table()
	if d := table.Channel(bad.ID).FirstByte(); d != 0 {
		t.Fatalf("a 503 counted as a first byte of %v", d)
	}
	if table.Channel(good.ID).FirstByte() == 0 {
		t.Fatal("the answer that served taught nothing")
	}
}

func TestAnotherUserSendingTheSameSessionNeverSharesItsPin(t *testing.T) {
	const bobKey = "sk-relay-bob-key"
	cases := []struct {
		name, path, body string
		header           map[string]string
	}{
		{"the prompt's prefix", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"secret system prompt"},{"role":"user","content":"hi"}]}`, nil},
		{"X-Turnpike-Session", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, map[string]string{SessionHeader: "alice-session"}},
		{"prompt_cache_key", "/v1/chat/completions", `{"model":"gpt-4o-mini","prompt_cache_key":"alice-pck","messages":[{"role":"user","content":"hi"}]}`, nil},
		{"user", "/v1/chat/completions", `{"model":"gpt-4o-mini","user":"alice-user","messages":[{"role":"user","content":"hi"}]}`, nil},
		{"metadata.user_id", "/v1/chat/completions", `{"model":"gpt-4o-mini","metadata":{"user_id":"alice-meta"},"messages":[{"role":"user","content":"hi"}]}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.router.Pins = routing.NewMemoryPins(1000)
			e.otherKey(bobKey)
			e.channel("only", (&countingUpstream{}).server(t, 0).URL, nil)
			send := func(key string) map[string]any {
				t.Helper()
				h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
				for k, v := range tc.header {
					h[k] = v
				}
				resp := e.request(tc.path, h, tc.body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				_, other := e.lastConsume()
				return other
			}
			for i, want := range []string{"miss", "hit"} {
				if got := send(testKey)["affinity"]; got != want {
					t.Fatalf("alice's call %d: affinity %v, want %s", i, got, want)
				}
			}
			if got := send(bobKey)["affinity"]; got != "miss" {
				t.Fatalf("bob sending alice's session sees affinity %v; want miss", got)
			}
		})
	}
}
