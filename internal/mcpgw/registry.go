package mcpgw

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// registry is an immutable snapshot of the registered servers and the
// grants; a change builds a new one (Gateway.Reload), so a request reads
// it without a lock or a database query.
type registry struct {
	byName map[string]*server
	// order lists the servers by id, so a union of tools is stable.
	order  []*server
	grants map[grantKey]store.MCPGrant
}

type grantKey struct{ kind, subject string }

// server is a registered server with its defaults applied.
type server struct {
	store.MCPServer
	timeout time.Duration
}

// defaultTimeout is a server's per-call bound when it has none.
const defaultTimeout = 60 * time.Second

func loadRegistry(ctx context.Context, r store.MCPRepo) (*registry, error) {
	list, err := r.ListServers(ctx)
	if err != nil {
		return nil, err
	}
	grants, err := r.Grants(ctx)
	if err != nil {
		return nil, err
	}
	reg := &registry{byName: make(map[string]*server, len(list)), grants: make(map[grantKey]store.MCPGrant, len(grants))}
	for _, v := range list {
		s := &server{MCPServer: v, timeout: defaultTimeout}
		if v.TimeoutSeconds > 0 {
			s.timeout = time.Duration(v.TimeoutSeconds) * time.Second
		}
		reg.byName[v.Name] = s
		reg.order = append(reg.order, s)
	}
	for _, g := range grants {
		reg.grants[grantKey{g.Kind, g.Subject}] = g
	}
	return reg, nil
}

// offers reports whether the registry entry offers tool: a server with a
// tool subset offers only those.
func (s *server) offers(tool string) bool {
	return s.Tools == nil || slices.Contains(s.Tools, tool)
}

// subject is one level a grant may be set on, as (kind, id).
type subject struct {
	kind string
	id   int64
}

// access is what a caller may use: the grants of each level that has one
// (its key, its user; a team and an organisation are further levels). Each
// level narrows the others, and a caller with no level granted may use
// nothing: access is denied by default.
type access []store.MCPGrant

func (r *registry) accessFor(levels []subject) access {
	var a access
	for _, l := range levels {
		if g, ok := r.grants[grantKey{l.kind, strconv.FormatInt(l.id, 10)}]; ok {
			a = append(a, g)
		}
	}
	return a
}

// server reports whether every level grants the server.
func (a access) server(name string) bool {
	if len(a) == 0 {
		return false
	}
	for _, g := range a {
		if !slices.Contains(g.Servers, "*") && !slices.Contains(g.Servers, name) {
			return false
		}
	}
	return true
}

// tool reports whether every level grants the server and, where the level
// lists tools, this tool: as "<server>__<tool>", "<server>__*" or a bare
// tool name of any server granted.
func (a access) tool(srv, tool string) bool {
	if !a.server(srv) {
		return false
	}
	for _, g := range a {
		if len(g.Tools) == 0 {
			continue
		}
		if !slices.Contains(g.Tools, srv+sep+tool) && !slices.Contains(g.Tools, srv+sep+"*") && !slices.Contains(g.Tools, tool) {
			return false
		}
	}
	return true
}

// sep joins a server's name and its tool's (or prompt's) name on /mcp.
const sep = "__"

// granted lists the registered servers the caller may use, in id order.
func (r *registry) granted(a access) []*server {
	var out []*server
	for _, s := range r.order {
		if a.server(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func (r *registry) byID(id int64) (*server, bool) {
	for _, s := range r.order {
		if s.ID == id {
			return s, true
		}
	}
	return nil, false
}

// levelsOf is every level a caller's grants may sit at: its key, its
// user and, for a member of a team, the team and its organisation.
func levelsOf(p *auth.Principal) []subject {
	levels := []subject{{store.SubjectToken, p.TokenID}, {store.SubjectUser, p.UserID}}
	if p.TeamID != 0 {
		levels = append(levels, subject{store.SubjectTeam, p.TeamID}, subject{store.SubjectOrg, p.OrgID})
	}
	return levels
}
