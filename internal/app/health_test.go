package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/app"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store/testdb"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

// switchUpstream is a fake OpenAI-compatible upstream whose answer is
// switched while the test runs: ok, 401, 429 (with Retry-After when
// retryAfter is set), 500 or hang.
type switchUpstream struct {
	*httptest.Server
	mode       atomic.Value // string
	retryAfter atomic.Value // string
	chats      atomic.Int32
	embeds     atomic.Int32
}

func newSwitchUpstream(t *testing.T) *switchUpstream {
	u := &switchUpstream{}
	u.set("ok")
	u.retryAfter.Store("")
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *switchUpstream) set(mode string) { u.mode.Store(mode) }

func (u *switchUpstream) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	embed := strings.HasSuffix(r.URL.Path, "/embeddings")
	if embed {
		u.embeds.Add(1)
	} else {
		u.chats.Add(1)
	}
	w.Header().Set("Content-Type", "application/json")
	switch u.mode.Load().(string) {
	case "401":
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	case "429":
		if ra := u.retryAfter.Load().(string); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.WriteHeader(429)
		fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	case "500":
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":{"message":"the server broke","type":"server_error"}}`)
	case "hang":
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	default:
		if embed {
			fmt.Fprintf(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":%q,"usage":{"prompt_tokens":1000,"total_tokens":1000}}`, req.Model)
			return
		}
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":1000,"total_tokens":2000}}`, req.Model)
	}
}

// manualClock is the health clock of a test: it moves only when told.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *manualClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

const (
	healthKey  = "sk-health-test"
	healthRoot = "root-health-test"
)

// healthSettings: threshold 2, cool-down 10 s doubling to 40 s, probes
// every minute; a hanging upstream fails after 0.3 s.
var healthSettings = map[string]any{"failure_threshold": 2, "cooldown_seconds": 10, "max_cooldown_seconds": 40,
	"probe_interval_seconds": 60, "first_byte_timeout_seconds": 0.3}

func healthChannel(name, url string, models []string, settings map[string]any) config.SeedChannel {
	weight := 1
	return config.SeedChannel{Name: name, Type: "openai", BaseURL: url, Key: "upstream-key-" + name, Models: models,
		Groups: []string{"default"}, Weight: &weight, Settings: settings}
}

// affinityOff is a model entry's affinity turned off.
var affinityOff = map[string]any{"enabled": false}

func healthGateway(t *testing.T, extra []testkit.Option, channels ...config.SeedChannel) (*testkit.Gateway, *manualClock) {
	opts := append([]testkit.Option{
		testkit.WithRootToken(healthRoot),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "pw-longer", Role: "user", Group: "default", Quota: 10_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "k", User: "alice", Key: healthKey}),
		testkit.WithChannels(channels...),
		// Every call of these tests is the same conversation: cache
		// affinity would keep it on one key, and the tests are about
		// how health spreads calls (affinity has its own tests).
		testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1, OutputPerMTok: 1, Affinity: affinityOff},
			"text-embedding-3-small": {InputPerMTok: 1}}),
	}, extra...)
	g := testkit.Start(t, opts...)
	clock := &manualClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	g.App.Router.Health.SetClock(clock.Now)
	return g, clock
}

func chat(t *testing.T, g *testkit.Gateway, model string) (int, map[string]any) {
	t.Helper()
	return g.Do(t, "POST", "/v1/chat/completions", healthKey, map[string]any{"model": model,
		"messages": []map[string]any{{"role": "user", "content": "hi"}}})
}

// health reads the channel's health from the admin API.
func health(t *testing.T, g *testkit.Gateway, name string) map[string]any {
	t.Helper()
	code, body := g.Do(t, "GET", "/api/channels", healthRoot, nil)
	if code != 200 {
		t.Fatalf("list channels: %d %v", code, body)
	}
	for _, it := range body["items"].([]any) {
		c := it.(map[string]any)
		if c["name"] == name {
			return c["health"].(map[string]any)
		}
	}
	t.Fatalf("channel %s not listed: %v", name, body)
	return nil
}

func channelID(t *testing.T, g *testkit.Gateway, name string) int64 {
	t.Helper()
	_, body := g.Do(t, "GET", "/api/channels", healthRoot, nil)
	for _, it := range body["items"].([]any) {
		if c := it.(map[string]any); c["name"] == name {
			return int64(c["id"].(float64))
		}
	}
	t.Fatalf("channel %s not listed", name)
	return 0
}

func wantState(t *testing.T, g *testkit.Gateway, clock *manualClock, name, state string, until time.Duration) {
	t.Helper()
	h := health(t, g, name)
	if h["state"] != state {
		t.Fatalf("state %v, want %s (health %v)", h["state"], state, h)
	}
	if until == 0 {
		if h["until"] != nil {
			t.Fatalf("until %v, want none", h["until"])
		}
		return
	}
	got, err := time.Parse(time.RFC3339, fmt.Sprint(h["until"]))
	if err != nil || !got.Equal(clock.Now().Add(until)) {
		t.Fatalf("until %v, want now + %s (%s)", h["until"], until, clock.Now().Add(until).Format(time.RFC3339))
	}
	if _, err := time.Parse(time.RFC3339, fmt.Sprint(h["since"])); err != nil {
		t.Fatalf("since %v is not RFC 3339", h["since"])
	}
}

func TestChannelHealthStates(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream)
	}{
		{"failures below the threshold keep the channel healthy, reaching it cools it, and the cool-down doubles to the maximum", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("500")
			if code, _ := chat(t, g, "m"); code != 502 {
				t.Fatalf("first failure answered %d, want 502", code)
			}
			wantState(t, g, clock, "c", "healthy", 0)
			chat(t, g, "m")
			wantState(t, g, clock, "c", "cooling", 10*time.Second)
			before := up.chats.Load()
			if code, _ := chat(t, g, "m"); code != 503 || up.chats.Load() != before {
				t.Fatalf("a cooling channel was used: %d, upstream calls %d → %d", code, before, up.chats.Load())
			}
			for _, want := range []time.Duration{20 * time.Second, 40 * time.Second, 40 * time.Second} {
				clock.advance(time.Hour)
				chat(t, g, "m") // one failure after the cool-down cools it again, doubled
				wantState(t, g, clock, "c", "cooling", want)
			}
			up.set("ok")
			clock.advance(time.Hour)
			if code, body := chat(t, g, "m"); code != 200 {
				t.Fatalf("recovered channel answered %d %v", code, body)
			}
			wantState(t, g, clock, "c", "healthy", 0)
			up.set("500") // the streak starts over at the first cool-down
			chat(t, g, "m")
			chat(t, g, "m")
			wantState(t, g, clock, "c", "cooling", 10*time.Second)
		}},
		{"a 429 cools at once for its Retry-After", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("429")
			up.retryAfter.Store("7")
			if code, _ := chat(t, g, "m"); code != 429 {
				t.Fatalf("answered %d, want 429", code)
			}
			wantState(t, g, clock, "c", "cooling", 7*time.Second)
		}},
		{"a 429 without Retry-After cools for cooldown_seconds", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("429")
			chat(t, g, "m")
			wantState(t, g, clock, "c", "cooling", 10*time.Second)
		}},
		{"a hanging upstream counts as a failure", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("hang")
			if code, _ := chat(t, g, "m"); code != 504 {
				t.Fatalf("answered %d, want 504", code)
			}
			chat(t, g, "m")
			wantState(t, g, clock, "c", "cooling", 10*time.Second)
		}},
		{"a 401 auto-disables and only a successful probe brings the channel back", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("401")
			if code, _ := chat(t, g, "m"); code != 502 {
				t.Fatalf("answered %d, want 502", code)
			}
			wantState(t, g, clock, "c", "auto_disabled", 0)
			if r := health(t, g, "c")["reason"]; !strings.Contains(fmt.Sprint(r), "401") {
				t.Fatalf("reason %v does not name the status", r)
			}
			up.set("ok")
			clock.advance(59 * time.Second)
			g.App.Router.Health.RunProbes(context.Background())
			before := up.chats.Load()
			if code, _ := chat(t, g, "m"); code != 503 || up.chats.Load() != before {
				t.Fatalf("an auto-disabled channel was used before its probe: %d", code)
			}
			wantState(t, g, clock, "c", "auto_disabled", 0)
			clock.advance(time.Second)
			g.App.Router.Health.RunProbes(context.Background())
			if up.chats.Load() != before+1 {
				t.Fatalf("probe calls %d, want 1", up.chats.Load()-before)
			}
			wantState(t, g, clock, "c", "healthy", 0)
			if code, _ := chat(t, g, "m"); code != 200 {
				t.Fatalf("probed channel answered %d", code)
			}
		}},
		{"a failed probe keeps the channel auto-disabled until the next interval", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("401")
			chat(t, g, "m")
			clock.advance(time.Minute)
			before := up.chats.Load()
			g.App.Router.Health.RunProbes(context.Background())
			g.App.Router.Health.RunProbes(context.Background())
			if up.chats.Load() != before+1 {
				t.Fatalf("probes %d in one interval, want 1", up.chats.Load()-before)
			}
			wantState(t, g, clock, "c", "auto_disabled", 0)
		}},
		{"an administrator's disabled channel is left alone", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("401")
			chat(t, g, "m")
			id := channelID(t, g, "c")
			if code, body := g.Do(t, "PATCH", fmt.Sprintf("/api/channels/%d", id), healthRoot, map[string]any{"status": "disabled"}); code != 200 {
				t.Fatalf("disable: %d %v", code, body)
			}
			up.set("ok")
			clock.advance(time.Hour)
			before := up.chats.Load()
			g.App.Router.Health.RunProbes(context.Background())
			if up.chats.Load() != before {
				t.Fatal("a disabled channel was probed")
			}
			wantState(t, g, clock, "c", "disabled", 0)
		}},
		{"re-enabling a channel resets its health", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("401")
			chat(t, g, "m")
			up.set("ok")
			id := channelID(t, g, "c")
			if code, body := g.Do(t, "PATCH", fmt.Sprintf("/api/channels/%d", id), healthRoot, map[string]any{"status": "enabled"}); code != 200 {
				t.Fatalf("enable: %d %v", code, body)
			}
			wantState(t, g, clock, "c", "healthy", 0)
			if code, _ := chat(t, g, "m"); code != 200 {
				t.Fatalf("re-enabled channel answered %d", code)
			}
		}},
		{"the metrics show each channel's state", func(t *testing.T, g *testkit.Gateway, clock *manualClock, up *switchUpstream) {
			up.set("401")
			chat(t, g, "m")
			resp := g.DoRaw(t, "GET", "/metrics", healthRoot, nil)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, line := range []string{`turnpike_channel_state{channel="c",state="auto_disabled"} 1`,
				`turnpike_channel_state{channel="c",state="healthy"} 0`} {
				if !strings.Contains(string(raw), line) {
					t.Fatalf("metrics lack %s", line)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newSwitchUpstream(t)
			g, clock := healthGateway(t, nil, healthChannel("c", up.URL, []string{"m"}, healthSettings))
			tc.run(t, g, clock, up)
		})
	}
}

func TestHealthEventsReachTheObserverOncePerTransition(t *testing.T) {
	up := newSwitchUpstream(t)
	g, clock := healthGateway(t, nil, healthChannel("c", up.URL, []string{"m"}, healthSettings))
	var mu sync.Mutex
	var events []routing.HealthEvent
	g.App.Router.Health.SetOnChange(func(ev routing.HealthEvent) { mu.Lock(); events = append(events, ev); mu.Unlock() })
	up.set("500")
	for range 4 {
		chat(t, g, "m")
		clock.advance(time.Hour)
	}
	up.set("ok")
	chat(t, g, "m")
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || events[0].State != "cooling" || events[0].Up || events[0].ChannelName != "c" ||
		events[1].State != "healthy" || !events[1].Up {
		t.Fatalf("events %+v, want one down (cooling) and one up", events)
	}
}

func TestEmbeddingsOnlyChannelIsProbedWithEmbeddings(t *testing.T) {
	up := newSwitchUpstream(t)
	g, clock := healthGateway(t, nil, healthChannel("e", up.URL, []string{"text-embedding-3-small"}, healthSettings))
	up.set("401")
	g.Do(t, "POST", "/v1/embeddings", healthKey, map[string]any{"model": "text-embedding-3-small", "input": "hi"})
	wantState(t, g, clock, "e", "auto_disabled", 0)
	up.set("ok")
	chats, embeds := up.chats.Load(), up.embeds.Load()
	clock.advance(time.Minute)
	g.App.Router.Health.RunProbes(context.Background())
	if up.chats.Load() != chats || up.embeds.Load() != embeds+1 {
		t.Fatalf("probe sent %d chat and %d embeddings calls, want 0 and 1", up.chats.Load()-chats, up.embeds.Load()-embeds)
	}
	wantState(t, g, clock, "e", "healthy", 0)
}

func TestBadHealthSettingsAreRefusedNamingTheField(t *testing.T) {
	up := newSwitchUpstream(t)
	g, _ := healthGateway(t, nil, healthChannel("c", up.URL, []string{"m"}, nil))
	cases := []struct {
		name     string
		settings map[string]any
		field    string
	}{
		{"a negative threshold", map[string]any{"failure_threshold": -1}, "settings.failure_threshold"},
		{"a non-numeric cool-down", map[string]any{"cooldown_seconds": "soon"}, "settings.cooldown_seconds"},
		{"a maximum below the cool-down", map[string]any{"cooldown_seconds": 60, "max_cooldown_seconds": 30}, "settings.max_cooldown_seconds"},
		{"a zero probe interval", map[string]any{"probe_interval_seconds": 0}, "settings.probe_interval_seconds"},
		{"a status outside 100-599", map[string]any{"retry_statuses": []any{500, 600}}, "settings.retry_statuses"},
		{"statuses that are not a list", map[string]any{"disable_statuses": 401}, "settings.disable_statuses"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := g.Do(t, "POST", "/api/channels", healthRoot, map[string]any{"name": fmt.Sprintf("bad%d", i),
				"type": "openai", "base_url": up.URL, "models": []string{"m"}, "settings": tc.settings})
			if code != 400 || !strings.Contains(fmt.Sprint(body), tc.field) {
				t.Fatalf("got %d %v, want 400 naming %s", code, body, tc.field)
			}
		})
	}
	t.Run("a bad seed stops the start", func(t *testing.T) {
		bad := healthChannel("seeded", up.URL, []string{"m"}, map[string]any{"failure_threshold": -3})
		g2 := testkit.Start(t, testkit.WithRootToken(healthRoot))
		g2.Stop()
		cfg := g2.App.Config
		cfg.Seed.Channels = []config.SeedChannel{bad}
		if err := startErr(cfg); err == nil || !strings.Contains(err.Error(), "settings.failure_threshold") {
			t.Fatalf("start with a bad seed: %v", err)
		}
	})
}

func TestFallbackModelServesPricedAtItsOwnPrice(t *testing.T) {
	cases := []struct {
		name       string
		fbPrice    float64
		wantCharge int64
	}{
		// 2,000 tokens × price per Mtok × 500,000 quota per dollar.
		{"a dearer fallback is charged its own price", 3, 3000},
		{"a cheaper fallback is charged its own price", 0.5, 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad, good := newSwitchUpstream(t), newSwitchUpstream(t)
			bad.set("500")
			g, _ := healthGateway(t, []testkit.Option{testkit.WithModels(map[string]config.SeedPrice{
				"big":   {InputPerMTok: 1, OutputPerMTok: 1, Fallbacks: []string{"missing", "small"}},
				"small": {InputPerMTok: tc.fbPrice, OutputPerMTok: tc.fbPrice},
			})}, healthChannel("big-ch", bad.URL, []string{"big"}, nil), healthChannel("small-ch", good.URL, []string{"small"}, nil))
			before := userQuota(t, g)
			code, body := chat(t, g, "big")
			if code != 200 || body["model"] != "small" {
				t.Fatalf("answered %d model %v, want 200 from small", code, body["model"])
			}
			var row map[string]any
			if !testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
				_, logs := g.Do(t, "GET", "/api/logs?type=consume", healthRoot, nil)
				items, _ := logs["items"].([]any)
				if len(items) == 0 {
					return false
				}
				row = items[0].(map[string]any)
				return true
			}) {
				t.Fatal("no consume row")
			}
			other, _ := row["other"].(map[string]any)
			if row["model"] != "small" || other["fallback_from"] != "big" || int64(row["quota"].(float64)) != tc.wantCharge {
				t.Fatalf("row model %v fallback_from %v quota %v, want small, big, %d", row["model"], other["fallback_from"], row["quota"], tc.wantCharge)
			}
			if spent := before - userQuota(t, g); spent != tc.wantCharge {
				t.Fatalf("balance went down by %d, want %d", spent, tc.wantCharge)
			}
		})
	}
}

func TestFallbacksAreSavedThroughThePriceAPI(t *testing.T) {
	up := newSwitchUpstream(t)
	g, _ := healthGateway(t, nil, healthChannel("c", up.URL, []string{"m"}, nil))
	code, body := g.Do(t, "PUT", "/api/models/m", healthRoot, map[string]any{"input_per_mtok": 1, "fallbacks": []string{"m2", "m3"}})
	if code != 200 || fmt.Sprint(body["fallbacks"]) != "[m2 m3]" {
		t.Fatalf("put: %d %v", code, body)
	}
	if code, body := g.Do(t, "PUT", "/api/models/m", healthRoot, map[string]any{"fallbacks": []string{"m"}}); code != 400 || !strings.Contains(fmt.Sprint(body), "fallbacks") {
		t.Fatalf("a model falling back to itself: %d %v", code, body)
	}
}

func userQuota(t *testing.T, g *testkit.Gateway) int64 {
	t.Helper()
	_, body := g.Do(t, "GET", "/api/users?page_size=100", healthRoot, nil)
	for _, it := range body["items"].([]any) {
		if u := it.(map[string]any); u["username"] == "alice" {
			return int64(u["quota"].(float64))
		}
	}
	t.Fatal("alice not listed")
	return 0
}

func TestTwoNodesSharingPostgreSQLSeeTheSameHealth(t *testing.T) {
	base := os.Getenv("TURNPIKE_TEST_POSTGRES")
	if base == "" {
		t.Skip("set TURNPIKE_TEST_POSTGRES (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run two nodes on one database")
	}
	dsn := testdb.Postgres(t, base)
	up := newSwitchUpstream(t)
	useDB := testkit.WithConfig(func(c *config.Config) { c.Database = dsn })
	a, _ := healthGateway(t, []testkit.Option{useDB}, healthChannel("c", up.URL, []string{"m"}, healthSettings))
	b, _ := healthGateway(t, []testkit.Option{useDB}, healthChannel("c", up.URL, []string{"m"}, healthSettings))
	var mu sync.Mutex
	events := map[string]int{}
	for name, g := range map[string]*testkit.Gateway{"a": a, "b": b} {
		g.App.Router.Health.SetOnChange(func(routing.HealthEvent) { mu.Lock(); events[name]++; mu.Unlock() })
	}
	up.set("401")
	chat(t, a, "m")
	if h := health(t, a, "c"); h["state"] != "auto_disabled" {
		t.Fatalf("node a: %v", h)
	}
	if !testkit.WaitFor(6*time.Second, 100*time.Millisecond, func() bool { return health(t, b, "c")["state"] == "auto_disabled" }) {
		t.Fatalf("node b still sees %v", health(t, b, "c"))
	}
	before := up.chats.Load()
	if code, _ := chat(t, b, "m"); code != 503 || up.chats.Load() != before {
		t.Fatalf("node b used the channel node a auto-disabled: %d", code)
	}
	// An administrator's reset on b reaches a too.
	id := channelID(t, b, "c")
	up.set("ok")
	b.Do(t, "PATCH", fmt.Sprintf("/api/channels/%d", id), healthRoot, map[string]any{"status": "enabled"})
	if !testkit.WaitFor(6*time.Second, 100*time.Millisecond, func() bool { return health(t, a, "c")["state"] == "healthy" }) {
		t.Fatalf("node a still sees %v", health(t, a, "c"))
	}
	mu.Lock()
	defer mu.Unlock()
	if events["a"] != 1 || events["b"] != 1 {
		t.Fatalf("events per node %v, want the down on a and the up on b only", events)
	}
}

// startErr builds and prepares a gateway from cfg and reports the error.
func startErr(cfg config.Config) error {
	ctx := context.Background()
	a, err := app.New(ctx, cfg, io.Discard)
	if err != nil {
		return err
	}
	defer func() { _ = a.Writer.Close(ctx); a.Store.Close() }()
	_, err = a.Prepare(ctx)
	return err
}

func TestFallbackServesWhileTheRequestedModelHasNoChannelLeft(t *testing.T) {
	bad, good := newSwitchUpstream(t), newSwitchUpstream(t)
	bad.set("401")
	g, _ := healthGateway(t, []testkit.Option{testkit.WithModels(map[string]config.SeedPrice{
		"big":   {InputPerMTok: 1, OutputPerMTok: 1, Fallbacks: []string{"small"}},
		"small": {InputPerMTok: 1, OutputPerMTok: 1},
	})}, healthChannel("big-ch", bad.URL, []string{"big"}, nil), healthChannel("small-ch", good.URL, []string{"small"}, nil))
	for i := range 2 {
		if code, body := chat(t, g, "big"); code != 200 || body["model"] != "small" {
			t.Fatalf("call %d answered %d %v", i, code, body)
		}
	}
	if bad.chats.Load() != 1 {
		t.Fatalf("the auto-disabled channel was tried %d times, want once", bad.chats.Load())
	}
	good.set("500")
	if code, _ := chat(t, g, "big"); code != 502 {
		t.Fatalf("with every fallback failing too the answer is %d, want 502", code)
	}
}
