package mcpgw_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall is one billed tools/call through the gateway (admit,
// reserve, the upstream exchange within the sealed session, settle), and
// the same call made straight to the upstream for comparison.
func BenchmarkToolCall(b *testing.B) {
	e := newEnv(b)
	e.grant(b, "alice-key", map[string]any{"servers": []string{"alpha"}})
	for _, c := range []struct {
		name, url, key, tool string
	}{{"gateway", e.gw.URL + "/mcp", keyAlice, "alpha__echo"}, {"direct", e.alpha.srv.URL, upSecret, "echo"}} {
		b.Run(c.name, func(b *testing.B) {
			cs := connect(b, c.url, c.key, nil)
			args := &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"text": "x"}}
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
