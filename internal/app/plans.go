package app

import (
	"github.com/turnpike-gw/turnpike/internal/plans"
)

// buildPlans makes the subscription plans, their windows in Redis when
// nodes share one, else in the database.
func (a *App) buildPlans() {
	o := plans.Options{Store: a.Store.Plans(), Log: a.Log}
	if a.redis != nil {
		o.Redis = a.redis
	}
	a.Plans = plans.New(o)
}
