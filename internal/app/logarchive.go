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

// rollupCatchUpEvery is how often a node looks for usage rows written
// without their rollups once the backfill is done: during a rolling
// upgrade a node of an earlier release writes such rows, and reports read
// the rows instead of the rollups until they are folded.
const rollupCatchUpEvery = 5 * time.Second

// rollupBackfill folds the rows written before the hourly rollups existed
// (or loaded by an import) into them, a bounded transaction at a time
// with a pause between two, and then, for as long as the node runs, the
// rows a node without rollups writes (RollupRepo.Backfill). Every node
// runs it; the watermark's lock lets one fold a row, once.
func rollupBackfill(r store.RollupRepo, log *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		for {
			more, err := r.Backfill(ctx, 5000)
			if err != nil && ctx.Err() == nil {
				log.Warn("usage rollups: backfill failed; will retry", "err", err)
			}
			pause := rollupCatchUpEvery
			if more {
				pause = 100 * time.Millisecond
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
		}
	}
}
