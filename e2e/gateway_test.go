package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	rootPassword = "root-password-e2e"
	rootToken    = "root-token-e2e"
	chatModel    = "e2e-chat"
	// A normal user with an API key submits tasks to the uploaded plugin.
	userName     = "alice"
	userPassword = "alice-password-e2e"
	userKey      = "sk-e2e-alice-0123456789abcdefghijklmnop"
	videoModel   = "acme-v1"
)

// fakeUpstream is an OpenAI-style provider that records every chat request
// body and streams its answer in small pieces with pauses, so a browser can
// be seen rendering a partial answer.
type fakeUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	// chunkDelay is the pause between streamed pieces.
	chunkDelay time.Duration
}

func newFakeUpstream(t *testing.T) *fakeUpstream {
	f := &fakeUpstream{chunkDelay: 90 * time.Millisecond}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// answerFor is the deterministic reply to the n-th chat request.
func answerFor(n int) []string {
	return []string{"Reply ", fmt.Sprintf("number %d", n), ": the ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog."}
}

func (f *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"listed-by-provider"}]}`)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not here"}}`, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	n := len(f.bodies)
	f.mu.Unlock()
	if stream, _ := body["stream"].(bool); !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, n, body["model"])
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	delay := f.chunkDelay
	if n > 3 {
		// Later answers are slow, so Stop reliably lands mid-stream even on
		// a loaded machine.
		delay *= 5
	}
	for i, piece := range answerFor(n) {
		if i > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		chunk := map[string]any{"id": fmt.Sprintf("c%d", n), "object": "chat.completion.chunk", "created": 1, "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": piece}, "finish_reason": nil}}}
		data, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", data)
		fl.Flush()
	}
	fmt.Fprintf(w, `data: {"id":"c%d","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":11,"total_tokens":23}}`+"\n\n", n, body["model"])
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

// requests returns the recorded streaming chat bodies (channel tests are
// not streamed and are left out).
func (f *fakeUpstream) chats() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.bodies {
		if s, _ := b["stream"].(bool); s {
			out = append(out, b)
		}
	}
	return out
}

// startGateway runs the real gateway in-process on a loopback port with a
// fresh SQLite database, seeded with one channel to the fake upstream.
func startGateway(t *testing.T, upstreamURL string) *testkit.Gateway {
	t.Helper()
	weight := 1
	gw := testkit.Start(t,
		testkit.WithRootPassword(rootPassword),
		testkit.WithRootToken(rootToken),
		// Tasks are polled often so the browser sees them change within a test.
		testkit.WithPollInterval(200*time.Millisecond),
		testkit.WithConfig(func(c *config.Config) { c.LogLevel = "warn" }),
		testkit.WithSeed(config.Seed{
			Groups: map[string]float64{"default": 1, "vip": 0.5},
			// The default group's calls keep their content, so the log
			// detail shows it.
			GroupContent: map[string]map[string]any{"default": {"enabled": true}},
			Users:        []config.SeedUser{{Username: userName, Password: userPassword, Role: "user", Group: "default", Quota: 5_000_000}},
			Tokens:       []config.SeedToken{{Name: "alice-key", User: userName, Key: userKey}},
			Channels: []config.SeedChannel{{Name: "fake-openai", Type: "openai", BaseURL: upstreamURL, Key: "upstream-key-e2e",
				Models: []string{chatModel}, Groups: []string{"default", "vip"}, Weight: &weight, Status: "enabled"}},
			Models: map[string]config.SeedPrice{chatModel: {InputPerMTok: 1, OutputPerMTok: 2}, videoModel: {PerCall: 0.01}},
		}),
	)
	topUpRoot(t, gw)
	return gw
}

// topUpRoot gives the root user quota through the admin API, so its
// playground calls can be billed.
func topUpRoot(t *testing.T, gw *testkit.Gateway) {
	t.Helper()
	var users struct {
		Items []struct {
			ID       int64  `json:"id"`
			Username string `json:"username"`
		} `json:"items"`
	}
	rootAPI(t, gw, "GET", "/api/users", nil, &users)
	for _, u := range users.Items {
		if u.Username == "root" {
			rootAPI(t, gw, "POST", fmt.Sprintf("/api/users/%d/quota", u.ID), map[string]any{"delta": 50_000_000}, nil)
			return
		}
	}
	t.Fatal("no root user was created")
}

// rootAPI calls the admin API as root and decodes the answer into out; any
// answer but a success fails the test.
func rootAPI(t *testing.T, gw *testkit.Gateway, method, path string, body any, out any) {
	t.Helper()
	resp := gw.DoRaw(t, method, path, rootToken, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}
