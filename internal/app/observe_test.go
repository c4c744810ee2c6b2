package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// observedGateway has users alice and bob (keys sk-alice, sk-bob, sk-limited
// with rpm 1) and model m on two channels: "broken" (tried first, always
// 500) and "good" (answers with usage 3 in, 2 out).
func observedGateway(t *testing.T, opts ...testkit.Option) (*testkit.Gateway, *atomic.Int64) {
	var brokenCalls atomic.Int64
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		brokenCalls.Add(1)
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":{"message":"boom","type":"server_error"}}`)
	}))
	t.Cleanup(broken.Close)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}))
	t.Cleanup(good.Close)
	weight := 1
	settings := map[string]any{"failure_threshold": 1000}
	all := append([]testkit.Option{
		testkit.WithRootToken("root-secret"),
		testkit.WithUsers(config.SeedUser{Username: "alice", Password: "alice-pw", Role: "user", Group: "default", Quota: 1_000_000},
			config.SeedUser{Username: "bob", Password: "bob-password", Role: "user", Group: "default", Quota: 1_000_000}),
		testkit.WithTokens(config.SeedToken{Name: "a", User: "alice", Key: "sk-alice"}, config.SeedToken{Name: "b", User: "bob", Key: "sk-bob"},
			config.SeedToken{Name: "l", User: "alice", Key: "sk-limited", SeedRate: config.SeedRate{RPM: 1}}),
		testkit.WithChannels(
			config.SeedChannel{Name: "broken", Type: "openai", BaseURL: broken.URL, Key: "k", Models: []string{"m"}, Groups: []string{"default"},
				Priority: 10, Weight: &weight, Settings: settings},
			config.SeedChannel{Name: "good", Type: "openai", BaseURL: good.URL, Key: "k", Models: []string{"m"}, Groups: []string{"default"},
				Priority: 1, Weight: &weight, Settings: settings}),
		// Each call must meet the broken channel first, as a new
		// conversation does: affinity off.
		testkit.WithModels(map[string]config.SeedPrice{"m": {InputPerMTok: 1000, OutputPerMTok: 1000, Affinity: affinityOff}}),
	}, opts...)
	return testkit.Start(t, all...), &brokenCalls
}

func chatBody(model string) map[string]any {
	return map[string]any{"model": model, "messages": []map[string]any{{"role": "user", "content": "hi"}}}
}

// send makes one request with an optional X-Request-Id and returns the
// answer, its body read.
func send(t *testing.T, g *testkit.Gateway, method, path, bearer, requestID string, body any) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, g.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestEveryAnswerCarriesARequestID(t *testing.T) {
	g, _ := observedGateway(t)
	paths := []struct {
		name, method, path, bearer string
		body                       any
	}{
		{"a chat call", "POST", "/v1/chat/completions", "sk-alice", chatBody("m")},
		{"a refused chat call", "POST", "/v1/chat/completions", "", chatBody("m")},
		{"the alternate-native surface", "GET", "/v1beta/models", "sk-alice", nil},
		{"the admin API", "GET", "/api/status", "", nil},
		{"the playground", "GET", "/pg/models", "", nil},
		{"the console", "GET", "/", "", nil},
		{"an unknown route", "POST", "/nowhere", "", nil},
	}
	sent := []struct {
		name, value string
		kept        bool
	}{
		{"none sent: a generated one", "", false},
		{"a printable one is kept", "client-id_42/abc:XYZ", true},
		{"one of 128 characters is kept", strings.Repeat("r", 128), true},
		{"one of 129 characters is replaced", strings.Repeat("r", 129), false},
		{"one with a tab is replaced", "a\tb", false},
		{"one with non-ASCII bytes is replaced", "caf\u00e9", false},
	}
	for _, p := range paths {
		for _, s := range sent {
			t.Run(p.name+"/"+s.name, func(t *testing.T) {
				resp, _ := send(t, g, p.method, p.path, p.bearer, s.value, p.body)
				got := resp.Header.Get("X-Request-Id")
				if s.kept && got != s.value {
					t.Fatalf("X-Request-Id = %q, want the client's %q", got, s.value)
				}
				if !s.kept && !uuidV7.MatchString(got) {
					t.Fatalf("X-Request-Id = %q, want a generated UUIDv7", got)
				}
			})
		}
	}
}

// lastLog reads the newest usage row the bearer may see.
func lastLog(t *testing.T, g *testkit.Gateway, bearer string) map[string]any {
	t.Helper()
	status, body := g.Do(t, "GET", "/api/logs?page_size=1", bearer, nil)
	items, _ := body["items"].([]any)
	if status != 200 || len(items) != 1 {
		t.Fatalf("GET /api/logs: %d %v", status, body)
	}
	return items[0].(map[string]any)
}

func TestTheRequestIDReachesTheUsageRowAndTheLogLines(t *testing.T) {
	g, _ := observedGateway(t)
	cases := []struct {
		name, sent, model string
		status            int
		rowType           string
	}{
		{"a served call with a generated id", "", "m", 200, "consume"},
		{"a served call with the client's id", "client-req-1", "m", 200, "consume"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, g, "POST", "/v1/chat/completions", "sk-alice", tc.sent, chatBody(tc.model))
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			id := resp.Header.Get("X-Request-Id")
			row := lastLog(t, g, "root-secret")
			if row["request_id"] != id || row["type"] != tc.rowType {
				t.Fatalf("row request_id %v type %v, want %q %s", row["request_id"], row["type"], id, tc.rowType)
			}
			// The broken channel failed first: the gateway logged that
			// attempt, and the line names the request.
			if !testkit.WaitFor(2*time.Second, 10*time.Millisecond, func() bool {
				for _, line := range strings.Split(g.Log(), "\n") {
					if strings.Contains(line, "upstream attempt failed") && strings.Contains(line, "request_id="+id) {
						return true
					}
				}
				return false
			}) {
				t.Fatalf("no log line carries request_id=%s:\n%s", id, g.Log())
			}
		})
	}
}

func TestALogRowShowsHowTheCallWasRouted(t *testing.T) {
	g, _ := observedGateway(t)
	resp, body := send(t, g, "POST", "/v1/chat/completions", "sk-alice", "", chatBody("m"))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	id := int64(lastLog(t, g, "root-secret")["id"].(float64))
	path := fmt.Sprintf("/api/logs/%d", id)
	cases := []struct {
		name, bearer string
		status       int
	}{
		{"root reads any row", "root-secret", 200},
		{"the owner reads its own row", "sk-alice-session", 200},
		{"another user's row reads as not found", "sk-bob-session", 404},
		{"a missing row is not found", "root-secret", 404},
		{"anonymous is refused", "", 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := path
			if tc.name == "a missing row is not found" {
				p = fmt.Sprintf("/api/logs/%d", id+1000)
			}
			req, _ := http.NewRequest("GET", g.URL+p, nil)
			switch tc.bearer {
			case "sk-alice-session":
				req.AddCookie(g.Login(t, "alice", "alice-pw"))
			case "sk-bob-session":
				req.AddCookie(g.Login(t, "bob", "bob-password"))
			case "":
			default:
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status != 200 {
				return
			}
			var row struct {
				ID        int64  `json:"id"`
				Model     string `json:"model"`
				RequestID string `json:"request_id"`
				Other     struct {
					Attempts []struct {
						ChannelID int64  `json:"channel_id"`
						Status    int    `json:"status"`
						LatencyMS *int64 `json:"latency_ms"`
					} `json:"attempts"`
				} `json:"other"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&row); err != nil {
				t.Fatal(err)
			}
			a := row.Other.Attempts
			if row.ID != id || row.Model != "m" || len(a) != 2 || a[0].Status != 500 || a[1].Status != 200 ||
				a[0].ChannelID == a[1].ChannelID || a[0].LatencyMS == nil {
				t.Fatalf("row = %+v, want the broken channel's 500 then the good channel's 200", row)
			}
		})
	}
}

func TestMetricsFollowTheContract(t *testing.T) {
	g, _ := observedGateway(t)
	for _, c := range []struct {
		key, model string
		status     int
	}{{"sk-alice", "m", 200}, {"sk-alice", "invented-model", 0}, {"sk-limited", "m", 200}, {"sk-limited", "m", 429}} {
		resp, body := send(t, g, "POST", "/v1/chat/completions", c.key, "", chatBody(c.model))
		if c.status != 0 && resp.StatusCode != c.status {
			t.Fatalf("%s %s: status %d: %s", c.key, c.model, resp.StatusCode, body)
		}
	}
	resp, text := send(t, g, "GET", "/metrics", "", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	cases := []struct {
		name, series string
	}{
		{"served calls by surface, model, channel and status", `turnpike_requests_total{channel="good",model="m",status="200",surface="openai"} 2`},
		{"an unknown model collapses to other", `turnpike_requests_total{channel="none",model="other",`},
		{"a refused call", `turnpike_requests_total{channel="none",model="m",status="429",surface="openai"} 1`},
		{"input tokens", `turnpike_tokens_total{channel="good",kind="input",model="m"} 6`},
		{"output tokens", `turnpike_tokens_total{channel="good",kind="output",model="m"} 4`},
		{"cached tokens", `turnpike_tokens_total{channel="good",kind="cached",model="m"} 0`},
		{"reasoning tokens", `turnpike_tokens_total{channel="good",kind="reasoning",model="m"} 0`},
		{"quota charged by model", `turnpike_quota_total{model="m"} 5000`},
		{"upstream time of the failing channel", `turnpike_upstream_seconds_count{channel="broken"} 2`},
		{"upstream time of the serving channel", `turnpike_upstream_seconds_count{channel="good"} 2`},
		{"time to first byte", `turnpike_first_byte_seconds_count{channel="good"} 2`},
		{"channel state", `turnpike_channel_state{channel="good",state="healthy"} 1`},
		{"rate-limit refusals by scope", `turnpike_ratelimited_total{scope="token"} 1`},
		{"idempotency conflicts", `turnpike_idempotency_conflicts_total 0`},
		{"the Go runtime collector", `go_goroutines `},
		{"the process collector", `process_cpu_seconds_total `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(text, tc.series) {
				t.Fatalf("no %s in:\n%s", tc.series, grepLines(text, "turnpike_"))
			}
		})
	}
	if strings.Contains(text, "invented-model") {
		t.Error("a model name the client invented became a label")
	}
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
