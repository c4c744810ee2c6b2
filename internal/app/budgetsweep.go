package app

import "context"

// sweepBudgets ends the period-budget shares that nodes which died
// mid-call left in Redis, once the billing sweep has settled what their
// balances kept (ratelimit.BudgetBooks), so a budget does not stay spent
// by calls that will never end.
func (a *App) sweepBudgets(ctx context.Context) error {
	_, err := a.Limits.SweepBudgets(ctx, a.Billing)
	return err
}
