package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// backfillLock reads the watermark and locks its row for the transaction
// (SQLite's write transaction locks the whole database anyway), so two
// nodes never fold the same rows twice.
func (s *Store) backfillLock() string {
	if s.dialect == SQLite {
		return "SELECT next_id, below_id FROM usage_rollup_backfill WHERE id = 1"
	}
	return "SELECT next_id, below_id FROM usage_rollup_backfill WHERE id = 1 FOR UPDATE"
}

// Ready is false while the backfill has rows left or a row written without
// its rollups (rollupPendingMigration) waits to be folded.
func (r rollupRepo) Ready(ctx context.Context) (bool, error) {
	var next, below, pending int64
	err := r.s.db.QueryRowContext(ctx, readyQuery).Scan(&next, &below, &pending)
	return next >= below && pending == 0, wrap(err, "rollup watermark")
}

// Backfill reads the next rows below the watermark's end in id order and
// adds them to their buckets with the watermark moved past them, in one
// transaction: a crash between two steps folds nothing twice. Once those
// are done it folds the rows above the end that were written without
// their rollups (catchUp).
func (r rollupRepo) Backfill(ctx context.Context, limit int) (bool, error) {
	if idle, err := r.nothingToFold(ctx); err != nil || idle {
		return false, err
	}
	// Prepared before the transaction: an in-memory pool's one
	// connection is the transaction's once it begins.
	b, err := r.s.batch(ctx)
	if err != nil {
		return false, wrap(err, "backfill rollups")
	}
	more := false
	err = r.s.withTx(ctx, func(tx *sql.Tx) error {
		var next, below int64
		if err := tx.QueryRowContext(ctx, r.s.backfillLock()).Scan(&next, &below); err != nil {
			return err
		}
		if next >= below {
			moreRows, err := r.catchUp(ctx, tx, b, below, limit)
			if err != nil {
				return err
			}
			moreEntries, err := r.s.catchUpLedger(ctx, tx, b, limit)
			if err != nil {
				return err
			}
			moreChannels, err := r.markedBackfill(ctx, tx, b, channelFamily, limit)
			if err != nil {
				return err
			}
			moreReports, err := r.markedBackfill(ctx, tx, b, reportFamily, limit)
			more = moreRows || moreEntries || moreChannels || moreReports
			return err
		}
		rows, err := tx.QueryContext(ctx, r.s.Rebind(logSelect+" WHERE id >= ? AND id < ? ORDER BY id LIMIT ?"), next, below, limit)
		if err != nil {
			return err
		}
		logs, err := collect(rows, scanLog)
		if err != nil {
			return err
		}
		to := below
		if len(logs) == limit {
			to = logs[len(logs)-1].ID + 1
		}
		if err := r.s.addRollups(ctx, tx, b, logs, now(), false); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE usage_rollup_backfill SET next_id = ? WHERE id = 1"), to)
		more = to < below
		return err
	})
	return more, wrap(err, "backfill rollups")
}

// nothingToFold reads, outside any write transaction, whether every
// range is folded and no marked row or entry waits. The backfill runs on
// every node every few seconds for the life of the process; once it is
// done, this keeps it from taking the write lock (SQLite's only one, which
// the billing writer needs) just to find nothing.
func (r rollupRepo) nothingToFold(ctx context.Context) (bool, error) {
	ready, err := r.Ready(ctx)
	for _, f := range []markedFamily{channelFamily, reportFamily} {
		if !ready || err != nil {
			return false, err
		}
		ready, err = r.markedReady(ctx, f)
	}
	if !ready || err != nil {
		return false, err
	}
	var waiting int
	err = r.s.db.QueryRowContext(ctx, ledgerWaitingQuery).Scan(&waiting)
	return waiting == 0, wrap(err, "ledger rollup marks")
}

const ledgerWaitingQuery = "SELECT CASE WHEN EXISTS (SELECT 1 FROM quota_ledger WHERE rollup_pending = 1) THEN 1 ELSE 0 END"

// Restart empties the rollups and moves the watermark back over every row
// in the database, the channel rollups' too.
func (r rollupRepo) Restart(ctx context.Context) error {
	return wrap(r.s.withTx(ctx, func(tx *sql.Tx) error { return restartRollups(ctx, tx) }), "restart rollups")
}

func restartRollups(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range strings.Split(strings.TrimSpace(restartRollupsSQL+"DELETE FROM usage_books_daily;"+channelRestartSQL+reportRestartSQL), ";") {
		if stmt = strings.TrimSpace(stmt); stmt == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

var _ store.RollupRepo = rollupRepo{}
