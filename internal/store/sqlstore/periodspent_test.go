package sqlstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A batch holds its reservation against the period budgets until it is
// billed, with no row yet: a budget counter loaded afresh (a restart
// without Redis) counts what its kept holds of the period hold, and
// nothing of a task's hold (its row is written at submit), of a live
// call's (its node's counter has it), or of a hold of an earlier period.
func TestPeriodSpendingCountsTheKeptHoldsOfBatches(t *testing.T) {
	for name, s := range trafficStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			u := &store.User{Username: "u", PasswordHash: "x", Role: "user", Group: "default"}
			if err := s.Users().Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			day := time.Now().UTC().Truncate(24 * time.Hour)
			at := day.Add(time.Minute)
			open := func(key, owner string, amount int64, created time.Time) store.BillingItem {
				return store.BillingItem{
					Entry: &store.LedgerEntry{Key: key + ":" + store.LedgerReserve, Kind: store.LedgerReserve, UserID: u.ID, TokenID: 3, Delta: -amount, CreatedAt: created},
					Open:  &store.Hold{Key: key, Owner: owner, UserID: u.ID, TokenID: 3, Amount: amount, CreatedAt: created}}
			}
			items := []store.BillingItem{
				open("batch:batch_a:m1", "", 300, at),
				open("batch:batch_a:more:1", "", 50, at),
				open("batch:batch_old:m1", "", 7000, day.Add(-time.Hour)),
				open(store.TaskHoldPrefix+"x", "", 900, at),
				open("call-1", "node-a", 800, at),
			}
			if _, err := s.WriteItems(ctx, items); err != nil {
				t.Fatal(err)
			}
			// The second row a plan paid: it spent no money, so no budget.
			planPaid := json.RawMessage(`{"stream":false,` + store.PlanMarker + `1,"grant":1,"window":"x","windows":[1]}}`)
			if err := s.Logs().Insert(ctx, []store.UsageLog{{Type: store.LogConsume, UserID: u.ID, TokenID: 3, Quota: 40, CreatedAt: at},
				{Type: store.LogConsume, UserID: u.ID, TokenID: 3, Quota: 9000, Other: planPaid, CreatedAt: at}}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				kind string
				id   int64
			}{{store.SubjectUser, u.ID}, {store.SubjectToken, 3}} {
				if n, err := s.Traffic().PeriodSpent(ctx, c.kind, c.id, day); err != nil || n != 40+300+50 {
					t.Errorf("%s spent %d %v, want the money row and the batch's kept holds, not the plan-paid row: %d", c.kind, n, err, 40+300+50)
				}
			}
		})
	}
}
