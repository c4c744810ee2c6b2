package billing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ir"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// teamEnv is holdEnv whose user is a member of a team with billing shared
// funded with 300 through the ledger.
func teamEnv(t *testing.T, balances func(store.Store) Balances) (*holdEnv, int64) {
	t.Helper()
	e := newHoldEnv(t, balances)
	ctx := context.Background()
	o := &store.Org{Name: "acme"}
	if err := e.st.Teams().CreateOrg(ctx, o); err != nil {
		t.Fatal(err)
	}
	tm := &store.Team{OrgID: o.ID, Name: "search", Billing: store.BillingShared}
	if err := e.st.Teams().CreateTeam(ctx, tm); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Credit(ctx, Credit{TeamID: tm.ID, Delta: 300, Note: "team budget"}); err != nil {
		t.Fatal(err)
	}
	e.acct = Account{UserID: e.userID, TokenID: e.tokenID, TeamID: tm.ID, OrgID: o.ID, TeamPays: true}
	return e, tm.ID
}

// checkTeam asserts the team's, the member's and the key's balances, live
// and stored.
func (e *holdEnv) checkTeam(t *testing.T, svc *Service, teamID, team, user, token int64) {
	t.Helper()
	e.check(t, svc, user, token)
	ctx := context.Background()
	tm, err := e.st.Teams().GetTeam(ctx, teamID)
	if err != nil {
		t.Fatal(err)
	}
	live, err := svc.Balances().Team(ctx, teamID)
	if err != nil || tm.Quota != team || live != team {
		t.Fatalf("team stored %d live %d (%v), want %d", tm.Quota, live, err, team)
	}
}

func TestATeamsSharedBalancePaysItsMembersCallsAndRefusesAtTeamLevel(t *testing.T) {
	for _, f := range factories(t) {
		t.Run(f.name, func(t *testing.T) {
			e, teamID := teamEnv(t, func(st store.Store) Balances { return f.make(t, st) })
			ctx := context.Background()
			steps := []struct {
				name      string
				do        func() error
				team, key int64
			}{
				{"reserve 200 of the team's 300", func() error {
					h, err := e.svc.Reserve(ctx, e.acct, "call-1", 200)
					if err == nil {
						h.Settle(ctx, 120, store.UsageLog{})
					}
					return err
				}, 180, 380},
				{"a reservation the team cannot hold is refused with its level", func() error {
					_, err := e.svc.Reserve(ctx, e.acct, "call-2", 181)
					var ie *ir.Error
					if !errors.As(err, &ie) || ie.Status != 402 || ie.Code != "insufficient_quota" || ie.Level != "team" {
						t.Errorf("refusal %v, want 402 insufficient_quota at level team", err)
					}
					return nil
				}, 180, 380},
				{"a refund gives the team back its reservation", func() error {
					h, err := e.svc.Reserve(ctx, e.acct, "call-3", 180)
					if err == nil {
						h.Refund(ctx, nil)
					}
					return err
				}, 180, 380},
				{"an administrator takes 80 back, never below zero", func() error {
					if _, err := e.svc.Credit(ctx, Credit{TeamID: teamID, Delta: -181}); !errors.Is(err, store.ErrConflict) {
						t.Errorf("withdrawal below zero: %v, want a conflict", err)
					}
					_, err := e.svc.Credit(ctx, Credit{TeamID: teamID, Delta: -80})
					return err
				}, 100, 380},
			}
			for _, s := range steps {
				if err := s.do(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				// The member's own 1000 never moves: the team pays.
				e.checkTeam(t, e.svc, teamID, s.team, 1000, s.key)
			}
		})
	}
}

func TestTheSweepGivesADeadNodesTeamHoldBackToTheTeamOnce(t *testing.T) {
	for _, f := range factories(t) {
		t.Run(f.name, func(t *testing.T) {
			e, teamID := teamEnv(t, func(st store.Store) Balances { return f.make(t, st) })
			ctx := context.Background()
			if err := e.svc.TakeLease(ctx, -time.Second); err != nil {
				t.Fatal(err)
			}
			h, err := e.svc.Reserve(ctx, e.acct, "settled", 100)
			if err != nil {
				t.Fatal(err)
			}
			h.Settle(ctx, 40, store.UsageLog{})
			if _, err := e.svc.Reserve(ctx, e.acct, "abandoned", 70); err != nil {
				t.Fatal(err)
			}
			e.flush(t)
			next := NewService(NewMemoryBalances(e.st), e.w, 500000)
			if f.name == "redis" {
				next = NewService(e.svc.Balances(), e.w, 500000)
			}
			released := 0
			for range 2 {
				n, err := next.Sweep(ctx)
				if err != nil {
					t.Fatal(err)
				}
				released += n
			}
			if released != 1 {
				t.Fatalf("released %d holds, want 1", released)
			}
			e.checkTeam(t, next, teamID, 260, 1000, 460)
		})
	}
}

func TestAJournalRecordNamesTheTeamThatPaid(t *testing.T) {
	cases := []struct {
		name   string
		record string
		want   journalRecord
	}{
		{"a user's own balance, as every release wrote it", "7 3 -30", journalRecord{payer: User(7), tokenID: 3, delta: -30, ok: true}},
		{"a team's shared balance", payerField(Payer{UserID: 7, TeamID: 9}) + " 0 12",
			journalRecord{payer: Payer{UserID: 7, TeamID: 9}, delta: 12, ok: true}},
		{"a team that is not a number", "7:x 0 12", journalRecord{payer: User(7), delta: 12}},
		{"too few fields", "7 0", journalRecord{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := parseRecord(c.record); got != c.want {
				t.Errorf("parseRecord(%q) = %+v, want %+v", c.record, got, c.want)
			}
		})
	}
}
