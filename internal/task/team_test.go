package task

import (
	"context"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A task is settled by whichever process polls it, often after the one
// that submitted it restarted: its rows and its charge must still name the
// submitter's team and organisation, and a team with billing shared must
// still pay it, from what the task record kept.
func TestATaskEndedAfterARestartStillBillsAndNamesItsTeam(t *testing.T) {
	cases := []struct {
		name   string
		status string
		// what the team and alice have after it ended
		team, alice int64
	}{
		{"settled", StatusSuccess, 100_000 - 5_000, 1_000_000}, // one second at $0.01
		{"refunded", StatusFailure, 100_000, 1_000_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newCoreEnv(t)
			ctx := context.Background()
			o := &store.Org{Name: "acme"}
			must(t, e.Store.Teams().CreateOrg(ctx, o))
			tm := &store.Team{OrgID: o.ID, Name: "video", Billing: store.BillingShared}
			must(t, e.Store.Teams().CreateTeam(ctx, tm))
			must(t, e.Store.Teams().SetMembership(ctx, e.alice, tm.ID, "member"))
			_, err := e.Billing.Credit(ctx, billing.Credit{TeamID: tm.ID, Delta: 100_000})
			must(t, err)
			id := e.submitVideo(`{"model":"acme-v1","prompt":"p","seconds":1}`)
			// The poller of a restarted process knows the task from its
			// record alone.
			restarted := e.task(id)
			if restarted.ticket != nil || restarted.TeamID != tm.ID || restarted.OrgID != o.ID || !restarted.TeamPays {
				t.Fatalf("task record %+v, want team %d of org %d paying", restarted.Task, tm.ID, o.ID)
			}
			e.svc.complete(ctx, e.plugin, restarted, pollResult{status: c.status}, nil)
			e.Flush()
			rows := append(e.Logs(e.alice, store.LogConsume), e.Logs(e.alice, store.LogRefund)...)
			if len(rows) == 0 {
				t.Fatal("the task wrote no usage rows")
			}
			for _, r := range rows {
				if r.TeamID != tm.ID || r.OrgID != o.ID {
					t.Errorf("%s row of %d names team %d org %d, want %d and %d", r.Type, r.Quota, r.TeamID, r.OrgID, tm.ID, o.ID)
				}
			}
			team, err := e.Billing.Balances().Team(ctx, tm.ID)
			must(t, err)
			if team != c.team || e.Quota(e.alice) != c.alice {
				t.Errorf("team %d alice %d, want %d and %d", team, e.Quota(e.alice), c.team, c.alice)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
