package plans

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// backend keeps the windows' live counts: in Redis when nodes share one,
// else in the database. take reserves in every window or in none; add
// corrects the windows that still have the given starts; live reads the
// windows as they stand (a window never opened has start 0).
//
// It also keeps the journal of live draws (see Service.Sweep), in the same
// atomic step as the window moves: take records j (nil: none), add applies
// mark, undo drops an entry and takes its count back from its windows,
// once; makeLate takes a settled draw's charge back and keeps it as a late
// draw, once. handOver gives a journaled draw to a durable ticket's record.
type backend interface {
	take(ctx context.Context, grant int64, wins []store.PlanTake, nowMS, amount int64, j *store.PlanDraw) (store.PlanTaken, error)
	add(ctx context.Context, grant int64, starts []int64, delta int64, mark store.PlanMark) error
	live(ctx context.Context, grant int64, n int) ([]store.PlanWindowState, error)
	handOver(ctx context.Context, d store.PlanDraw) error
	owners(ctx context.Context) ([]string, error)
	journal(ctx context.Context, owner string) ([]store.PlanDraw, error)
	undo(ctx context.Context, d store.PlanDraw) (bool, error)
	makeLate(ctx context.Context, d store.PlanDraw, at time.Time) (bool, error)
	forgetOwner(ctx context.Context, owner string) error
}

// sqlBackend is the database path: one transaction per draw with the
// grant's window rows locked, so it is exact across nodes without Redis.
// Its journal is plan_draws, written in the draw's own transaction.
type sqlBackend struct{ st store.PlanRepo }

func (b sqlBackend) take(ctx context.Context, grant int64, wins []store.PlanTake, nowMS, amount int64, j *store.PlanDraw) (store.PlanTaken, error) {
	return b.st.Take(ctx, grant, wins, nowMS, amount, j)
}

func (b sqlBackend) add(ctx context.Context, grant int64, starts []int64, delta int64, mark store.PlanMark) error {
	return b.st.Add(ctx, grant, starts, delta, mark)
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

// handOver turns the journal row into the durable record's (no owner).
func (b sqlBackend) handOver(ctx context.Context, d store.PlanDraw) error {
	return b.st.KeepDraw(ctx, d)
}

func (b sqlBackend) owners(ctx context.Context) ([]string, error) { return b.st.Owners(ctx) }

func (b sqlBackend) journal(ctx context.Context, owner string) ([]store.PlanDraw, error) {
	return b.st.Journal(ctx, owner)
}

func (b sqlBackend) undo(ctx context.Context, d store.PlanDraw) (bool, error) {
	return b.st.Undo(ctx, d)
}

func (b sqlBackend) makeLate(ctx context.Context, d store.PlanDraw, at time.Time) (bool, error) {
	return b.st.MakeLate(ctx, d, at)
}

// forgetOwner has nothing to do: an owner without rows is listed by none.
func (b sqlBackend) forgetOwner(context.Context, string) error { return nil }
