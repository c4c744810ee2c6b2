package mcpgw

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPages bounds how many pages of one list the gateway reads from one
// upstream, so a server whose cursor never ends cannot hold a request.
const maxPages = 20

// eachServer runs fn for every server at once and returns each one's error.
func eachServer(ctx context.Context, servers []*server, fn func(ctx context.Context, i int, srv *server) error) []error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Go(func() { errs[i] = fn(ctx, i, srv) })
	}
	wg.Wait()
	return errs
}

// gatherList answers a list method on c's surface: every page of it from
// each server, items kept by keep (which may rename them), in server order.
// On /mcp a server that fails is left out so the others keep working; on a
// server's own surface its failure is the answer.
func gatherList[T any](ctx context.Context, g *Gateway, c *call, method string, keep func(*server, T) bool, wrap func([]T) mcp.Result) (mcp.Result, error) {
	servers := c.servers()
	lists := make([][]T, len(servers))
	errs := eachServer(ctx, servers, func(ctx context.Context, i int, srv *server) error {
		items, err := listPages[T](ctx, g, c, srv, method)
		lists[i] = items
		return err
	})
	out := []T{}
	for i, srv := range servers {
		if errs[i] != nil {
			if c.scope != nil {
				return nil, errs[i]
			}
			g.log.WarnContext(ctx, "MCP server left out of "+method, "server", srv.Name, "err", errs[i])
			continue
		}
		for _, v := range lists[i] {
			if keep(srv, v) {
				out = append(out, v)
			}
		}
	}
	return wrap(out), nil
}

// listPages reads every page of a list from srv. A server without the
// feature (method not found) lists nothing.
func listPages[T any](ctx context.Context, g *Gateway, c *call, srv *server, method string) ([]T, error) {
	var out []T
	cursor := ""
	for range maxPages {
		var page struct {
			Next  string          `json:"nextCursor"`
			Items json.RawMessage `json:"-"`
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var raw map[string]json.RawMessage
		if err := g.forward(ctx, c, srv, method, params, &raw); err != nil {
			if we, ok := err.(*jsonrpc.Error); ok && we.Code == jsonrpc.CodeMethodNotFound {
				return nil, nil
			}
			return nil, err
		}
		_ = json.Unmarshal(raw["nextCursor"], &page.Next)
		var items []T
		if field := listField[method]; len(raw[field]) > 0 {
			if err := json.Unmarshal(raw[field], &items); err != nil {
				return nil, rpcError(srv, &upstreamError{server: srv.Name, msg: "answered " + method + " with a list the gateway cannot read"})
			}
		}
		out = append(out, items...)
		if page.Next == "" {
			return out, nil
		}
		cursor = page.Next
	}
	return out, nil
}

// listField is where each list method's items are.
var listField = map[string]string{"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}

// noteHandler relays what an upstream sends while it answers: progress (to
// the client's request, when it asked with a token) and log messages, and
// notices a changed tool list.
func (g *Gateway) noteHandler(ctx context.Context, srv *server, session *mcp.ServerSession) note {
	return func(n *jsonrpc.Request) {
		switch n.Method {
		case "notifications/tools/list_changed":
			g.tools.changed(srv)
		case "notifications/progress":
			var p mcp.ProgressNotificationParams
			if session != nil && json.Unmarshal(n.Params, &p) == nil && p.ProgressToken != nil {
				_ = session.NotifyProgress(ctx, &p)
			}
		case "notifications/message":
			var p mcp.LoggingMessageParams
			if session != nil && json.Unmarshal(n.Params, &p) == nil {
				_ = session.Log(ctx, &p)
			}
		}
	}
}
