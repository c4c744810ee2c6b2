package store

import (
	"context"
	"time"
)

// MCPServer is a Model Context Protocol tool server the root registered
// (CONTRACT §19). Headers go with every request to it and are secrets:
// the admin API never shows them whole. Tools is the subset of the
// server's tools the gateway offers; nil offers every tool it lists.
type MCPServer struct {
	ID              int64
	Name            string
	URL             string
	Headers         map[string]string
	TimeoutSeconds  int
	PricePerCallUSD float64
	Tools           []string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// MCPGrant is what one subject (a key, a user; later a team or an
// organisation) may use of the MCP servers: server names ("*" for every
// server) and, optionally, the tools among them ("<server>__<tool>" or a
// bare tool name). Subject is the subject's id in decimal, as traffic
// limits key theirs.
type MCPGrant struct {
	Kind    string
	Subject string
	Servers []string
	Tools   []string
}

// MCPRepo keeps the MCP server registry and the grants.
type MCPRepo interface {
	CreateServer(ctx context.Context, s *MCPServer) error
	GetServer(ctx context.Context, id int64) (*MCPServer, error)
	ListServers(ctx context.Context) ([]MCPServer, error)
	// UpdateServer writes every field of s (by id).
	UpdateServer(ctx context.Context, s *MCPServer) error
	DeleteServer(ctx context.Context, id int64) error
	// Grants lists every stored grant.
	Grants(ctx context.Context) ([]MCPGrant, error)
	// Grant is one subject's grant; a subject without one is ErrNotFound.
	Grant(ctx context.Context, kind, subject string) (*MCPGrant, error)
	// PutGrant stores a subject's grant; nil Servers deletes it.
	PutGrant(ctx context.Context, g MCPGrant) error
}
