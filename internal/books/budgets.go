package books

import (
	"context"
	"fmt"

	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// CheckBudget names a team's or organisation's period budget whose live
// counter is not what its rows spent in the period.
const CheckBudget = "budget_vs_rows"

// BudgetBooks is one team's or organisation's period budget: its live
// counter (Live, on every node alike) against the consume rows and open
// batch holds of the period (RowsSum). The counter holds each call's
// estimate until it settles, so it may be ahead of the rows by the
// reservations of its members still open (Open), and by the settled
// calls whose rows the budget sweep has not yet seen stored (Settling).
// It is behind them only by what late records owe it (Late: the late ends
// of a node taken for dead, whose rows may be stored before the sweep
// counts them); never further ahead or behind (ratelimit.PeriodBook.Fits).
type BudgetBooks struct {
	Kind     string `json:"kind"` // team or org
	ID       int64  `json:"id"`
	Live     int64  `json:"live"`
	RowsSum  int64  `json:"rows_sum"`
	Open     int64  `json:"open"`
	Settling int64  `json:"settling,omitempty"`
	Late     int64  `json:"late,omitempty"`
	OK       bool   `json:"ok"`
}

// ReconcileBudgets adds the period budgets of teams and organisations to
// rep (CONTRACT §18: team budgets are exact across nodes and crash-safe
// like balances, and reconcile covers them).
func ReconcileBudgets(ctx context.Context, st store.Store, lim *ratelimit.Service, rep *Report) error {
	if lim == nil {
		return nil
	}
	teams, err := st.Teams().ListTeams(ctx)
	if err != nil {
		return err
	}
	open, err := openByTeam(ctx, st)
	if err != nil {
		return err
	}
	// Read before the counters: an end the sweep decides meanwhile then
	// shows as still waiting rather than as a gap.
	w, err := lim.Waiting(ctx)
	if err != nil {
		return err
	}
	byOrg := map[int64]int64{}
	for _, t := range teams {
		byOrg[t.OrgID] += open[t.ID]
		if err := rep.budget(ctx, lim, w, store.SubjectTeam, t.ID, open[t.ID]); err != nil {
			return err
		}
	}
	orgs, err := st.Teams().ListOrgs(ctx)
	if err != nil {
		return err
	}
	for _, o := range orgs {
		if err := rep.budget(ctx, lim, w, store.SubjectOrg, o.ID, byOrg[o.ID]); err != nil {
			return err
		}
	}
	return nil
}

// openByTeam sums the open reservations of live calls (not batches, whose
// holds the rows side counts) per team of the user that took them.
func openByTeam(ctx context.Context, st store.Store) (map[int64]int64, error) {
	holds, err := st.Holds().List(ctx)
	if err != nil {
		return nil, err
	}
	team := map[int64]int64{}
	out := map[int64]int64{}
	for _, h := range holds {
		if len(h.Key) >= len(store.BatchHoldPrefix) && h.Key[:len(store.BatchHoldPrefix)] == store.BatchHoldPrefix {
			continue
		}
		t, seen := team[h.UserID]
		if !seen {
			if u, err := st.Users().Get(ctx, h.UserID); err == nil {
				t = u.TeamID
			}
			team[h.UserID] = t
		}
		out[t] += h.Amount
	}
	return out, nil
}

func (rep *Report) budget(ctx context.Context, lim *ratelimit.Service, w ratelimit.Waiting, kind string, id, open int64) error {
	pb, ok, err := lim.PeriodBooks(ctx, kind, id, w)
	if err != nil || !ok {
		return err
	}
	live, rows := pb.Live, pb.Stored
	b := BudgetBooks{Kind: kind, ID: id, Live: live, RowsSum: rows, Open: open, Settling: pb.Settling, Late: pb.Late, OK: pb.Fits(open)}
	rep.Budgets = append(rep.Budgets, b)
	if b.OK {
		return nil
	}
	rep.OK = false
	d := Difference{Account: kind, Check: CheckBudget, Expected: rows, Actual: live,
		Message: fmt.Sprintf("%s %d: the period budget counts %d but its rows spent %d with %d still reserved, %d settling and %d owed late",
			kind, id, live, rows, open, pb.Settling, pb.Late)}
	if kind == store.SubjectTeam {
		d.TeamID = id
	}
	rep.Differences = append(rep.Differences, d)
	return nil
}
