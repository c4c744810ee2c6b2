package archive

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// Job archives and deletes the usage rows older than the retention.
type Job struct {
	Logs   store.LogRepo
	Bucket Bucket
	Prefix string
	// Days is the retention in days (0: nothing is archived).
	Days int
	Now  func() time.Time
	Log  *slog.Logger
	// PartRows bounds the rows of one part (and so the memory a part
	// takes while it is written); DeleteBatch the rows of one delete,
	// with Pause between two, so the billing writer's inserts never wait
	// long behind the archive.
	PartRows    int
	DeleteBatch int
	Pause       time.Duration
	// IsNotFound tells the bucket's missing-object error.
	IsNotFound func(error) bool
	// Contents, when set, moves the logged contents the database keeps
	// for a window to the bucket and deletes them there (content logging,
	// CONTRACT §20), so they leave with their day's rows.
	Contents func(ctx context.Context, w store.Window) (int64, error)
}

// DayResult is what a run did with one day.
type DayResult struct {
	Day               string
	Archived, Deleted int64
}

// Run archives every whole UTC day older than the retention, oldest
// first, and deletes each day's rows once its archive is read back and
// agrees with them.
func (j *Job) Run(ctx context.Context) ([]DayResult, error) {
	if j.Days <= 0 {
		return nil, nil
	}
	cut := utcDay(j.Now()).AddDate(0, 0, -j.Days)
	var out []DayResult
	for {
		oldest, ok, err := j.Logs.Oldest(ctx)
		if err != nil || !ok || !oldest.Before(cut) {
			return out, err
		}
		res, err := j.day(ctx, utcDay(oldest))
		if err != nil {
			return out, fmt.Errorf("archive %s: %w", utcDay(oldest).Format(time.DateOnly), err)
		}
		out = append(out, res)
		if res.Deleted == 0 {
			// Nothing could be deleted (rows the archive does not hold
			// appeared meanwhile): the next run tries again.
			return out, nil
		}
	}
}

// day archives one day: the rows not yet in its archive become new parts,
// the manifest is rewritten, every part is read back and checked against
// the manifest and the rows, and only then are the rows deleted.
func (j *Job) day(ctx context.Context, day time.Time) (DayResult, error) {
	res := DayResult{Day: day.Format(time.DateOnly)}
	w := store.Window{Since: day, Until: day.Add(24 * time.Hour)}
	m, err := j.manifest(ctx, day)
	if err != nil {
		return res, err
	}
	held, err := j.readBack(ctx, day, m)
	if err != nil {
		return res, err
	}
	n, err := j.writeNew(ctx, day, w, &m, held)
	if err != nil {
		return res, err
	}
	res.Archived = n
	if held, err = j.readBack(ctx, day, m); err != nil {
		return res, err
	}
	if err := j.check(ctx, w, m, held); err != nil {
		return res, err
	}
	if j.Contents != nil {
		if _, err := j.Contents(ctx, w); err != nil {
			return res, fmt.Errorf("contents: %w", err)
		}
	}
	res.Deleted, err = j.delete(ctx, w, m.MaxID)
	if err == nil {
		j.Log.Info("usage archive: day archived and deleted", "day", res.Day, "rows", m.Rows, "quota", m.Quota, "deleted", res.Deleted)
	}
	return res, err
}

// delete removes the day's rows up to maxID in small batches.
func (j *Job) delete(ctx context.Context, w store.Window, maxID int64) (int64, error) {
	var total int64
	for {
		n, err := j.Logs.PruneRange(ctx, w, maxID, j.DeleteBatch)
		total += n
		if err != nil || n < int64(j.DeleteBatch) {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(j.Pause):
		}
	}
}
