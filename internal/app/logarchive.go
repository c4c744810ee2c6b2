package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/turnpike-gw/turnpike/internal/archive"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// archiveRunner runs the usage archive at start and then daily. Every node
// runs it: a day is archived idempotently (the rows the archive holds are
// not written again) and deleting rows already deleted is a no-op.
func archiveRunner(j *archive.Job, log *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		t := time.NewTicker(archive.Every)
		defer t.Stop()
		for {
			days, err := j.Run(ctx)
			if err != nil && ctx.Err() == nil {
				log.Warn("usage archive failed; nothing of the day was deleted, will retry", "days_done", len(days), "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}

// rollupBackfill folds the rows written before the hourly rollups existed
// (or loaded by an import) into them, a bounded transaction at a time
// with a pause between two, until none is left; reports read the rows
// until then.
func rollupBackfill(r store.RollupRepo, log *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		for {
			more, err := r.Backfill(ctx, 5000)
			if err != nil && ctx.Err() == nil {
				log.Warn("usage rollups: backfill failed; will retry", "err", err)
				more = true
			}
			if !more {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
