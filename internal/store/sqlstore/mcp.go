package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// mcpMigration adds the MCP gateway's tables (CONTRACT §19): the servers the
// root registers and the grants of keys and users. A grant is keyed by
// subject kind and id like a traffic limit, so teams and organisations are
// new kinds, not new tables. tools NULL offers every tool a server lists.
var mcpMigration = Migration{Version: 190, Name: "mcp servers and grants", SQL: `
CREATE TABLE mcp_servers (
	id {{id}},
	name {{string}} NOT NULL,
	url {{text}} NOT NULL,
	headers {{text}} NOT NULL,
	timeout_seconds {{int}} NOT NULL,
	price_per_call_usd {{float}} NOT NULL,
	tools {{text}} NULL,
	created_at {{time}} NOT NULL,
	updated_at {{time}} NOT NULL,
	CONSTRAINT mcp_servers_name UNIQUE (name)
) {{options}};
CREATE TABLE mcp_grants (
	kind {{string}} NOT NULL,
	subject {{string}} NOT NULL,
	servers {{text}} NOT NULL,
	tools {{text}} NOT NULL,
	PRIMARY KEY (kind, subject)
) {{options}};
`}

// MCP returns the MCP server registry and grants.
func (s *Store) MCP() store.MCPRepo { return mcpRepo{s} }

var _ store.MCPRepo = mcpRepo{}

type mcpRepo struct{ s *Store }

const mcpServerColumns = "id, name, url, headers, timeout_seconds, price_per_call_usd, tools, created_at, updated_at"

func mcpServerArgs(v *store.MCPServer) ([]any, error) {
	headers := v.Headers
	if headers == nil {
		headers = map[string]string{}
	}
	h, err := jsonText(headers)
	if err != nil {
		return nil, err
	}
	var tools any
	if v.Tools != nil {
		t, err := jsonText(v.Tools)
		if err != nil {
			return nil, err
		}
		tools = t
	}
	return []any{v.Name, v.URL, h, v.TimeoutSeconds, v.PricePerCallUSD, tools}, nil
}

func (r mcpRepo) CreateServer(ctx context.Context, v *store.MCPServer) error {
	args, err := mcpServerArgs(v)
	if err != nil {
		return err
	}
	v.CreatedAt, v.UpdatedAt = now(), now()
	v.ID, err = r.s.insert(ctx, r.s.db, r.s.Rebind(`INSERT INTO mcp_servers (name, url, headers, timeout_seconds,
price_per_call_usd, tools, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), append(args, v.CreatedAt, v.UpdatedAt)...)
	return wrap(err, "mcp server")
}

func (r mcpRepo) GetServer(ctx context.Context, id int64) (*store.MCPServer, error) {
	v, err := scanMCPServer(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT "+mcpServerColumns+" FROM mcp_servers WHERE id = ?"), id))
	return v, wrap(err, "mcp server")
}

func (r mcpRepo) ListServers(ctx context.Context) ([]store.MCPServer, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT "+mcpServerColumns+" FROM mcp_servers ORDER BY id")
	if err != nil {
		return nil, wrap(err, "mcp servers")
	}
	out, err := collect(rows, func(row interface{ Scan(...any) error }) (store.MCPServer, error) {
		v, err := scanMCPServer(row)
		if err != nil {
			return store.MCPServer{}, err
		}
		return *v, nil
	})
	return out, wrap(err, "mcp servers")
}

func (r mcpRepo) UpdateServer(ctx context.Context, v *store.MCPServer) error {
	args, err := mcpServerArgs(v)
	if err != nil {
		return err
	}
	v.UpdatedAt = now()
	return r.s.execOne(ctx, r.s.db, "mcp server", `UPDATE mcp_servers SET name = ?, url = ?, headers = ?, timeout_seconds = ?,
price_per_call_usd = ?, tools = ?, updated_at = ? WHERE id = ?`, append(args, v.UpdatedAt, v.ID)...)
}

func (r mcpRepo) DeleteServer(ctx context.Context, id int64) error {
	return r.s.execOne(ctx, r.s.db, "mcp server", "DELETE FROM mcp_servers WHERE id = ?", id)
}

func scanMCPServer(row interface{ Scan(...any) error }) (*store.MCPServer, error) {
	var v store.MCPServer
	var headers string
	var tools sql.NullString
	if err := row.Scan(&v.ID, &v.Name, &v.URL, &headers, &v.TimeoutSeconds, &v.PricePerCallUSD, &tools, &v.CreatedAt, &v.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(headers), &v.Headers); err != nil {
		return nil, fmt.Errorf("decode mcp server headers: %w", err)
	}
	if tools.Valid {
		list, err := decodeList(tools.String)
		if err != nil {
			return nil, err
		}
		v.Tools = list
	}
	v.CreatedAt, v.UpdatedAt = v.CreatedAt.UTC(), v.UpdatedAt.UTC()
	return &v, nil
}

func (r mcpRepo) Grants(ctx context.Context) ([]store.MCPGrant, error) {
	rows, err := r.s.db.QueryContext(ctx, "SELECT kind, subject, servers, tools FROM mcp_grants")
	if err != nil {
		return nil, wrap(err, "mcp grants")
	}
	out, err := collect(rows, scanMCPGrant)
	return out, wrap(err, "mcp grants")
}

func (r mcpRepo) Grant(ctx context.Context, kind, subject string) (*store.MCPGrant, error) {
	g, err := scanMCPGrant(r.s.db.QueryRowContext(ctx, r.s.Rebind("SELECT kind, subject, servers, tools FROM mcp_grants WHERE kind = ? AND subject = ?"), kind, subject))
	if err != nil {
		return nil, wrap(err, "mcp grant")
	}
	return &g, nil
}

func scanMCPGrant(row interface{ Scan(...any) error }) (store.MCPGrant, error) {
	var g store.MCPGrant
	var servers, tools string
	if err := row.Scan(&g.Kind, &g.Subject, &servers, &tools); err != nil {
		return g, err
	}
	var err error
	if g.Servers, err = decodeList(servers); err != nil {
		return g, err
	}
	g.Tools, err = decodeList(tools)
	return g, err
}

func (r mcpRepo) PutGrant(ctx context.Context, g store.MCPGrant) error {
	if g.Servers == nil {
		_, err := r.s.db.ExecContext(ctx, r.s.Rebind("DELETE FROM mcp_grants WHERE kind = ? AND subject = ?"), g.Kind, g.Subject)
		return wrap(err, "delete mcp grant")
	}
	servers, err := stringList(g.Servers)
	if err != nil {
		return err
	}
	tools, err := stringList(g.Tools)
	if err != nil {
		return err
	}
	q := "INSERT INTO mcp_grants (kind, subject, servers, tools) VALUES (?, ?, ?, ?)"
	if r.s.dialect == MySQL {
		q += " ON DUPLICATE KEY UPDATE servers = VALUES(servers), tools = VALUES(tools)"
	} else {
		q = r.s.Rebind(q + " ON CONFLICT (kind, subject) DO UPDATE SET servers = excluded.servers, tools = excluded.tools")
	}
	_, err = r.s.db.ExecContext(ctx, q, g.Kind, g.Subject, servers, tools)
	return wrap(err, "put mcp grant")
}
