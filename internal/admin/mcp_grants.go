package admin

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// mcpGrantView is a subject's MCP grant (CONTRACT §19) as the API shows
// and takes it: server names ("*" for every server; a server's numeric id
// is taken too) and optionally the tools among them ("<server>__<tool>",
// "<server>__*" or a bare tool name). null (no grant) is access to none.
type mcpGrantView struct {
	Servers []string `json:"servers"`
	Tools   []string `json:"tools"`
}

// mcpGrantOf is a subject's grant for its view; nil when it has none.
func (a *API) mcpGrantOf(ctx context.Context, kind string, id int64) (*mcpGrantView, error) {
	g, err := a.d.Store.MCP().Grant(ctx, kind, strconv.FormatInt(id, 10))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &mcpGrantView{Servers: g.Servers, Tools: g.Tools}, nil
}

// mcpGrantInput is the mcp member of a request: sent says whether it came,
// and grant is nil when it came as null (the grant is removed).
type mcpGrantInput struct {
	sent  bool
	grant *mcpGrantView
}

// readMCPGrant reads the mcp member; server ids become names, so every
// grant is stored in one form.
func (a *API) readMCPGrant(ctx context.Context, f fields) (mcpGrantInput, error) {
	raw, ok := f["mcp"]
	if !ok {
		return mcpGrantInput{}, nil
	}
	if f.isNull("mcp") {
		return mcpGrantInput{sent: true}, nil
	}
	var in struct {
		Servers []json.RawMessage `json:"servers"`
		Tools   []string          `json:"tools"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || in.Servers == nil {
		return mcpGrantInput{}, badField("mcp", `must be null or {"servers":[names or ids],"tools":[names]}`)
	}
	g := &mcpGrantView{Servers: make([]string, 0, len(in.Servers)), Tools: in.Tools}
	for _, s := range in.Servers {
		name, err := a.mcpServerName(ctx, s)
		if err != nil {
			return mcpGrantInput{}, err
		}
		g.Servers = append(g.Servers, name)
	}
	if g.Tools == nil {
		g.Tools = []string{}
	}
	for _, t := range g.Tools {
		if t == "" || len(t) > 200 {
			return mcpGrantInput{}, badField("mcp", "tools must be names of 1 to 200 bytes")
		}
	}
	return mcpGrantInput{sent: true, grant: g}, nil
}

func (a *API) mcpServerName(ctx context.Context, raw json.RawMessage) (string, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		if name == "" || len(name) > 64 {
			return "", badField("mcp", "servers must be names of 1 to 64 bytes, \"*\" or server ids")
		}
		return name, nil
	}
	var id int64
	if json.Unmarshal(raw, &id) != nil || id <= 0 {
		return "", badField("mcp", "servers must be names, \"*\" or server ids")
	}
	s, err := a.d.Store.MCP().GetServer(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", badField("mcp", "no MCP server has id %d", id)
	}
	if err != nil {
		return "", err
	}
	return s.Name, nil
}

// saveMCPGrant stores a subject's grant when the request sent one.
func (a *API) saveMCPGrant(ctx context.Context, kind string, id int64, in mcpGrantInput) error {
	if !in.sent {
		return nil
	}
	g := store.MCPGrant{Kind: kind, Subject: strconv.FormatInt(id, 10)}
	if in.grant != nil {
		g.Servers, g.Tools = in.grant.Servers, in.grant.Tools
	}
	if err := a.d.Store.MCP().PutGrant(ctx, g); err != nil {
		return err
	}
	return a.reloadMCP(ctx)
}

// mayGrantKey refuses a key's grant from a plain user whose account has
// none: each level narrows the others, so within its own grant a user may
// narrow its keys, but a grant on a key alone would be a grant of its own.
func (a *API) mayGrantKey(ctx context.Context, p *auth.Principal, userID int64, in mcpGrantInput) error {
	if !in.sent || p.AtLeast(store.RoleAdmin) {
		return nil
	}
	g, err := a.mcpGrantOf(ctx, store.SubjectUser, userID)
	if err != nil {
		return err
	}
	if g == nil && in.grant != nil {
		return forbidden("only an administrator may grant MCP servers to a key of an account without an MCP grant")
	}
	return nil
}

// forgetMCPGrant drops a deleted subject's grant.
func (a *API) forgetMCPGrant(ctx context.Context, kind string, id int64) {
	if err := a.saveMCPGrant(ctx, kind, id, mcpGrantInput{sent: true}); err != nil {
		a.log.Warn("MCP grant of a deleted subject was not removed", "kind", kind, "id", id, "err", err)
	}
}
