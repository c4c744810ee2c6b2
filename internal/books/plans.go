package books

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// CheckPlanWindow names a plan window whose live count is not the sum of
// the usage rows drawn in it.
const CheckPlanWindow = "plan_window_vs_rows"

// ReconcilePlans adds the plan windows' books to rep (CONTRACT §18, §13):
// every open window of every grant in force counts exactly what its
// plan-drawn rows sum to. A user with a reservation still open may be
// ahead of its rows by it; nothing else may differ.
func ReconcilePlans(ctx context.Context, st store.Store, p *plans.Service, rep *Report) error {
	if p == nil {
		return nil
	}
	holds, err := st.Holds().List(ctx)
	if err != nil {
		return err
	}
	open := map[int64]bool{}
	for _, h := range holds {
		open[h.UserID] = true
	}
	ws, err := p.Reconcile(ctx, func(user int64) bool { return open[user] })
	if err != nil {
		return err
	}
	rep.Plans = ws
	for _, w := range ws {
		if w.OK {
			continue
		}
		rep.OK = false
		rep.Differences = append(rep.Differences, Difference{Account: "plan", UserID: w.UserID, Check: CheckPlanWindow,
			Expected: w.RowsSum, Actual: w.Live, Message: w.Message})
	}
	return nil
}
