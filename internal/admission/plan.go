package admission

import (
	"context"
	"errors"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A call of a model a plan of its user covers draws from the plan first
// (CONTRACT §18): its reservation is taken in every open window of the
// plan and the balance reserves nothing. When a window is spent the user's
// plan_overflow decides: the balance pays as usual, or the call waits
// (429 plan_window_spent). The draw rides on the ticket, so live calls,
// tasks and batches settle and refund it with their reservation.

// drawPlan draws amount from the highest-priority plan that covers the
// ticket's model and has room, journaled under the call's hold key, and
// answers what the balance still has to reserve: 0 when a plan pays,
// amount when none does.
func (g Gate) drawPlan(ctx context.Context, tk *Ticket, acct billing.Account, key string, amount int64) (int64, error) {
	tk.plan = nil
	hs := g.Plans.Covering(acct.UserID, acct.Group, tk.model)
	if len(hs) == 0 {
		return amount, nil
	}
	d, err := g.Plans.Take(ctx, hs, acct.UserID, amount, key)
	var spent *plans.Spent
	switch {
	case errors.As(err, &spent):
		return 0, &ratelimit.Refused{RetryAfter: spent.RetryAfter, Err: &ir.Error{Status: 429, Kind: ir.KindRateLimit,
			Code: "plan_window_spent", Message: "your plan's usage window is spent: " + spent.Error() + "; retry after it closes"}}
	case err != nil:
		return 0, &ir.Error{Status: 503, Kind: ir.KindOverloaded, Code: "plan_unavailable",
			Message: "the gateway cannot check your plan right now; retry shortly", Cause: err}
	case d == nil:
		return amount, nil
	}
	tk.plan = d
	return 0, nil
}

// balanceShare is what of charge the balance and the period budgets pay:
// nothing when a plan paid.
func (tk *Ticket) balanceShare(charge int64) int64 {
	if tk.plan != nil {
		return 0
	}
	return charge
}

// settleRow settles hold with row: as usual, or, when a plan paid, the
// plan at charge, the row recording it (other.plan, quota) and the balance
// moving nothing. The draw stays journaled, settled, until the plan sweep
// finds the hold's settle stored: a crash before leaves it a record to end
// (plans.Service.Sweep).
func (tk *Ticket) settleRow(bg context.Context, hold *billing.Hold, charge int64, row store.UsageLog) {
	if tk.plan == nil {
		hold.SettleRow(bg, charge, &row)
		return
	}
	tk.plan.Settle(bg, charge)
	row.Type, row.Quota, row.Other = store.LogConsume, charge, tk.plan.Mark(row.Other)
	if row.RequestID == "" {
		row.RequestID = hold.Key()
	}
	hold.SettleWith(bg, 0, &row)
}

// mark notes the plan on a row a planned ticket writes.
func (tk *Ticket) mark(row *store.UsageLog) {
	if tk.plan != nil && row != nil {
		row.Other = tk.plan.Mark(row.Other)
	}
}

// keepPlan stores a durable ticket's draw under its hold key.
func (tk *Ticket) keepPlan() {
	if tk.plan != nil {
		tk.plan.Keep(context.Background(), tk.Hold.Key())
	}
}

// endPlan ends a durable ticket's draw once its hold was ended by this
// call (won): at charge, or refunded when refund.
func (tk *Ticket) endPlan(ctx context.Context, won, refund bool, charge int64) {
	if tk.plan == nil || !won {
		return
	}
	if refund {
		tk.plan.Refund(ctx)
	} else {
		tk.plan.Settle(ctx, charge)
	}
	tk.plan.Forget(ctx, tk.Hold.Key())
}

// restorePlan finds the draw a restored ticket kept; a plan-paid ticket's
// hold reserved nothing from the balance nor the period budgets.
func (g Gate) restorePlan(tk *Ticket, rec Record) {
	d := g.Plans.Restore(context.Background(), rec.Key)
	if d == nil {
		return
	}
	tk.plan, tk.Budget = d, nil
	tk.Hold = g.Billing.RestoreHold(rec.Account(), rec.Key, 0)
}
