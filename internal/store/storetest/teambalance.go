package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// teamBalance is a team's stored balance and used quota.
func teamBalance(t *testing.T, s store.Store, id int64) (quota, used int64) {
	t.Helper()
	tm, err := s.Teams().GetTeam(ctx(t), id)
	must(t, err, "get team")
	return tm.Quota, tm.UsedQuota
}

// newTeam makes an organisation and a team with shared billing.
func newTeam(t *testing.T, s store.Store, name string) *store.Team {
	t.Helper()
	o := &store.Org{Name: name + "-org"}
	must(t, s.Teams().CreateOrg(ctx(t), o), "create org")
	tm := &store.Team{OrgID: o.ID, Name: name, Billing: store.BillingShared}
	must(t, s.Teams().CreateTeam(ctx(t), tm), "create team")
	return tm
}

var teamBalanceTests = []namedTest{
	{"entries with a team move the team's balance, never its member's, once per key", func(t *testing.T, s store.Store) {
		bw := batchWriter(t, s)
		u := newUser(t, s, "member", 100)
		tok := newToken(t, s, u, "k", 200) // a limited key still moves: it is a limit of its own
		tm := newTeam(t, s, "shared")
		paid := json.RawMessage(`{"stream":false,` + store.TeamPaidMarker + `}`)
		items := []store.BillingItem{
			{Entry: &store.LedgerEntry{Key: "team-topup", Kind: store.LedgerTopUp, Delta: 500, TeamID: tm.ID},
				Log: &store.UsageLog{Type: store.LogTopUp, Quota: 500, TeamID: tm.ID, Other: paid}},
			{Entry: &store.LedgerEntry{Key: "h1:reserve", Kind: store.LedgerReserve, UserID: u.ID, TokenID: tok.ID, Delta: -30, TokenDelta: -30, TeamID: tm.ID},
				Open: &store.Hold{Key: "h1", Owner: "node-a", UserID: u.ID, TokenID: tok.ID, Amount: 30, TeamID: tm.ID}},
		}
		for range 2 { // a replayed batch moves nothing twice
			_, err := bw.WriteItems(ctx(t), items)
			must(t, err, "write reserve")
		}
		holds, err := s.Holds().List(ctx(t))
		must(t, err, "list holds")
		if len(holds) != 1 || holds[0].TeamID != tm.ID || holds[0].UserID != u.ID || holds[0].Amount != 30 {
			t.Fatalf("open holds %+v, want h1 of the team", holds)
		}
		end := store.BillingItem{Entry: &store.LedgerEntry{Key: "h1:settle", Kind: store.LedgerSettle, UserID: u.ID, TokenID: tok.ID, Delta: 10, TokenDelta: 10, Used: 20, TeamID: tm.ID},
			Log: &store.UsageLog{Type: store.LogConsume, UserID: u.ID, Quota: 20, TeamID: tm.ID, Other: paid}, Close: "h1"}
		for range 2 {
			_, err := bw.WriteItems(ctx(t), []store.BillingItem{end})
			must(t, err, "write settle")
		}
		if q, used := teamBalance(t, s, tm.ID); q != 480 || used != 20 {
			t.Errorf("team balance %d used %d, want 480 and 20", q, used)
		}
		if uq, uu, tq, tu := balances(t, s, u.ID, tok.ID); uq != 100 || uu != 0 || tq != 180 || tu != 20 {
			t.Errorf("member balance %d used %d, key %d used %d; want 100/0 (the team paid) and 180/20", uq, uu, tq, tu)
		}
		if delta, _, err := s.Ledger().Sum(ctx(t), u.ID); err != nil || delta != 0 {
			t.Errorf("member ledger sum %d (%v), want 0", delta, err)
		}
	}},
	{"the books read teams' balances and rows apart from their members'", func(t *testing.T, s store.Store) {
		bw := batchWriter(t, s)
		u := newUser(t, s, "books-member", 0)
		tm := newTeam(t, s, "books")
		base := time.Now().UTC().Add(-time.Hour)
		paid := json.RawMessage(`{` + store.TeamPaidMarker + `}`)
		_, err := bw.WriteItems(ctx(t), []store.BillingItem{
			{Entry: &store.LedgerEntry{Key: "b-topup", Kind: store.LedgerTopUp, Delta: 300, TeamID: tm.ID, CreatedAt: base},
				Log: &store.UsageLog{Type: store.LogTopUp, Quota: 300, TeamID: tm.ID, Other: paid, CreatedAt: base}},
			{Entry: &store.LedgerEntry{Key: "b-own", Kind: store.LedgerTopUp, UserID: u.ID, Delta: 7, CreatedAt: base},
				Log: &store.UsageLog{Type: store.LogTopUp, UserID: u.ID, Quota: 7, TeamID: tm.ID, CreatedAt: base}},
			{Entry: &store.LedgerEntry{Key: "b1:settle", Kind: store.LedgerSettle, UserID: u.ID, Delta: -40, Used: 40, TeamID: tm.ID, CreatedAt: base},
				Log: &store.UsageLog{Type: store.LogConsume, UserID: u.ID, Quota: 40, TeamID: tm.ID, Other: paid, CreatedAt: base}},
		})
		must(t, err, "write")
		later := base.Add(time.Minute)
		teams, err := s.Books().TeamsBefore(ctx(t), later)
		must(t, err, "teams before")
		users, _, err := s.Books().BalancesBefore(ctx(t), later)
		must(t, err, "balances before")
		if teams[tm.ID] != 260 || users[u.ID] != 7 {
			t.Errorf("ledger balances team %d user %d, want 260 and 7", teams[tm.ID], users[u.ID])
		}
		drifts, err := s.Books().Drifts(ctx(t))
		if must(t, err, "drifts"); drifts.Teams[tm.ID] != 0 || drifts.Users[u.ID] != 0 {
			t.Errorf("team drift %d, user drift %d; want 0 and 0", drifts.Teams[tm.ID], drifts.Users[u.ID])
		}
		if _, ok := drifts.Teams[tm.ID]; !ok {
			t.Errorf("drifts %+v name no team %d", drifts, tm.ID)
		}
		totals, err := s.Books().LogTotals(ctx(t), store.Window{Since: base.Add(-time.Minute), Until: later})
		must(t, err, "log totals")
		got := map[store.LogTotal]bool{}
		for _, lt := range totals {
			got[lt] = true
		}
		for _, want := range []store.LogTotal{
			{Type: store.LogTopUp, Rows: 1, Quota: 300, Team: tm.ID},
			{UserID: u.ID, Type: store.LogTopUp, Rows: 1, Quota: 7},
			{UserID: u.ID, Type: store.LogConsume, Rows: 1, Quota: 40, Team: tm.ID},
		} {
			if !got[want] {
				t.Errorf("log totals %+v lack %+v", totals, want)
			}
		}
	}},
}
