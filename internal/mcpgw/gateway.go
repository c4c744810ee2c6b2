// Package mcpgw is the MCP gateway (CONTRACT §19): /mcp and /mcp/<server>
// speak Streamable HTTP to API keys through the official Go SDK's server,
// in front of the MCP servers the root registers. What a key may list and
// call is its grants'; each tools/call is admitted, reserved, settled or
// refunded through the admission seam like a model call; the session id is
// sealed, so any node serves any request of a session.
package mcpgw

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/hashicorp/golang-lru/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Deps is what the gateway works with.
type Deps struct {
	Store   store.Store
	Keys    *auth.Keys
	Billing *billing.Service
	// Limits is traffic control; nil counts nothing.
	Limits *ratelimit.Service
	// Plans are the subscription plans (nil: none).
	Plans *plans.Service
	// Client reaches the registered servers.
	Client *http.Client
	// Secret is CRYPTO_SECRET, which seals session ids.
	Secret  string
	Version string
	Logger  *slog.Logger
	// OnSettle, when set, hears every charged call (balance alerts).
	OnSettle func(userID, tokenID int64)
}

// Gateway serves /mcp and /mcp/<server>.
type Gateway struct {
	d        Deps
	log      *slog.Logger
	reg      atomic.Pointer[registry]
	sessions sessions
	up       *upstream
	tools    *toolCache
	// replaced holds upstream sessions this node opened again for a client
	// session whose sealed one the upstream forgot (or never had), by
	// client session and server, so the next request reuses them.
	replaced *lru.Cache[string, upSession]
	// sse and json are the SDK's handlers over the one server: sse answers
	// clients that accept an event stream, json those that accept only JSON.
	sse, json http.Handler
}

// New builds the gateway; Reload must run before it serves.
func New(d Deps) *Gateway {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{d: d, log: log, sessions: newSessions(d.Secret)}
	g.up = &upstream{client: d.Client, version: d.Version, node: rand.Text()[:8]}
	g.tools = newToolCache(d.Client, d.Version, log)
	g.replaced, _ = lru.New[string, upSession](16_384)
	g.reg.Store(&registry{byName: map[string]*server{}, grants: map[grantKey]store.MCPGrant{}})
	sdkLog := slog.New(quiet{log.Handler()})
	srv := g.newServer(sdkLog)
	for _, h := range []struct {
		dst  *http.Handler
		json bool
	}{{&g.sse, false}, {&g.json, true}} {
		*h.dst = withCall(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: h.json, Logger: sdkLog, DisableLocalhostProtection: true}))
	}
	return g
}

// Reload reads the registry and the grants again: after a change through
// the admin API, on another node's announcement and periodically.
func (g *Gateway) Reload(ctx context.Context) error {
	reg, err := loadRegistry(ctx, g.d.Store.MCP())
	if err != nil {
		return err
	}
	g.reg.Store(reg)
	g.tools.forgetExcept(reg)
	return nil
}

// Register mounts the MCP surfaces.
func (g *Gateway) Register(mux *http.ServeMux) {
	mux.HandleFunc("/mcp", g.serve)
	mux.HandleFunc("/mcp/{server}", g.serve)
}

// Close ends the node's watching sessions with the upstreams.
func (g *Gateway) Close() { g.tools.close() }

// supportedVersions are the protocol versions the gateway negotiates: every
// one the official TypeScript and Python SDKs speak from 2025-03-26 on
// (and 2024-11-05, which they still offer). A newer version is refused with
// a 4xx the SDKs fall back from.
var supportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

func (g *Gateway) newServer(log *slog.Logger) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "turnpike", Version: g.d.Version}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}, Prompts: &mcp.PromptCapabilities{},
		},
		SupportedProtocolVersions: supportedVersions,
		Logger:                    log,
	})
	s.AddReceivingMiddleware(g.methods)
	return s
}
