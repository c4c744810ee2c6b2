package plans

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkDrawTakeSettleRedis is a plan-paid call's window work on the
// Redis path: the journaled take and its settle (one script run each).
func BenchmarkDrawTakeSettleRedis(b *testing.B) {
	e := newEnv(b, true)
	s := e.nodeNamed(b, "node-bench", nil)
	ctx := context.Background()
	hs := s.Covering(user, "default", "m1")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d, err := s.Take(ctx, hs, user, 30, "bench-"+strconv.Itoa(i))
		if err != nil || d == nil {
			b.Fatal(d, err)
		}
		d.Settle(ctx, 0)
	}
}
