package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/turnpike-gw/turnpike/internal/admission"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// surface names MCP rows' surface in the usage log.
const surface = "mcp"

// model is what a server's calls are billed, limited and logged as.
func model(srv *server) string { return "mcp:" + srv.Name }

// callTool runs one tools/call through the admission seam: counted
// against the rate limits, its price reserved before the upstream is
// asked, settled when it answered (a tool's own error, isError, is an
// answer) and refunded when it failed or timed out.
func (g *Gateway) callTool(ctx context.Context, c *call, r *mcp.CallToolRequest) (mcp.Result, error) {
	srv, tool, ok := c.resolve(r.Params.Name)
	if !ok || !srv.offers(tool) || !c.access.tool(srv.Name, tool) {
		return nil, unknownTool(r.Params.Name)
	}
	t, err := g.admit(ctx, c, srv)
	if err != nil {
		return nil, refusal(err)
	}
	defer t.ticket.Release(context.WithoutCancel(ctx))
	params := *r.Params
	params.Name = tool
	cctx, cancel := context.WithTimeout(ctx, srv.timeout)
	defer cancel()
	raw, err := g.exchange(cctx, c, srv, func(us upSession) (json.RawMessage, error) {
		return g.up.call(cctx, srv, us, "tools/call", &params, g.noteHandler(ctx, srv, r.Session))
	})
	var res mcp.CallToolResult
	if err == nil && json.Unmarshal(raw, &res) != nil {
		err = &upstreamError{server: srv.Name, msg: "answered tools/call with something other than a tool result"}
	}
	if err != nil {
		t.refund(ctx, tool)
		return nil, rpcError(srv, err)
	}
	t.settle(ctx, tool, res.IsError)
	return &res, nil
}

// toolTicket is one admitted tool call: its standing with traffic control
// and its reservation.
type toolTicket struct {
	g      *Gateway
	c      *call
	srv    *server
	ticket admission.Ticket
	hold   *billing.Hold
	amount int64
	start  time.Time
}

func (g *Gateway) gate() admission.Gate {
	return admission.Gate{Billing: g.d.Billing, Limits: g.d.Limits, Plans: g.d.Plans}
}

// admit counts the call and reserves its price: price_per_call_usd ×
// quota_per_usd × the group's ratio, with the one pricing function.
func (g *Gateway) admit(ctx context.Context, c *call, srv *server) (*toolTicket, error) {
	t := &toolTicket{g: g, c: c, srv: srv, start: time.Now()}
	p := c.principal
	price := billing.NewPrice(store.ModelPrice{Name: model(srv), PerCall: srv.PricePerCallUSD})
	amount, err := g.gate().Quota(price, ir.Usage{}, price.CallCost(1), p.Group)
	if err != nil {
		return nil, err
	}
	if err := g.gate().Limit(ctx, &t.ticket, p, model(srv), nil, nil); err != nil {
		return nil, err
	}
	key := g.d.Billing.NewRequestKey(surface)
	t.hold, err = g.gate().Reserve(ctx, context.WithoutCancel(ctx), &t.ticket, admission.Account(p), key, amount, nil)
	if err != nil {
		t.ticket.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	t.amount = amount
	return t, nil
}

// row is the call's usage row: model mcp:<server>, other.mcp naming the
// server and tool, how long the upstream took and whether the tool said
// it failed.
func (t *toolTicket) row(tool string, isError bool) store.UsageLog {
	row := admission.Row(admission.Account(t.c.principal), model(t.srv), t.c.requestID, ir.Usage{}, t.start)
	o := admission.Other{Surface: surface, GroupRatio: t.g.d.Billing.Ratio(t.c.principal.Group),
		UpstreamCostUSD: admission.USD(billing.Decimal(t.srv.PricePerCallUSD))}
	admission.SetOther(&row, &o, map[string]any{"mcp": map[string]any{
		"server": t.srv.Name, "tool": tool, "ms": row.LatencyMS, "is_error": isError}})
	return row
}

func (t *toolTicket) settle(ctx context.Context, tool string, isError bool) {
	bg := context.WithoutCancel(ctx)
	t.ticket.Settle(bg, t.hold, t.amount, t.row(tool, isError), 0)
	if t.g.d.OnSettle != nil && t.amount > 0 {
		t.g.d.OnSettle(t.c.principal.UserID, t.c.principal.TokenID)
	}
}

func (t *toolTicket) refund(ctx context.Context, tool string) {
	row := t.row(tool, true)
	admission.SetOther(&row, &admission.Other{Surface: surface, GroupRatio: t.g.d.Billing.Ratio(t.c.principal.Group)},
		map[string]any{"mcp": map[string]any{"server": t.srv.Name, "tool": tool, "ms": row.LatencyMS, "is_error": true}})
	t.ticket.Refund(context.WithoutCancel(ctx), t.hold, &row)
}

// refusal is a call the gateway would not admit (quota, budget, rate
// limit) as a JSON-RPC error whose data carries the HTTP status and code a
// model call would have answered, and the seconds to wait.
func refusal(err error) error {
	e := ir.As(err)
	data := map[string]any{"status": e.Status, "code": e.Code}
	var rf *ratelimit.Refused
	if errors.As(err, &rf) {
		data["retry_after"] = int64(math.Max(1, math.Ceil(rf.RetryAfter.Seconds())))
	}
	b, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: codeRefused, Message: e.Message, Data: b}
}

// codeRefused is the JSON-RPC error code of a call refused for quota,
// budget or rate limit.
const codeRefused = -32029
