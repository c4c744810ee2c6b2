package app

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/plans"
)

// buildPlans makes the subscription plans, their windows in Redis when
// nodes share one, else in the database.
func (a *App) buildPlans() {
	o := plans.Options{Store: a.Store.Plans(), Log: a.Log, Node: a.Billing.Node()}
	if a.redis != nil {
		o.Redis = a.redis
	}
	a.Plans = plans.New(o)
}

// sweepPlans trims the journal of live plan draws to those whose settle
// is not stored yet, and ends the draws of nodes that died mid-call once
// the billing sweep has settled what their balances kept (plans.Ended).
func (a *App) sweepPlans(ctx context.Context) error {
	_, err := a.Plans.Sweep(ctx, a.Billing)
	return err
}
