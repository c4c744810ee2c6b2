package books

import (
	"context"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// teamRun makes alice a member of a team with billing shared, funds the
// team with 10000 and runs calls and a task paid from its balance beside
// a credit of alice's own. It returns the team.
func (e *ledgerEnv) teamRun() *store.Team {
	ctx := context.Background()
	o := &store.Org{Name: "acme"}
	must(e.t, e.st.Teams().CreateOrg(ctx, o))
	tm := &store.Team{OrgID: o.ID, Name: "search", Billing: store.BillingShared}
	must(e.t, e.st.Teams().CreateTeam(ctx, tm))
	_, err := e.bill.Credit(ctx, billing.Credit{TeamID: tm.ID, Delta: 10_000, Note: "team budget"})
	must(e.t, err)
	acct := billing.Account{UserID: e.user.ID, TokenID: e.unlim.ID, Group: "default", TeamID: tm.ID, OrgID: o.ID, TeamPays: true}
	row := func(typ string, quota int64) store.UsageLog {
		r := e.row(e.unlim, typ, quota)
		r.TeamID, r.OrgID = tm.ID, o.ID
		return r
	}
	reserve := func(key string, amount int64) *billing.Hold {
		h, err := e.bill.Reserve(ctx, acct, key, amount)
		must(e.t, err)
		return h
	}
	reserve("team-ok", 1000).Settle(ctx, 700, row("", 0))
	failed := row("", 0)
	reserve("team-failed", 400).Refund(ctx, &failed)
	reserve("team-over", 100).Settle(ctx, 160, row("", 0))
	task := reserve(store.TaskHoldPrefix+"team", 900)
	submit := e.taskRow(e.unlim, store.LogConsume, 900)
	submit.TeamID = tm.ID
	task.Keep(&submit)
	must(e.t, e.w.Flush(ctx))
	correction := e.taskRow(e.unlim, store.LogRefund, 250)
	_, err = e.bill.RestoreHold(acct, store.TaskHoldPrefix+"team", 900).SettleNow(ctx, 650, &correction)
	must(e.t, err)
	_, err = e.bill.Credit(ctx, billing.Credit{TeamID: tm.ID, Delta: -1_000, Note: "taken back"})
	must(e.t, err)
	_, err = e.bill.Credit(ctx, billing.Credit{UserID: e.user.ID, Delta: 42, Note: "alice's own"})
	must(e.t, err)
	must(e.t, e.w.Flush(ctx))
	return tm
}

func TestATeamsSharedBalanceReconcilesApartFromItsMembers(t *testing.T) {
	e := newLedgerEnv(t)
	tm := e.teamRun()
	rep := e.reconcile(lastHour())
	if !rep.OK || len(rep.Differences) != 0 {
		t.Fatalf("not ok: %+v", rep.Differences)
	}
	spent := int64(700 + 160 + 650)
	cases := []struct {
		name                    string
		got                     Account
		start, end, rows, spend int64
	}{
		// The team: 10000 in, 1000 taken back, the calls and the task.
		{"team", rep.Teams[0], 0, 10_000 - 1_000 - spent, 10_000 - 1_000 - spent, -(10_000 - 1_000 - spent)},
		// Alice paid nothing of it: her balance moved by her own credits.
		{"member", rep.Users[0], 0, 100_042, 100_042, -100_042},
	}
	if len(rep.Teams) != 1 || rep.Teams[0].TeamID != tm.ID {
		t.Fatalf("teams %+v, want the one team", rep.Teams)
	}
	for _, c := range cases {
		if c.got.BalanceStart != c.start || c.got.BalanceEnd != c.end || c.got.RowsSum != c.rows || c.got.NetSpend != c.spend {
			t.Errorf("%s: %d → %d rows %d net %d, want %d → %d rows %d net %d", c.name, c.got.BalanceStart, c.got.BalanceEnd,
				c.got.RowsSum, c.got.NetSpend, c.start, c.end, c.rows, c.spend)
		}
	}
	stored, err := e.st.Teams().GetTeam(context.Background(), tm.ID)
	must(t, err)
	if stored.Quota != 10_000-1_000-spent || stored.UsedQuota != spent {
		t.Errorf("stored team balance %d used %d, want %d and %d", stored.Quota, stored.UsedQuota, 10_000-1_000-spent, spent)
	}
	if bal, err := e.bill.Balances().Team(context.Background(), tm.ID); err != nil || bal != stored.Quota {
		t.Errorf("live team balance %d (%v), want the stored %d", bal, err, stored.Quota)
	}
}

func TestATeamsBooksNameWhatStrayed(t *testing.T) {
	cases := []struct {
		name   string
		tamper string
		check  string
	}{
		{"balance moved outside the ledger", "UPDATE teams SET quota = quota + 5", CheckBalanceSpend},
		{"a team-paid row lost", "DELETE FROM usage_logs WHERE type = 'consume' AND quota = 700", CheckLedgerRows},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newLedgerEnv(t)
			tm := e.teamRun()
			_, err := e.st.DB().Exec(c.tamper)
			must(t, err)
			rep := e.reconcile(lastHour())
			if rep.OK || len(rep.Differences) == 0 {
				t.Fatal("reconciled after the team's books were tampered with")
			}
			named := false
			for _, d := range rep.Differences {
				named = named || d.Account == "team" && d.TeamID == tm.ID && d.Check == c.check
				if d.Account == "user" {
					t.Errorf("the member was blamed: %+v", d)
				}
			}
			if !named {
				t.Errorf("differences %+v, want team %d named by %s", rep.Differences, tm.ID, c.check)
			}
		})
	}
}
