// Package admission is the money seam every admitted call passes, whatever
// its surface (a chat call, an endpoint, realtime, a task submit): the
// price check, the rate-limit lease, the period-budget hold, the quota
// reservation and its settle or refund, the headers a refusal carries and
// the shape of the usage row. A rule about money is written here once.
package admission

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Gate is what admission needs of the gateway: the billing service and
// traffic control (nil admits every call). It is two pointers, passed by
// value so a call's admission costs no allocation.
type Gate struct {
	Billing *billing.Service
	Limits  *ratelimit.Service
	// Plans are the subscription plans (nil: none).
	Plans *plans.Service
}

// Ticket is one call's money and standing with traffic control: the
// limits that apply (nil: none), the lease counted against them while the
// call runs, the reservation (Hold) and its share of the period budgets.
// The zero Ticket is a call not yet admitted; every method is safe on it.
// A ticket of deferred work (Gate.Hold) is durable: see ticket.go.
type Ticket struct {
	Limits *ratelimit.Plan
	Lease  *ratelimit.Lease
	Budget *ratelimit.BudgetHold
	Hold   *billing.Hold
	// plan is the share of a plan that pays the call instead of the
	// balance (nil: the balance pays); see plan.go.
	plan *plans.Draw
	// model and heldAt are a durable ticket's (Gate.Hold, Gate.Restore),
	// for its Record.
	model  string
	heldAt time.Time
}

// Price checks that the key may use model and that the pinned routing
// snapshot serves it to the key's group, and returns its price.
func (g Gate) Price(t *routing.Table, p *auth.Principal, model string) (*billing.Price, error) {
	if err := g.Model(t, p, model); err != nil {
		return nil, err
	}
	return g.Billing.Price(model)
}

// Model checks that the key may use model and that the pinned routing
// snapshot serves it to the key's group: Price's check, for surfaces that
// are not priced (token counting).
func (g Gate) Model(t *routing.Table, p *auth.Principal, model string) error {
	if lvl := p.ModelRefusedBy(model); lvl != "" {
		return &ir.Error{Status: 403, Kind: ir.KindPermission, Code: "model_not_allowed", Level: lvl,
			Message: refusedModel[lvl] + model}
	}
	if !t.Serves(p.Group, model) {
		return &ir.Error{Status: 404, Kind: ir.KindNotFound, Code: "model_not_found", Param: "model",
			Message: "model " + model + " does not exist or is not available to this key"}
	}
	return nil
}

// Limit counts the call against the rate limits of its key, user, group
// and model before any upstream call, refusing it with 429 when one is
// reached. tokens, asked only when a tokens-per-minute limit applies, is
// the call's exact estimate, corrected at settlement. The rate-limit
// headers go on h from here on, and on a refusal Retry-After too.
func (g Gate) Limit(ctx context.Context, tk *Ticket, p *auth.Principal, model string, h http.Header, tokens func() int64) error {
	tk.model = model
	if g.Limits == nil {
		return nil
	}
	tk.Limits = g.Limits.For(ratelimit.Subject{UserID: p.UserID, TokenID: p.TokenID, Group: p.Group, Model: model,
		TeamID: p.TeamID, OrgID: p.OrgID})
	if tk.Limits == nil {
		return nil
	}
	var n int64
	if tokens != nil && tk.Limits.CountsTokens() {
		n = tokens()
	}
	lease, err := tk.Limits.Acquire(ctx, n)
	if err != nil {
		RefusedHeaders(h, err)
		return err
	}
	tk.Lease = lease
	if h != nil {
		lease.SetHeaders(h)
	}
	return nil
}

// Reserve draws amount from a plan that covers the call, else holds it
// against the period budgets that apply and then reserves it from the
// account's quota under key. A refusal puts its headers on h; a failed
// reservation gives the plan and the budget back (on bg, which outlives a
// client that left).
func (g Gate) Reserve(ctx, bg context.Context, tk *Ticket, acct billing.Account, key string, amount int64, h http.Header) (*billing.Hold, error) {
	amount, err := g.drawPlan(ctx, tk, acct, key, amount)
	if err != nil {
		RefusedHeaders(h, err)
		return nil, err
	}
	hold, err := g.reserve(ctx, bg, tk, acct, key, amount, h)
	if err != nil {
		tk.plan.Refund(bg)
	}
	return hold, err
}

func (g Gate) reserve(ctx, bg context.Context, tk *Ticket, acct billing.Account, key string, amount int64, h http.Header) (*billing.Hold, error) {
	budget, err := tk.Limits.Hold(ctx, amount, key)
	if err != nil {
		RefusedHeaders(h, err)
		return nil, err
	}
	hold, err := g.Billing.Reserve(ctx, acct, key, amount)
	if err != nil {
		budget.Refund(bg)
		return nil, err
	}
	tk.Budget, tk.Hold = budget, hold
	return hold, nil
}

// Account is who pays for p's calls.
func Account(p *auth.Principal) billing.Account {
	return billing.Account{UserID: p.UserID, TokenID: p.TokenID, Group: p.Group, TeamID: p.TeamID, OrgID: p.OrgID, TeamPays: p.TeamPays}
}

// refusedModel starts the message of a model an allow-list refuses, by the
// level whose list it is.
var refusedModel = map[string]string{"key": "this API key may not use model ",
	"team": "this API key's team may not use model ", "org": "this API key's organisation may not use model "}

// subject is who makes acct's call of model, for traffic control.
func subject(acct billing.Account, model string) ratelimit.Subject {
	return ratelimit.Subject{UserID: acct.UserID, TokenID: acct.TokenID, Group: acct.Group, Model: model,
		TeamID: acct.TeamID, OrgID: acct.OrgID}
}

// Quota prices usage plus usd at price for group with the one pricing
// function.
func (g Gate) Quota(price *billing.Price, u ir.Usage, usd *big.Rat, group string) (int64, error) {
	return g.Billing.Charge(price, u, usd, group)
}

// HoldQuota prices an estimate for a reservation: its output tokens at the
// dearest output rate (output or reasoning) of the tier its input reaches,
// since how much of the output will be reasoning is only known afterwards.
func (g Gate) HoldQuota(price *billing.Price, u ir.Usage, usd *big.Rat, group string) (int64, error) {
	return g.Billing.Charge(price, price.ReserveUsage(u), usd, group)
}

// Settle charges amount on hold with its consume row, turns the budget
// share into the real charge and corrects the lease's token count.
func (tk *Ticket) Settle(bg context.Context, hold *billing.Hold, amount int64, row store.UsageLog, tokens int64) {
	tk.settleRow(bg, hold, amount, row)
	tk.Budget.Settle(bg, tk.balanceShare(amount))
	tk.Lease.Settle(bg, tokens)
}

// Refund returns hold whole and its budget share; row, when not nil, is
// written as the error row.
func (tk *Ticket) Refund(bg context.Context, hold *billing.Hold, row *store.UsageLog) {
	tk.mark(row)
	hold.Refund(bg, row)
	tk.plan.Refund(bg)
	tk.Budget.Refund(bg)
}

// Release gives back the call's concurrency slots.
func (tk *Ticket) Release(bg context.Context) { tk.Lease.Release(bg) }

// RefusedHeaders puts Retry-After and the rate-limit headers of a traffic
// control refusal on h; any other error (or a nil h) leaves h alone.
func RefusedHeaders(h http.Header, err error) {
	var rf *ratelimit.Refused
	if h != nil && errors.As(err, &rf) {
		rf.SetHeaders(h)
	}
}

// CostQuota is an exact list-dollar cost (summed from the exact parts of
// several charges: a batch's lines of one model) charged at group's ratio,
// rounded once.
func (g Gate) CostQuota(cost *big.Rat, group string) (int64, error) {
	return billing.Quota(cost, g.Billing.QuotaPerUSD(), g.Billing.Ratio(group))
}
