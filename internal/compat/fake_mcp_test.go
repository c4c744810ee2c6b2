package compat

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const (
	compatRoot    = "compat-root-token"
	mcpServerName = "calc"
	mcpUpSecret   = "compat-mcp-upstream-secret"
)

// mcpFake is a tool server built with the official Go SDK's server side:
// add answers the sum of a and b. It refuses requests without the
// credential the gateway was given for it, and counts answered calls.
type mcpFake struct {
	srv      *httptest.Server
	answered atomic.Int64
	refused  atomic.Int64
}

func startMCPFake(t *testing.T) *mcpFake {
	t.Helper()
	f := &mcpFake{}
	s := mcp.NewServer(&mcp.Implementation{Name: mcpServerName, Version: "1"}, nil)
	type in struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "adds two numbers"}, func(_ context.Context, _ *mcp.CallToolRequest, v in) (*mcp.CallToolResult, any, error) {
		f.answered.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(v.A + v.B)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "secret"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		f.answered.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not for this key"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+mcpUpSecret {
			f.refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	// The gateway keeps an event stream open to every registered server
	// (it hears list_changed there) and is closed after this fake, so the
	// fake drops its clients first: Close alone waits for that stream.
	t.Cleanup(func() {
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
	return f
}

// registerMCP registers the fake with the gateway and grants the client
// key its add tool only.
func registerMCP(t *testing.T, gw *testkit.Gateway, f *mcpFake) {
	t.Helper()
	status, body := gw.Do(t, "POST", "/api/mcp/servers", compatRoot, map[string]any{"name": mcpServerName, "url": f.srv.URL,
		"headers": map[string]string{"Authorization": "Bearer " + mcpUpSecret}, "price_per_call_usd": 0.001})
	if status != 200 {
		t.Fatalf("register the MCP fake: %d %v", status, body)
	}
	_, list := gw.Do(t, "GET", "/api/tokens?page_size=100", compatRoot, nil)
	for _, it := range list["items"].([]any) {
		tk := it.(map[string]any)
		if tk["name"] == "compat-key" {
			grant := map[string]any{"servers": []string{mcpServerName}, "tools": []string{mcpServerName + "__add"}}
			if status, body := gw.Do(t, "PATCH", fmt.Sprintf("/api/tokens/%v", tk["id"]), compatRoot, map[string]any{"mcp": grant}); status != 200 {
				t.Fatalf("grant the client key: %d %v", status, body)
			}
		}
	}
}

// checkMCPBilling requires one consume row per answered tool call, each at
// 0.001 USD × 500000 units per USD.
func checkMCPBilling(t *testing.T, st store.Store, f *mcpFake) {
	t.Helper()
	if n := f.refused.Load(); n > 0 {
		t.Errorf("the MCP fake refused %d requests without its credential", n)
	}
	want := int(f.answered.Load())
	if want == 0 {
		t.Error("the MCP fake never answered a tool call")
		return
	}
	var rows []store.UsageLog
	testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
		rows, _, _ = st.Logs().List(context.Background(), store.LogFilter{Type: store.LogConsume, Model: "mcp:" + mcpServerName}, store.Page{Page: 1, PageSize: 100})
		return len(rows) >= want
	})
	if len(rows) != want {
		t.Errorf("%d MCP consume rows for %d answered tool calls", len(rows), want)
	}
	for _, r := range rows {
		if r.Quota != 500 {
			t.Errorf("MCP row %d charged %d, want 500", r.ID, r.Quota)
		}
	}
}
