package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/testkit"
)

const mcpKey = "sk-e2e-mcp-key-0001"

// TestMCPPagesInHeadlessChromium registers a tool server on the MCP servers
// page as root, grants a key on the keys page, lists and calls the key's
// tool in the MCP playground, and finds the call in the usage log.
func TestMCPPagesInHeadlessChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	bin := requireChromium(t)
	tools := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	type in struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	mcp.AddTool(tools, &mcp.Tool{Name: "add", Description: "adds a and b"}, func(_ context.Context, _ *mcp.CallToolRequest, v in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(v.A + v.B)}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools }, nil))
	t.Cleanup(up.Close)
	unlimited := int64(-1)
	gw := testkit.Start(t, testkit.WithRootPassword(rootPassword), testkit.WithRootToken(rootToken),
		testkit.WithConfig(func(c *config.Config) { c.LogLevel = "warn" }),
		testkit.WithTokens(config.SeedToken{Name: "mcp-key", User: "root", Key: mcpKey, Quota: &unlimited}))
	b := launchBrowser(t, bin)
	p := b.newPage(t)
	steps := []struct {
		name string
		run  func(p *page)
	}{
		{"log in", func(p *page) { logIn(p, gw.URL) }},
		{"register a tool server", func(p *page) {
			openPage(p, "mcpservers")
			p.click("#mcp-create")
			p.fill("dialog[open] input[name=name]", "calc")
			p.fill("dialog[open] input[name=url]", up.URL)
			submitDialog(p)
			p.waitFor(contains("#mcp-servers-list", "calc"), "the registered server")
			p.screenshot("mcp-servers")
		}},
		{"grant it to a key", func(p *page) {
			openPage(p, "keys")
			p.click("button[aria-label='MCP access of mcp-key']")
			p.fill("dialog[open] input[name=servers]", "calc")
			submitDialog(p)
			p.waitFor(contains("#keys-list", "calc"), "the key's grant")
		}},
		{"list and call the key's tool", func(p *page) {
			openPage(p, "mcpplay")
			p.fill("#mcp-key", mcpKey)
			p.click("#mcp-connect")
			p.waitVisible("button[data-tool='calc__add']")
			p.click("button[data-tool='calc__add']")
			p.fill("dialog[open] textarea[name=args]", `{"a": 2, "b": 3}`)
			submitDialog(p)
			p.waitFor(contains("#mcp-result", "5"), "the tool's answer")
			p.screenshot("mcp-playground")
		}},
		{"find the call in the usage log", func(p *page) {
			openPage(p, "logs")
			p.waitFor(contains("#logs-list", "mcp:calc"), "the tool call's usage row")
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { p.t = t; s.run(p) }) {
			return
		}
	}
	if probs := b.Problems(); len(probs) > 0 {
		t.Errorf("the page reported script errors: %v", probs)
	}
}
