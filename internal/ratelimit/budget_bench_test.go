package ratelimit

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// BenchmarkBudgetHoldSettleRedis is a call's period-budget work on the
// Redis path: the journaled share and its settle (one script run each).
func BenchmarkBudgetHoldSettleRedis(b *testing.B) {
	now := time.Now()
	s, id := redisService(b, &now)
	s.JournalAs("node-bench-" + strconv.FormatInt(id, 10))
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
