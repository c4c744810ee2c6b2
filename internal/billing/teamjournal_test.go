package billing

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// readsBeforeTeams is how a node of a version before teams read a journal
// record: the payer a plain user id. A record it cannot read it drops.
func readsBeforeTeams(rec string) bool {
	f := strings.SplitN(rec, " ", 4)
	if len(f) < 3 {
		return false
	}
	for _, s := range f[:3] {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return false
		}
	}
	return true
}

// During a rolling deploy a node of a version before teams may sweep a
// node of this one. The journal it reads holds only records it can read
// (users' own balances); the moves of a team's shared balance are in the
// team journal, which only this version reads: a dead node's lost team
// reserve is given back and its answered team call written, once.
func TestTeamMovesAreJournaledWhereANodeBeforeTeamsNeverSeesThem(t *testing.T) {
	var shared *balancesFactory
	for _, f := range factories(t) {
		if f.name == "redis" {
			shared = &f
		}
	}
	if shared == nil {
		t.Skip("set TURNPIKE_TEST_REDIS to run the Redis journal test")
	}
	e, teamID := teamEnv(t, func(st store.Store) Balances { return shared.make(t, st) })
	ctx := context.Background()
	dead := NewService(e.svc.Balances(), NewWriter(e.st, quietLog(), time.Hour, 1<<20), 500000)
	if err := dead.TakeLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := dead.Reserve(ctx, e.acct, "team-lost", 100); err != nil {
		t.Fatal(err)
	}
	answered, err := dead.Reserve(ctx, e.acct, "team-answered", 50)
	if err != nil {
		t.Fatal(err)
	}
	answered.Settle(ctx, 20, store.UsageLog{UserID: e.userID, TokenID: e.tokenID, Model: "team-model"})
	own := Account{UserID: e.userID, TokenID: e.tokenID}
	if _, err := dead.Reserve(ctx, own, "own-lost", 30); err != nil {
		t.Fatal(err)
	}

	r := dead.Balances().(*redisBalances)
	users, _ := r.rdb.HGetAll(ctx, r.journalKey(r.cur(), dead.Node())).Result()
	teams, _ := r.rdb.HGetAll(ctx, r.teamJournalKey(r.cur(), dead.Node())).Result()
	for k, rec := range users {
		if !readsBeforeTeams(rec) {
			t.Errorf("record %s = %q in the journal a node before teams reads: it would drop it", k, rec)
		}
	}
	if _, ok := users["own-lost:reserve"]; !ok || len(users) != 1 {
		t.Errorf("users' journal %v, want only the own-balance reserve", users)
	}
	if len(teams) != 3 || parseRecord(teams["team-lost:reserve"]).payer.TeamID != teamID {
		t.Errorf("team journal %v, want the three team moves naming team %d", teams, teamID)
	}

	if err := dead.TakeLease(ctx, -time.Second); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	e.checkTeam(t, e.svc, teamID, 280, 1000, 500-20)
	rows, _, err := e.st.Logs().List(ctx, store.LogFilter{Type: store.LogConsume, Model: "team-model"}, store.Page{Page: 1, PageSize: 10})
	if err != nil || len(rows) != 1 || rows[0].Quota != 20 {
		t.Fatalf("the answered team call's rows: %+v (%v), want one of 20", rows, err)
	}
	if gone, err := e.svc.Abandoned(ctx, dead.Node()); err != nil || !gone {
		t.Fatalf("the dead node is abandoned: %v (%v), want true once both its journals are empty", gone, err)
	}
}
