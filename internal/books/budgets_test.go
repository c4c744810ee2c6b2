package books

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func TestATeamsPeriodBudgetReconcilesWithItsRows(t *testing.T) {
	cases := []struct {
		name    string
		settle  bool  // the call ended (its budget share corrected to 200)
		row     int64 // the team's consume row of the period (0: none)
		wantOK  bool
		live    int64
		rowsSum int64
	}{
		{"a call settled with its row", true, 200, true, 200, 200},
		{"a settled call's row lost", true, 0, false, 200, 0},
		{"a row the counter never saw", true, 350, false, 200, 350},
		// No billing hold is open, so the held estimate explains nothing.
		{"a counter ahead of the rows by no open reservation", false, 0, false, 300, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newLedgerEnv(t)
			ctx := context.Background()
			o := &store.Org{Name: "acme"}
			must(t, e.st.Teams().CreateOrg(ctx, o))
			tm := &store.Team{OrgID: o.ID, Name: "search", Billing: store.BillingOwn}
			must(t, e.st.Teams().CreateTeam(ctx, tm))
			lim := ratelimit.New(e.st.Traffic(), nil, nil)
			must(t, lim.Set(ctx, store.SubjectTeam, strconv.FormatInt(tm.ID, 10), ratelimit.Limits{PeriodQuota: 1000, Period: ratelimit.Day}))
			must(t, lim.Reload(ctx))
			held, err := lim.For(ratelimit.Subject{UserID: e.user.ID, TeamID: tm.ID, OrgID: o.ID, Model: "m"}).Hold(ctx, 300, "hold-1")
			must(t, err)
			if c.settle {
				held.Settle(ctx, 200)
			}
			if c.row != 0 {
				must(t, e.st.Logs().Insert(ctx, []store.UsageLog{{Type: store.LogConsume, UserID: e.user.ID, Quota: c.row,
					TeamID: tm.ID, OrgID: o.ID, CreatedAt: time.Now().UTC()}}))
			}
			rep := &Report{OK: true}
			must(t, ReconcileBudgets(ctx, e.st, lim, rep))
			if len(rep.Budgets) != 1 {
				t.Fatalf("budgets %+v, want the team's", rep.Budgets)
			}
			b := rep.Budgets[0]
			if b.OK != c.wantOK || rep.OK != c.wantOK || b.Live != c.live || b.RowsSum != c.rowsSum || b.Kind != store.SubjectTeam || b.ID != tm.ID {
				t.Errorf("budget %+v (report ok %v), want ok %v live %d rows %d", b, rep.OK, c.wantOK, c.live, c.rowsSum)
			}
			if !c.wantOK && (len(rep.Differences) != 1 || rep.Differences[0].Check != CheckBudget || rep.Differences[0].TeamID != tm.ID) {
				t.Errorf("differences %+v, want the team's budget named", rep.Differences)
			}
		})
	}
}
