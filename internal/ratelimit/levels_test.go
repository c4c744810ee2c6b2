package ratelimit

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// levelBackends runs a test on one node's memory counters and, when
// TURNPIKE_TEST_REDIS is set, on two services sharing one Redis (two
// nodes): base offsets every subject id so runs never share counters.
func levelBackends(t *testing.T, run func(t *testing.T, nodes []*Service, base int64)) {
	t.Run("memory", func(t *testing.T) {
		now := time.Now()
		run(t, []*Service{newTestService(t, &now)}, 0)
	})
	t.Run("redis two nodes", func(t *testing.T) {
		now := time.Now()
		a, base := redisService(t, &now)
		b, _ := redisService(t, &now)
		run(t, []*Service{a, b}, base)
	})
}

func setAll(t *testing.T, nodes []*Service, kind string, id int64, l Limits) {
	for _, s := range nodes {
		set(t, s, kind, strconv.FormatInt(id, 10), l)
	}
}

func refusedLevel(t *testing.T, err error) (code, lvl string) {
	t.Helper()
	var rf *Refused
	if !errors.As(err, &rf) {
		t.Fatalf("want a refusal, got %v", err)
	}
	return rf.Err.Code, rf.Err.Level
}

func TestABudgetRefusalNamesItsLevelAndCountsNothingElsewhere(t *testing.T) {
	levelBackends(t, func(t *testing.T, nodes []*Service, base int64) {
		ctx := context.Background()
		user, token, team, org := base+1, base+2, base+3, base+4
		setAll(t, nodes, store.SubjectToken, token, Limits{PeriodQuota: 1000, Period: Day})
		setAll(t, nodes, store.SubjectUser, user, Limits{PeriodQuota: 1000, Period: Day})
		setAll(t, nodes, store.SubjectTeam, team, Limits{PeriodQuota: 100, Period: Day})
		setAll(t, nodes, store.SubjectOrg, org, Limits{PeriodQuota: 150, Period: Month})
		sub := Subject{UserID: user, TokenID: token, TeamID: team, OrgID: org}
		other := Subject{UserID: base + 5, TeamID: base + 6, OrgID: org} // another team of the org
		s := nodes[len(nodes)-1]
		if _, err := nodes[0].For(sub).Hold(ctx, 80, ""); err != nil {
			t.Fatal(err)
		}
		_, err := s.For(sub).Hold(ctx, 30, "")
		if code, lvl := refusedLevel(t, err); code != "budget_exceeded" || lvl != "team" {
			t.Fatalf("refusal %s at %s, want budget_exceeded at team", code, lvl)
		}
		_, err = s.For(other).Hold(ctx, 71, "")
		if code, lvl := refusedLevel(t, err); code != "budget_exceeded" || lvl != "org" {
			t.Fatalf("refusal %s at %s, want budget_exceeded at org", code, lvl)
		}
		for _, c := range []struct {
			kind string
			id   int64
			want int64
		}{{store.SubjectToken, token, 80}, {store.SubjectUser, user, 80}, {store.SubjectTeam, team, 80}, {store.SubjectOrg, org, 80}} {
			if st, err := s.Period(ctx, c.kind, c.id); err != nil || st.Used != c.want {
				t.Errorf("%s spent %d (%v), want %d: a refused hold must count nowhere", c.kind, st.Used, err, c.want)
			}
		}
	})
}

// Members of one team on every node hold concurrently: what is admitted
// never passes the team's or the organisation's budget.
func TestConcurrentMembersOnTwoNodesNeverOverspendTheTeamOrTheOrg(t *testing.T) {
	levelBackends(t, func(t *testing.T, nodes []*Service, base int64) {
		ctx := context.Background()
		team, org := base+10, base+11
		setAll(t, nodes, store.SubjectTeam, team, Limits{PeriodQuota: 1000, Period: Day})
		setAll(t, nodes, store.SubjectOrg, org, Limits{PeriodQuota: 700, Period: Day})
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for m := range 8 {
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sub := Subject{UserID: base + 100 + int64(m), TeamID: team, OrgID: org}
					if h, err := nodes[m%len(nodes)].For(sub).Hold(ctx, 9, ""); err == nil {
						admitted.Add(9)
						h.Settle(ctx, 9)
					}
				}()
			}
		}
		wg.Wait()
		if got := admitted.Load(); got > 700 || got < 700-8 {
			t.Fatalf("admitted %d under an organisation budget of 700", got)
		}
		st, err := nodes[0].Period(ctx, store.SubjectOrg, org)
		if err != nil || st.Used != admitted.Load() {
			t.Fatalf("org spent %d (%v), admitted %d", st.Used, err, admitted.Load())
		}
	})
}

func TestTeamAndOrgRatesRefuseAtTheirLevel(t *testing.T) {
	levelBackends(t, func(t *testing.T, nodes []*Service, base int64) {
		ctx := context.Background()
		team, org := base+20, base+21
		setAll(t, nodes, store.SubjectTeam, team, Limits{Rate: Rate{RPM: 2}})
		setAll(t, nodes, store.SubjectOrg, org, Limits{Rate: Rate{Concurrency: 3}})
		a := Subject{UserID: base + 30, TeamID: team, OrgID: org}
		b := Subject{UserID: base + 31, TeamID: base + 22, OrgID: org}
		for i := range 2 {
			if _, err := nodes[i%len(nodes)].For(a).Acquire(ctx, 1); err != nil {
				t.Fatal(err)
			}
		}
		_, err := nodes[0].For(a).Acquire(ctx, 1)
		if code, lvl := refusedLevel(t, err); code != "rate_limit_exceeded" || lvl != "team" {
			t.Fatalf("refusal %s at %s, want rate_limit_exceeded at team", code, lvl)
		}
		l, err := nodes[len(nodes)-1].For(b).Acquire(ctx, 1)
		if err != nil || l == nil {
			t.Fatal(err, l)
		}
		_, err = nodes[0].For(b).Acquire(ctx, 1)
		if code, lvl := refusedLevel(t, err); code != "rate_limit_exceeded" || lvl != "org" {
			t.Fatalf("refusal %s at %s, want rate_limit_exceeded at org", code, lvl)
		}
		l.Release(ctx)
		if l, err = nodes[0].For(b).Acquire(ctx, 1); err != nil {
			t.Fatalf("after a release the org has a slot again: %v", err)
		}
		l.Release(ctx)
	})
}

func TestNoTeamMeansNoPlan(t *testing.T) {
	now := time.Now()
	s := newTestService(t, &now)
	set(t, s, store.SubjectTeam, "5", Limits{Rate: Rate{RPM: 1}})
	if p := s.For(Subject{UserID: 1, TokenID: 2, OrgID: 9}); p != nil {
		t.Fatal("a user in no team met a team's limits")
	}
	if p := s.For(Subject{UserID: 1, TeamID: 5}); p == nil || p.team.RPM != 1 {
		t.Fatalf("a member's plan %+v misses its team's rpm", p)
	}
}
