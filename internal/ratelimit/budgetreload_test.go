package ratelimit

import (
	"context"
	"strconv"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Redis loses a node's journal and the counter while the node has a call
// in flight (a flush, a restart without persistence, an eviction). The
// node ends the call: its record is gone, so it leaves a late record
// naming the lost counter. Whoever needs the counter next loads it from
// the rows: when the call's row is stored by then, the load counts it and
// takes the counter off the late record, so the sweep does not count it
// again (on main the budget counted 120 against rows of 60); when the row
// comes after the load, the sweep adds it as before.
func TestACounterLoadedFromTheRowsTakesItselfOffLateRecordsAlreadyStored(t *testing.T) {
	for _, rowFirst := range []bool{true, false} {
		t.Run("row stored before the load "+strconv.FormatBool(rowFirst), func(t *testing.T) {
			lateStores(t, func(t *testing.T, e *lateEnv) {
				ctx := context.Background()
				e.limB.CountLateWith(e.billB)
				hold, share := e.callOnA(t)
				rb := e.limA.be.(*redisBackend)
				lost := append([]string{rb.budgetJournalKey(e.billA.Node())}, share.Keys()...)
				lost[1] = rb.prefix + lost[1]
				must(t, rb.rdb.Del(ctx, lost...).Err()) // Redis loses them
				hold.Settle(ctx, 60, store.UsageLog{UserID: e.acct.UserID, Model: "m"})
				share.Settle(ctx, 60)
				rows := e.limB.st.(*fakeRepo) // what the rows say at the load
				if rowFirst {
					must(t, e.wA.Flush(ctx))
					rows.spent[store.SubjectToken+strconv.FormatInt(e.id, 10)] = 60
				}
				if got := periodUsed(t, e.limB, e.id); got != map[bool]int64{true: 60, false: 0}[rowFirst] {
					t.Fatalf("the loaded counter is %d", got)
				}
				must(t, e.wA.Flush(ctx))
				e.sweepAll(t, "counter loaded from the rows")
				if e.rowsSum(t) != 60 {
					t.Fatalf("rows sum to %d, want 60", e.rowsSum(t))
				}
				if recs, late := e.journalLeft(t); recs != 0 || late != 0 {
					t.Fatalf("%d journal and %d late records left, want none", recs, late)
				}
			})
		})
	}
}
