package mcpgw_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

func TestASessionOpenedOnOneNodeIsServedByAnotherWithItsUpstreamSession(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha"}})
	e.grant(t, "bob-key", map[string]any{"servers": []string{"alpha"}})
	other := testkit.Start(t, testkit.WithRootToken(root), testkit.WithConfig(func(c *config.Config) { c.Database = e.gw.App.Config.Database }))

	status, h, body := rawRPC(t, e.gw.URL+"/mcp", keyAlice, "", "initialize", initParams)
	sid := h.Get("Mcp-Session-Id")
	if status != 200 || sid == "" {
		t.Fatalf("initialize on node 1: %d %v, session %q", status, body, sid)
	}
	if strings.Contains(sid, "alpha") || strings.Contains(sid, "alice") {
		t.Errorf("the session id shows what it carries: %s", sid)
	}
	_, _, inits := e.alpha.snapshot()
	status, _, body = rawRPC(t, other.URL+"/mcp", keyAlice, sid, "tools/call", map[string]any{"name": "alpha__echo", "arguments": map[string]any{"text": "from node 2"}})
	if status != 200 || body["error"] != nil {
		t.Fatalf("tools/call on node 2 within node 1's session: %d %v", status, body)
	}
	calls, problems, after := e.alpha.snapshot()
	if after != inits || !slices.Equal(calls, []string{"echo"}) || len(problems) > 0 {
		t.Errorf("node 2 opened %d more upstream sessions (want none: the sealed id carries node 1's); calls %v, problems %v", after-inits, calls, problems)
	}
	e.alpha.mu.Lock()
	used := e.alpha.sessions["echo"]
	e.alpha.mu.Unlock()
	if used == "" {
		t.Error("the upstream saw the call outside a session")
	}

	if status, _, _ := rawRPC(t, other.URL+"/mcp", keyBob, sid, "tools/list", nil); status != http.StatusNotFound {
		t.Errorf("another key with this session id: %d, want 404", status)
	}
	if status, _, _ := rawRPC(t, other.URL+"/mcp", keyAlice, sid[:len(sid)-4]+"AAAA", "tools/list", nil); status != http.StatusNotFound {
		t.Errorf("a damaged session id: %d, want 404", status)
	}
	if status, _, _ := rawRPC(t, other.URL+"/mcp/alpha", keyAlice, sid, "tools/list", nil); status != http.StatusNotFound {
		t.Errorf("a /mcp session on /mcp/alpha: %d, want 404", status)
	}
}

func TestAToolListChangeIsSeenWithoutWaitingForTheCache(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha"}})
	cs := connect(t, e.gw.URL+"/mcp", keyAlice, nil)
	if got := toolNames(t, cs); slices.Contains(got, "alpha__added") {
		t.Fatalf("before the change: %v", got)
	}
	mcp.AddTool(e.alpha.server, &mcp.Tool{Name: "added"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil, nil
	})
	var got []string
	if !testkit.WaitFor(5*time.Second, 50*time.Millisecond, func() bool {
		got = toolNames(t, cs)
		return slices.Contains(got, "alpha__added")
	}) {
		t.Fatalf("after notifications/tools/list_changed the list is still %v", got)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__added", Arguments: map[string]any{}})
	if err != nil || textOf(res) != "new" {
		t.Errorf("the added tool: %v %v", res, err)
	}
}

func TestPromptsAndResourcesPassThroughNamespaced(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha", "beta"}})
	cs := connect(t, e.gw.URL+"/mcp", keyAlice, nil)
	ctx := context.Background()
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 2 || prompts.Prompts[0].Name != "alpha__greet" || prompts.Prompts[1].Name != "beta__greet" {
		t.Fatalf("prompts/list: %v %v", prompts, err)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "beta__greet"})
	if err != nil || p.Messages[0].Content.(*mcp.TextContent).Text != "hello from beta" {
		t.Fatalf("prompts/get: %v %v", p, err)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 2 || res.Resources[1].Name != "beta__readme" {
		t.Fatalf("resources/list: %v %v", res, err)
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[1].URI})
	if err != nil || r.Contents[0].Text != "readme of beta" {
		t.Fatalf("resources/read: %v %v", r, err)
	}
}

func TestAServerThatIsDownIsLeftOutAndNamedWhileOthersWork(t *testing.T) {
	e := newEnv(t)
	e.grant(t, "alice-key", map[string]any{"servers": []string{"alpha", "beta"}})
	e.beta.srv.Close()
	cs := connect(t, e.gw.URL+"/mcp", keyAlice, nil)
	if got := toolNames(t, cs); len(got) != 4 || !strings.HasPrefix(got[0], "alpha__") {
		t.Errorf("tools/list with beta down: %v, want alpha's tools", got)
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "MCP server beta") {
		t.Errorf("a call to the server that is down: %v, want an error naming beta", err)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}}); err != nil || textOf(res) != "alpha: x" {
		t.Errorf("alpha keeps working: %v %v", res, err)
	}
}
