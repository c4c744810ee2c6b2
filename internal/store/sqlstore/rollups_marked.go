package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// A markedFamily is a rollup family added after the first rollups (the
// channel rollups, the report rollups). Each has a backfill range of its
// own in usage_rollup_backfill (<name>_next_id up to <name>_below_id: the
// rows there were when it was added) and a mark on usage_logs
// (<name>_pending) that a node of an earlier release leaves on the rows it
// writes without the family's buckets; both are folded the same way.
type markedFamily struct {
	name       string
	readyQuery string
	add        func(r rollupRepo, ctx context.Context, tx *sql.Tx, b *batchStmts, logs []store.UsageLog) error
}

func newMarkedFamily(name string, add func(rollupRepo, context.Context, *sql.Tx, *batchStmts, []store.UsageLog) error) markedFamily {
	return markedFamily{
		name: name,
		add:  add,
		readyQuery: "SELECT " + name + "_next_id, " + name + "_below_id, CASE WHEN EXISTS (SELECT 1 FROM usage_logs " +
			"WHERE " + name + "_pending = 1 AND id >= b." + name + "_below_id) THEN 1 ELSE 0 END FROM usage_rollup_backfill b WHERE b.id = 1",
	}
}

var (
	channelFamily = newMarkedFamily("channel", func(r rollupRepo, ctx context.Context, tx *sql.Tx, b *batchStmts, logs []store.UsageLog) error {
		return r.s.addChannelRollups(ctx, tx, b, foldChannels(logs, now()))
	})
	reportFamily = newMarkedFamily("report", func(r rollupRepo, ctx context.Context, tx *sql.Tx, b *batchStmts, logs []store.UsageLog) error {
		hourly, _ := foldRollups(logs, now(), false)
		return addReportRollups(ctx, tx, b, dailyBuckets(hourly))
	})
)

// markedReady is false while f's range has rows left or a row of an
// earlier release waits to be folded: readers use the older rollups then.
func (r rollupRepo) markedReady(ctx context.Context, f markedFamily) (bool, error) {
	var next, below, pending int64
	err := r.s.db.QueryRowContext(ctx, f.readyQuery).Scan(&next, &below, &pending)
	return next >= below && pending == 0, wrap(err, f.name+" rollup watermark")
}

// markedBackfill folds up to limit rows into f's rollups within tx, which
// holds the watermark's lock: first the range of rows there were when f
// was added (moving its start past them), then the rows marked since
// (clearing their marks).
func (r rollupRepo) markedBackfill(ctx context.Context, tx *sql.Tx, b *batchStmts, f markedFamily, limit int) (more bool, err error) {
	var next, below int64
	if err := tx.QueryRowContext(ctx, "SELECT "+f.name+"_next_id, "+f.name+"_below_id FROM usage_rollup_backfill WHERE id = 1").Scan(&next, &below); err != nil {
		return false, err
	}
	q, args := logSelect+" WHERE id >= ? AND id < ? ORDER BY id LIMIT ?", []any{next, below, limit}
	if next >= below {
		q, args = logSelect+" WHERE "+f.name+"_pending = 1 AND id >= ? ORDER BY id LIMIT ?", []any{below, limit}
		if r.s.dialect != SQLite {
			q += " FOR UPDATE"
		}
	}
	rows, err := tx.QueryContext(ctx, r.s.Rebind(q), args...)
	if err != nil {
		return false, err
	}
	logs, err := collect(rows, scanLog)
	if err != nil || len(logs) == 0 && next >= below {
		return false, err
	}
	if err := f.add(r, ctx, tx, b, logs); err != nil {
		return false, err
	}
	if next < below {
		return r.moveMarkedRange(ctx, tx, f, logs, limit, below)
	}
	return r.clearMarks(ctx, tx, f, logs, limit)
}

// moveMarkedRange moves f's range past the rows just folded.
func (r rollupRepo) moveMarkedRange(ctx context.Context, tx *sql.Tx, f markedFamily, logs []store.UsageLog, limit int, below int64) (bool, error) {
	to := below
	if len(logs) == limit {
		to = logs[len(logs)-1].ID + 1
	}
	_, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE usage_rollup_backfill SET "+f.name+"_next_id = ? WHERE id = 1"), to)
	return to < below, err
}

// clearMarks takes f's mark off the rows just folded.
func (r rollupRepo) clearMarks(ctx context.Context, tx *sql.Tx, f markedFamily, logs []store.UsageLog, limit int) (bool, error) {
	ids := make([]any, len(logs))
	for i, l := range logs {
		ids[i] = l.ID
	}
	_, err := tx.ExecContext(ctx, r.s.Rebind("UPDATE usage_logs SET "+f.name+"_pending = NULL WHERE id IN (?"+
		strings.Repeat(", ?", len(ids)-1)+")"), ids...)
	return len(logs) == limit, err
}
