package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methods answers what the gateway forwards; everything else (initialize,
// ping, logging/setLevel) is the SDK's own, so ping is answered by the
// gateway.
func (g *Gateway) methods(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c := callOf(req)
		if c == nil {
			return next(ctx, method, req)
		}
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			return g.listTools(ctx, c)
		case *mcp.CallToolRequest:
			return g.callTool(ctx, c, r)
		case *mcp.ListResourcesRequest:
			return gatherList(ctx, g, c, "resources/list", func(srv *server, v *mcp.Resource) bool {
				v.Name = c.name(srv, v.Name)
				return true
			}, func(items []*mcp.Resource) mcp.Result { return &mcp.ListResourcesResult{Resources: items} })
		case *mcp.ListResourceTemplatesRequest:
			return gatherList(ctx, g, c, "resources/templates/list", func(srv *server, v *mcp.ResourceTemplate) bool {
				v.Name = c.name(srv, v.Name)
				return true
			}, func(items []*mcp.ResourceTemplate) mcp.Result {
				return &mcp.ListResourceTemplatesResult{ResourceTemplates: items}
			})
		case *mcp.ReadResourceRequest:
			return g.readResource(ctx, c, r)
		case *mcp.ListPromptsRequest:
			return gatherList(ctx, g, c, "prompts/list", func(srv *server, v *mcp.Prompt) bool {
				v.Name = c.name(srv, v.Name)
				return true
			}, func(items []*mcp.Prompt) mcp.Result { return &mcp.ListPromptsResult{Prompts: items} })
		case *mcp.GetPromptRequest:
			return g.getPrompt(ctx, c, r)
		}
		return next(ctx, method, req)
	}
}

// callOf is the gateway's call a request belongs to (see withCall).
func callOf(req mcp.Request) *call {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	c, _ := extra.TokenInfo.Extra["turnpike.call"].(*call)
	return c
}

// name is what a client calls a server's tool or prompt on c's surface.
func (c *call) name(srv *server, item string) string {
	if c.scope != nil {
		return item
	}
	return srv.Name + sep + item
}

// resolve finds the server a client's name of a tool or prompt points to
// and the item's own name there; ok is false for a server outside the
// grant, which is as unknown as a missing one.
func (c *call) resolve(name string) (srv *server, item string, ok bool) {
	if c.scope != nil {
		return c.scope, name, true
	}
	sn, item, found := strings.Cut(name, sep)
	if !found || item == "" {
		return nil, "", false
	}
	srv = c.reg.byName[sn]
	if srv == nil || !c.access.server(sn) {
		return nil, "", false
	}
	return srv, item, true
}

func (g *Gateway) listTools(ctx context.Context, c *call) (mcp.Result, error) {
	servers := c.servers()
	lists := make([][]*mcp.Tool, len(servers))
	errs := eachServer(ctx, servers, func(ctx context.Context, i int, srv *server) error {
		tools, err := g.tools.get(ctx, srv)
		lists[i] = tools
		return err
	})
	out := []*mcp.Tool{}
	for i, srv := range servers {
		if errs[i] != nil {
			if c.scope != nil {
				return nil, rpcError(srv, errs[i])
			}
			g.log.WarnContext(ctx, "MCP server left out of tools/list", "server", srv.Name, "err", errs[i])
			continue
		}
		for _, t := range lists[i] {
			if srv.offers(t.Name) && c.access.tool(srv.Name, t.Name) {
				named := *t
				named.Name = c.name(srv, t.Name)
				out = append(out, &named)
			}
		}
	}
	return &mcp.ListToolsResult{Tools: out}, nil
}

// unknownTool is the answer to a tool the key may not use or that does not
// exist: the same, so grants cannot be probed.
func unknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool: " + name}
}

func (g *Gateway) getPrompt(ctx context.Context, c *call, r *mcp.GetPromptRequest) (mcp.Result, error) {
	srv, prompt, ok := c.resolve(r.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt: " + r.Params.Name}
	}
	params := *r.Params
	params.Name = prompt
	var res mcp.GetPromptResult
	if err := g.forward(ctx, c, srv, "prompts/get", &params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// readResource reads a resource from the server on a server's surface; on
// /mcp a URI names no server, so the granted servers are asked in turn and
// the first that has it answers.
func (g *Gateway) readResource(ctx context.Context, c *call, r *mcp.ReadResourceRequest) (mcp.Result, error) {
	var last error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown resource: " + r.Params.URI}
	for _, srv := range c.servers() {
		var res mcp.ReadResourceResult
		err := g.forward(ctx, c, srv, "resources/read", r.Params, &res)
		if err == nil {
			return &res, nil
		}
		if c.scope != nil {
			return nil, err
		}
		last = err
	}
	return nil, last
}

// forward sends one request to srv within the call's session, bounded by
// the server's timeout, and decodes its result into out.
func (g *Gateway) forward(ctx context.Context, c *call, srv *server, method string, params, out any) error {
	ctx, cancel := context.WithTimeout(ctx, srv.timeout)
	defer cancel()
	raw, err := g.exchange(ctx, c, srv, func(us upSession) (json.RawMessage, error) {
		return g.up.call(ctx, srv, us, method, params, g.noteHandler(ctx, srv, nil))
	})
	if err != nil {
		return rpcError(srv, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return rpcError(srv, &upstreamError{server: srv.Name, msg: "answered " + method + " with something else"})
	}
	return nil
}

// rpcError is an upstream's failure as the client's JSON-RPC error, naming
// the server: its own JSON-RPC errors keep their code.
func rpcError(srv *server, err error) error {
	data, _ := json.Marshal(map[string]string{"server": srv.Name})
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return &jsonrpc.Error{Code: we.Code, Message: "MCP server " + srv.Name + ": " + we.Message, Data: data}
	}
	var ue *upstreamError
	if errors.As(err, &ue) {
		return &jsonrpc.Error{Code: codeUpstream, Message: ue.Error(), Data: data}
	}
	return &jsonrpc.Error{Code: codeUpstream, Message: "MCP server " + srv.Name + " failed", Data: data}
}

// codeUpstream is the JSON-RPC error code of an upstream that failed, in
// the range JSON-RPC leaves to servers.
const codeUpstream = -32010
