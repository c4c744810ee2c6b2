package sqlstore

import (
	"context"
	"database/sql"
	"strings"
)

// rollupPendingMigration marks the usage rows that reach the database
// without their rollups: those of a node of a release before the rollups,
// still running during a rolling upgrade. Such a node's INSERT does not
// name rollup_pending, so the column's default (1) marks its rows; the
// billing writer, which adds its rows to the rollups in the same
// transaction, writes NULL. Backfill folds marked rows into the rollups and
// clears their mark, in one transaction. Rows already in the database keep
// NULL (PostgreSQL and MySQL add the column without a default and set it
// after, in place); SQLite, which cannot change a default, marks them, and
// Backfill ignores marks below the watermark's end.
//
// The rollups are then rebuilt from the rows (Restart): rows an earlier
// release wrote while this release's migrations ran, after migration 160
// had fixed the range of its backfill, are in no range and have no mark.
var rollupPendingMigration = Migration{Version: 200, Name: "usage rows pending rollup", SQL: `
ALTER TABLE usage_logs ADD COLUMN rollup_pending INTEGER NULL DEFAULT 1;
CREATE INDEX usage_logs_rollup_pending_idx ON usage_logs (id) WHERE rollup_pending = 1;
` + restartRollupsSQL,
	PerDialect: map[Dialect]string{
		MySQL: `
ALTER TABLE usage_logs ADD COLUMN rollup_pending TINYINT NULL, ALGORITHM=INSTANT;
ALTER TABLE usage_logs ALTER COLUMN rollup_pending SET DEFAULT 1, ALGORITHM=INSTANT;
CREATE INDEX usage_logs_rollup_pending_idx ON usage_logs (rollup_pending, id) ALGORITHM=INPLACE LOCK=NONE;
` + restartRollupsSQL,
		Postgres: restartRollupsSQL,
	},
	// One statement adds the column and its default, so no row of an
	// earlier release falls between the two; the partial index holds only
	// the marked rows, a handful during an upgrade and none after.
	Online: map[Dialect][]string{Postgres: {
		"ALTER TABLE usage_logs ADD COLUMN IF NOT EXISTS rollup_pending SMALLINT NULL, ALTER COLUMN rollup_pending SET DEFAULT 1",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_rollup_pending_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_rollup_pending_idx ON usage_logs (id) WHERE rollup_pending = 1",
	}},
}

// restartRollupsSQL empties the rollups and moves the backfill's watermark
// back over every row.
const restartRollupsSQL = `
DELETE FROM usage_rollups;
DELETE FROM usage_rollups_daily;
UPDATE usage_rollup_backfill SET next_id = (SELECT COALESCE(MIN(id), 1) FROM usage_logs),
	below_id = (SELECT COALESCE(MAX(id), 0) + 1 FROM usage_logs) WHERE id = 1;
`

// pendingLogs reads the marked rows above the watermark's end, locking them
// (the watermark's lock already keeps a second node out; the row locks make
// MySQL read them as committed now, not as of an older snapshot).
func (s *Store) pendingLogs() string {
	q := logSelect + " WHERE rollup_pending = 1 AND id >= ? ORDER BY id LIMIT ?"
	if s.dialect != SQLite {
		q += " FOR UPDATE"
	}
	return s.Rebind(q)
}

// catchUp folds up to limit marked rows into the rollups and clears their
// marks, within tx, which holds the watermark's lock: two nodes never fold
// a row twice, and a crash folds nothing without clearing its mark.
func (r rollupRepo) catchUp(ctx context.Context, tx *sql.Tx, b *batchStmts, below int64, limit int) (more bool, err error) {
	rows, err := tx.QueryContext(ctx, r.s.pendingLogs(), below, limit)
	if err != nil {
		return false, err
	}
	logs, err := collect(rows, scanLog)
	if err != nil || len(logs) == 0 {
		return false, err
	}
	if err := r.s.addRollups(ctx, tx, b, logs, now(), false); err != nil {
		return false, err
	}
	ids := make([]any, len(logs))
	for i, l := range logs {
		ids[i] = l.ID
	}
	_, err = tx.ExecContext(ctx, r.s.Rebind("UPDATE usage_logs SET rollup_pending = NULL WHERE id IN (?"+
		strings.Repeat(", ?", len(ids)-1)+")"), ids...)
	return len(logs) == limit, err
}

// readyQuery reads the watermark and whether a marked row waits above it.
const readyQuery = "SELECT next_id, below_id, CASE WHEN EXISTS (SELECT 1 FROM usage_logs WHERE rollup_pending = 1 AND id >= b.below_id) " +
	"THEN 1 ELSE 0 END FROM usage_rollup_backfill b WHERE b.id = 1"
