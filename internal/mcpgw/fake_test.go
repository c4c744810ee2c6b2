package mcpgw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeTools is an MCP tool server built with the SDK's own server side. It
// checks the credential the gateway must send, records what reached it,
// and answers:
//   - echo: the text it was given;
//   - fail: a tool error (isError), which is an answer, not an outage;
//   - slow: two progress notifications, then "done";
//   - hang: nothing until the client gives up.
//
// A request whose body holds "explode" is refused with HTTP 500 before
// the SDK sees it: an upstream outage.
type fakeTools struct {
	name   string
	srv    *httptest.Server
	server *mcp.Server
	secret string

	// stop ends a hanging tool when the test ends.
	stop chan struct{}

	mu         sync.Mutex
	problems   []string
	calls      []string          // tools called, in order
	sessions   map[string]string // tool call -> upstream session id it came in
	initialize int
}

func startFake(t testing.TB, name, secret string) *fakeTools {
	t.Helper()
	f := &fakeTools{name: name, secret: secret, sessions: map[string]string{}, stop: make(chan struct{})}
	f.server = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	type textIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(f.server, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		f.record("echo", req.Session.ID())
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + in.Text}}}, nil, nil
	})
	mcp.AddTool(f.server, &mcp.Tool{Name: "fail"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		f.record("fail", req.Session.ID())
		return nil, nil, errors.New("the tool failed on purpose")
	})
	mcp.AddTool(f.server, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		f.record("slow", req.Session.ID())
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 2; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2, Message: fmt.Sprintf("step %d", i)})
				time.Sleep(50 * time.Millisecond)
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	mcp.AddTool(f.server, &mcp.Tool{Name: "hang"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		f.record("hang", req.Session.ID())
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-f.stop:
			return nil, nil, errors.New("the fake stopped")
		}
	})
	f.server.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + name}}}}, nil
	})
	f.server.AddResource(&mcp.Resource{Name: "readme", URI: "file:///" + name + "/readme"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "readme of " + name}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server }, nil)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer "+f.secret {
			f.problem("request without the configured credential: Authorization %q", got)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			f.mu.Lock()
			f.initialize++
			f.mu.Unlock()
		}
		if bytes.Contains(body, []byte("explode")) {
			http.Error(w, "upstream outage", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(f.stop)
		f.srv.Close()
	})
	return f
}

func (f *fakeTools) record(tool, session string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, tool)
	f.sessions[tool] = session
}

func (f *fakeTools) problem(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

func (f *fakeTools) snapshot() (calls, problems []string, inits int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...), append([]string(nil), f.problems...), f.initialize
}

// rawRPC posts one JSON-RPC message to the gateway as a client that takes
// only JSON answers, and returns the status, the session id answered and
// the decoded body.
func rawRPC(t *testing.T, url, key, sid, method string, params any) (int, http.Header, map[string]any) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &out) != nil {
		t.Fatalf("%s: answer is not JSON: %d %s", method, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, out
}

var initParams = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
	"clientInfo": map[string]any{"name": "test", "version": "1"}}

// bearer adds an API key to every request of an SDK client.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an SDK client session with the gateway as key.
func connect(t testing.TB, url, key string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{key}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}
