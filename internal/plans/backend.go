package plans

import (
	"context"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// backend keeps the windows' live counts: in Redis when nodes share one,
// else in the database. take reserves in every window or in none; add
// corrects the windows that still have the given starts; live reads the
// windows as they stand (a window never opened has start 0).
type backend interface {
	take(ctx context.Context, grant int64, wins []store.PlanTake, nowMS, amount int64) (store.PlanTaken, error)
	add(ctx context.Context, grant int64, starts []int64, delta int64) error
	live(ctx context.Context, grant int64, n int) ([]store.PlanWindowState, error)
}

// sqlBackend is the database path: one transaction per draw with the
// grant's window rows locked, so it is exact across nodes without Redis.
type sqlBackend struct{ st store.PlanRepo }

func (b sqlBackend) take(ctx context.Context, grant int64, wins []store.PlanTake, nowMS, amount int64) (store.PlanTaken, error) {
	return b.st.Take(ctx, grant, wins, nowMS, amount)
}

func (b sqlBackend) add(ctx context.Context, grant int64, starts []int64, delta int64) error {
	return b.st.Add(ctx, grant, starts, delta)
}

func (b sqlBackend) live(ctx context.Context, grant int64, n int) ([]store.PlanWindowState, error) {
	ws, err := b.st.Windows(ctx, grant)
	if err != nil {
		return nil, err
	}
	out := make([]store.PlanWindowState, n)
	for i := range out {
		out[i] = store.PlanWindowState{GrantID: grant, Index: i}
	}
	for _, w := range ws {
		if w.Index < n {
			out[w.Index] = w
		}
	}
	return out, nil
}
