package testkit

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
)

const (
	testKey   = "sk-testkit-user-key"
	testModel = "kit-model"
	rootToken = "kit-root-token"
)

// upstream is an OpenAI-style provider that checks the channel key it is
// given and counts the chat calls it answers.
func upstream(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer upstream-key" {
			http.Error(w, `{"error":{"message":"bad upstream key"}}`, http.StatusUnauthorized)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"kit-model","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func seeded(t *testing.T, upstreamURL string) *Gateway {
	weight := 1
	return Start(t,
		WithRootToken(rootToken),
		WithUsers(config.SeedUser{Username: "kit", Password: "kit-password", Role: "user", Group: "default", Quota: 1_000_000}),
		WithTokens(config.SeedToken{Name: "kit-key", User: "kit", Key: testKey}),
		WithChannels(config.SeedChannel{Name: "kit-openai", Type: "openai", BaseURL: upstreamURL, Key: "upstream-key",
			Models: []string{testModel}, Groups: []string{"default"}, Weight: &weight}),
		WithModels(map[string]config.SeedPrice{testModel: {InputPerMTok: 1, OutputPerMTok: 1}}),
	)
}

func TestSeededGatewayAnswersTheSeededKeyThroughTheSeededChannel(t *testing.T) {
	up, calls := upstream(t)
	g := seeded(t, up.URL)
	chat := map[string]any{"model": testModel, "messages": []any{map[string]any{"role": "user", "content": "ping"}}}
	cases := []struct {
		name   string
		bearer string
		body   any
		want   int
	}{
		{"the seeded key reaches the upstream", testKey, chat, http.StatusOK},
		{"a raw JSON string body is sent as is", testKey, `{"model":"kit-model","messages":[{"role":"user","content":"ping"}]}`, http.StatusOK},
		{"an unknown key is refused", "sk-not-seeded", chat, http.StatusUnauthorized},
		{"no key is refused", "", chat, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := g.Do(t, "POST", "/v1/chat/completions", tc.bearer, tc.body); code != tc.want {
				t.Fatalf("status %d, want %d: %v", code, tc.want, body)
			}
		})
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the upstream answered %d calls, want the 2 allowed ones", n)
	}
}

func TestRootTokenOpensTheAdminAPI(t *testing.T) {
	g := Start(t, WithRootToken(rootToken))
	code, body := g.Do(t, "GET", "/api/users", rootToken, nil)
	if code != http.StatusOK || !strings.Contains(fmt.Sprint(body["items"]), "root") {
		t.Fatalf("GET /api/users as root: %d %v", code, body)
	}
}

func TestDoKeepsANonJSONAnswerAsRaw(t *testing.T) {
	g := Start(t)
	code, body := g.Do(t, "GET", "/", "", nil)
	raw, _ := body["raw"].(string)
	if code != http.StatusOK || !strings.Contains(strings.ToLower(raw), "<html") {
		t.Fatalf("GET /: %d %.200v", code, body)
	}
}

func TestDoRawReturnsTheWholeResponse(t *testing.T) {
	g := Start(t)
	resp := g.DoRaw(t, "GET", "/healthz", "", nil)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /healthz: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
}

func TestTheGatewayLogIsKeptAcrossARestart(t *testing.T) {
	g := Start(t)
	g.Restart()
	if n := strings.Count(g.Log(), "shutting down"); n != 1 {
		t.Fatalf("the log shows %d shutdowns, want the one before the restart:\n%s", n, g.Log())
	}
}

func TestRestartKeepsTheDatabase(t *testing.T) {
	g := Start(t, WithRootToken(rootToken))
	user := map[string]any{"username": "made-before-restart", "password": "a-long-password", "role": "user"}
	if code, body := g.Do(t, "POST", "/api/users", rootToken, user); code != http.StatusOK {
		t.Fatalf("create user: %d %v", code, body)
	}
	db := g.App.Config.Database
	g.Restart()
	if g.App.Config.Database != db {
		t.Fatalf("restarted over %s, want the same database %s", g.App.Config.Database, db)
	}
	code, body := g.Do(t, "GET", "/api/users", rootToken, nil)
	if code != http.StatusOK || !strings.Contains(fmt.Sprint(body["items"]), "made-before-restart") {
		t.Fatalf("after restart: %d %v", code, body)
	}
}

func TestStopEndsServingAndMayBeRepeated(t *testing.T) {
	g := Start(t)
	url := g.URL
	g.Stop()
	g.Stop()
	if resp, err := http.Get(url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatalf("a stopped gateway answered %d", resp.StatusCode)
	}
}

func TestOptionsReachTheConfiguration(t *testing.T) {
	g := Start(t,
		WithRootPassword("another-root-password"),
		WithPollInterval(50*time.Millisecond),
		WithGroups(map[string]float64{"vip": 0.5}),
		WithPlugins("../task/testdata/pertask.js"),
		WithConfig(func(c *config.Config) { c.RetryCount = 0 }),
	)
	c := g.App.Config
	got := fmt.Sprintf("%s %v %v %d %d", c.RootPassword, c.TaskPollInterval, c.Groups, c.RetryCount, len(c.Plugins))
	if want := "another-root-password 0.05 map[vip:0.5] 0 1"; got != want {
		t.Fatalf("config %q, want %q", got, want)
	}
	code, body := g.Do(t, "GET", "/api/plugin/task", "", nil)
	if code != http.StatusUnauthorized {
		t.Fatalf("the plugin list without credentials: %d %v", code, body)
	}
}

func TestWaitFor(t *testing.T) {
	cases := []struct {
		name      string
		timeout   time.Duration // long where the answer must not depend on a loaded machine's sleeps
		trueAfter int           // calls until cond is true; 0 never
		want      bool
		wantCalls func(int) bool
	}{
		{"true at once is checked once", time.Minute, 1, true, func(n int) bool { return n == 1 }},
		{"true on the third look", time.Minute, 3, true, func(n int) bool { return n == 3 }},
		{"never true gives up after the deadline", 50 * time.Millisecond, 0, false, func(n int) bool { return n >= 2 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			start := time.Now()
			got := WaitFor(tc.timeout, 5*time.Millisecond, func() bool {
				calls++
				return tc.trueAfter > 0 && calls >= tc.trueAfter
			})
			if got != tc.want || !tc.wantCalls(calls) {
				t.Fatalf("WaitFor = %v after %d calls, want %v", got, calls, tc.want)
			}
			if !got && time.Since(start) < tc.timeout {
				t.Fatalf("gave up after %s, before the deadline", time.Since(start))
			}
		})
	}
}

func TestLogTailKeepsTheEnd(t *testing.T) {
	var l logBuffer
	fmt.Fprint(&l, "first line\nlast line\n")
	cases := []struct {
		name string
		max  int
		want string
	}{
		{"a short log is shown whole", 100, "first line\nlast line\n"},
		{"a long log is cut at the front", 10, "…last line\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := l.Tail(tc.max); got != tc.want {
				t.Fatalf("Tail(%d) = %q, want %q", tc.max, got, tc.want)
			}
		})
	}
}
