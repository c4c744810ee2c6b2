package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// retention prunes usage log rows older than log_retention_days, in
// bounded batches so a large backlog never holds a long lock against the
// billing writer's inserts. It deletes only usage rows: the ledger, which
// balances are the sum of, is never touched. Every node runs it; deleting
// rows already deleted is a no-op, so nodes need no coordination.
type retention struct {
	logs  store.LogRepo
	days  int
	now   func() time.Time
	log   *slog.Logger
	batch int
	// pause lets other writers in between two batches.
	pause time.Duration
}

// retentionEvery is how often a node prunes.
const retentionEvery = time.Hour

// pruneOnce deletes every row older than the retention, batch by batch,
// and returns how many it deleted.
func (r *retention) pruneOnce(ctx context.Context) (int64, error) {
	cut := r.now().UTC().Add(-time.Duration(r.days) * 24 * time.Hour)
	var total int64
	for {
		n, err := r.logs.Prune(ctx, cut, r.batch)
		total += n
		if err != nil || n < int64(r.batch) {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(r.pause):
		}
	}
}

// run prunes at start and then every retentionEvery until ctx ends.
func (r *retention) run(ctx context.Context) {
	t := time.NewTicker(retentionEvery)
	defer t.Stop()
	for {
		n, err := r.pruneOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("usage log retention: pruning failed; will retry", "deleted", n, "err", err)
		case n > 0:
			r.log.Info("usage log retention: pruned old rows", "deleted", n, "days", r.days)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
