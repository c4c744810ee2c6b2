package sqlstore

import (
	"context"
	"database/sql"
	"strings"
)

// booksRollupsMigration adds the books rollups: per UTC day and account,
// the ledger's entries by class (store.LedgerClassOf) and the usage rows by
// type as reconciliation counts them (store.RowBooksOf). A reconciliation
// of 120 days summed every row and read every entry of the window into
// the process (minutes at 10 million rows); it now reads the days'
// buckets and the raw rows and entries of the window's cut days only.
//
// The billing writer keeps both in the batch's transaction. The usage
// rows' buckets are kept wherever the usage rollups are (the writer, the
// backfill, the catch-up of marked rows), so they are rebuilt with them;
// the fill below leaves out the rows those will fold. Ledger entries get
// the mark usage rows have (rollupPendingMigration): a node of an earlier
// release writes entries without buckets, marked by the column's default,
// and the catch-up folds them; a reader adds the marked entries it finds
// to the buckets, in the same statement, so it is exact meanwhile.
var booksRollupsMigration = Migration{Version: 210, Name: "books rollups", SQL: `
ALTER TABLE quota_ledger ADD COLUMN rollup_pending INTEGER NULL DEFAULT 1;
CREATE INDEX quota_ledger_rollup_pending_idx ON quota_ledger (id) WHERE rollup_pending = 1;
` + booksRollupTables + ledgerFill(SQLite) + rowBooksFill(SQLite) + `
UPDATE quota_ledger SET rollup_pending = NULL;
`,
	PerDialect: map[Dialect]string{
		MySQL: `
ALTER TABLE quota_ledger ADD COLUMN rollup_pending TINYINT NULL, ALGORITHM=INSTANT;
ALTER TABLE quota_ledger ALTER COLUMN rollup_pending SET DEFAULT 1, ALGORITHM=INSTANT;
CREATE INDEX quota_ledger_rollup_pending_idx ON quota_ledger (rollup_pending, id) ALGORITHM=INPLACE LOCK=NONE;
` + Expand(MySQL, booksRollupTables) + ledgerFill(MySQL) + " WHERE rollup_pending IS NULL" + ledgerFillGroup + rowBooksFill(MySQL),
		// Analysed at once: a plan made without statistics read every
		// bucket of the team index for a user's (team_id = 0 is most).
		Postgres: Expand(Postgres, booksRollupTables) + ledgerFill(Postgres) + " WHERE rollup_pending IS NULL" + ledgerFillGroup +
			rowBooksFill(Postgres) + "ANALYZE ledger_rollups_daily;\nANALYZE usage_books_daily;\n",
	},
	// One statement adds the column and its default (the entries already
	// there stay unmarked and are summed by the fill); the partial index
	// holds only marked entries, none outside a rolling upgrade.
	Online: map[Dialect][]string{Postgres: {
		"ALTER TABLE quota_ledger ADD COLUMN IF NOT EXISTS rollup_pending SMALLINT NULL, ALTER COLUMN rollup_pending SET DEFAULT 1",
		"DROP INDEX CONCURRENTLY IF EXISTS quota_ledger_rollup_pending_idx",
		"CREATE INDEX CONCURRENTLY quota_ledger_rollup_pending_idx ON quota_ledger (id) WHERE rollup_pending = 1",
	}},
}

// booksRollupTables are the two layers; the account indexes serve the
// balances read per account (drifts, a key's balance at a time).
const booksRollupTables = `
CREATE TABLE ledger_rollups_daily (
	day {{time}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	team_id {{bigint}} NOT NULL,
	class {{string}} NOT NULL,
	entries {{bigint}} NOT NULL,
	delta {{bigint}} NOT NULL,
	token_delta {{bigint}} NOT NULL,
	used {{bigint}} NOT NULL,
	PRIMARY KEY (day, user_id, token_id, team_id, class)
) {{options}};
CREATE INDEX ledger_rollups_daily_user_idx ON ledger_rollups_daily (user_id, day);
CREATE INDEX ledger_rollups_daily_token_idx ON ledger_rollups_daily (token_id, day);
CREATE INDEX ledger_rollups_daily_team_idx ON ledger_rollups_daily (team_id, day);
CREATE TABLE usage_books_daily (
	day {{time}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	team_id {{bigint}} NOT NULL,
	type {{string}} NOT NULL,
	task {{int}} NOT NULL,
	row_count {{bigint}} NOT NULL,
	quota {{bigint}} NOT NULL,
	PRIMARY KEY (day, user_id, token_id, team_id, type, task)
) {{options}};
`

// dayOf is the UTC midnight of created_at, written as the billing writer
// writes a day (dbTime of the midnight: on SQLite, its exact text).
func dayOf(d Dialect) string {
	switch d {
	case Postgres:
		return "date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
	case MySQL:
		return "CAST(DATE(created_at) AS DATETIME(6))"
	}
	return "date(created_at) || ' 00:00:00+00:00'"
}

// ledgerClassSQL is store.LedgerClassOf in SQL: a hold's key ends in
// ":<part>" (store.HoldOf), a task's hold key begins "task-".
const ledgerClassSQL = `CASE
	WHEN NOT (idem_key LIKE '%:reserve' OR idem_key LIKE '%:settle' OR idem_key LIKE '%:refund' OR idem_key LIKE '%:release') THEN 'plain'
	WHEN idem_key LIKE 'task-%' THEN CASE WHEN kind = 'reserve' THEN 'task_reserve' WHEN idem_key LIKE '%:reserve' THEN 'plain' ELSE 'task_end' END
	WHEN kind = 'reserve' THEN 'reserve'
	WHEN idem_key LIKE '%:reserve' THEN CASE WHEN kind = 'settle' THEN 'settle_paired' ELSE 'end_paired' END
	WHEN kind = 'settle' THEN 'settle'
	ELSE 'end' END`

// The row's books in SQL (store.RowBooksOf); the markers are
// store.TeamPaidMarker and store.PlanMarker.
const (
	rowTaskSQL  = `CASE WHEN other LIKE '%"surface":"task"%' THEN 1 ELSE 0 END`
	rowTeamSQL  = `CASE WHEN other LIKE '%"paid_by":"team"%' THEN team_id ELSE 0 END`
	rowQuotaSQL = `CASE WHEN other LIKE '%"plan":{"id":%' THEN 0 ELSE quota END`
)

const ledgerFillGroup = " GROUP BY 1, 2, 3, 4, 5;\n"

// ledgerFill sums the entries there are into their buckets (the caller
// adds its condition and ledgerFillGroup; SQLite sums every entry and
// clears the marks its ADD COLUMN gave them).
func ledgerFill(d Dialect) string {
	q := "INSERT INTO ledger_rollups_daily (day, user_id, token_id, team_id, class, entries, delta, token_delta, used)\nSELECT " +
		dayOf(d) + ", user_id, token_id, team_id, " + ledgerClassSQL + ", COUNT(*), SUM(delta), SUM(token_delta), SUM(used) FROM quota_ledger"
	if d == SQLite {
		q += ledgerFillGroup
	}
	return q
}

// rowBooksFill sums the usage rows into their books buckets, leaving out
// the rows the backfill and the catch-up will fold (their range, and the
// marked rows above it).
func rowBooksFill(d Dialect) string {
	return "INSERT INTO usage_books_daily (day, user_id, token_id, team_id, type, task, row_count, quota)\nSELECT " +
		dayOf(d) + ", user_id, token_id, " + rowTeamSQL + ", type, " + rowTaskSQL + ", COUNT(*), SUM(" + rowQuotaSQL + ")" +
		` FROM usage_logs l, usage_rollup_backfill b WHERE b.id = 1 AND NOT (l.id >= b.next_id AND l.id < b.below_id)
	AND NOT (COALESCE(l.rollup_pending, 0) = 1 AND l.id >= b.below_id) GROUP BY 1, 2, 3, 4, 5, 6;
`
}

// rebuildLedgerRollups sums the ledger into its buckets anew, within tx
// (an import, which loaded entries without buckets, marked or not).
func (s *Store) rebuildLedgerRollups(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{"DELETE FROM ledger_rollups_daily", "UPDATE quota_ledger SET rollup_pending = NULL WHERE rollup_pending IS NOT NULL",
		ledgerFill(s.dialect)} {
		if s.dialect != SQLite && strings.HasPrefix(q, "INSERT") {
			q += ledgerFillGroup
		}
		if _, err := tx.ExecContext(ctx, strings.TrimSuffix(strings.TrimSpace(q), ";")); err != nil {
			return err
		}
	}
	return nil
}

// RebuildBooksRollups sums the books rollups anew from the ledger and the
// rows the usage rollups hold, in one transaction: for a database whose
// rows and entries were loaded around the billing writer (a seeded
// benchmark, a repair by hand).
func (s *Store) RebuildBooksRollups(ctx context.Context) error {
	return wrap(s.withTx(ctx, func(tx *sql.Tx) error {
		if err := s.rebuildLedgerRollups(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM usage_books_daily"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, strings.TrimSuffix(strings.TrimSpace(rowBooksFill(s.dialect)), ";"))
		return err
	}), "rebuild books rollups")
}
