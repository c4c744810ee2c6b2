package ratelimit

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// BenchmarkBudgetHoldSettleRedis is a call's period-budget work on the
// Redis path: the journaled share and its settle (one script run each;
// the settle keeps the record, marked settled).
func BenchmarkBudgetHoldSettleRedis(b *testing.B) {
	now := time.Now()
	s, id := redisService(b, &now)
	owner := "node-bench-" + strconv.FormatInt(id, 10)
	s.JournalAs(owner)
	// The settled records stay for a sweep to trim; none runs here.
	b.Cleanup(func() {
		rb := s.be.(*redisBackend)
		rb.rdb.Del(context.Background(), rb.budgetJournalKey(owner))
		rb.rdb.SRem(context.Background(), rb.budgetOwnersKey(), owner)
	})
	set(b, s, store.SubjectToken, strconv.FormatInt(id, 10), Limits{PeriodQuota: 1 << 40, Period: Month})
	p := s.For(Subject{TokenID: id})
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h, err := p.Hold(ctx, 100, "bench-"+strconv.Itoa(i))
		if err != nil || h == nil {
			b.Fatal(h, err)
		}
		h.Settle(ctx, 60)
	}
}
