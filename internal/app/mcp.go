package app

import (
	"context"
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/mcpgw"
)

// buildMCP makes the MCP gateway (CONTRACT §19) over the same keys,
// billing and traffic control as the model surfaces.
func (a *App) buildMCP() {
	a.mcp = mcpgw.New(mcpgw.Deps{
		Store: a.Store, Keys: a.Keys, Billing: a.Billing, Limits: a.Limits, Plans: a.Plans,
		Client: a.Tracer.Client(newUpstreamClient()), Secret: a.Config.CryptoSecret, Version: Version, Logger: a.Log,
		OnSettle: a.Notify.Spent,
	})
}

// reloadMCP makes the gateway see a change to the MCP servers or grants.
func (a *App) reloadMCP(ctx context.Context) error {
	if err := a.mcp.Reload(ctx); err != nil {
		return fmt.Errorf("load MCP servers: %w", err)
	}
	return nil
}
