package sqlstore

// reportRollupsMigration adds the report rollups: the daily usage buckets
// summed per dimension (user, key, model, channel or team), day and type,
// so that a report per day reads one bucket per line it answers. The
// usage report by key over 30 days read 24,000 daily buckets (one per key,
// model, channel and day) and PostgreSQL hashed them into 12,000 groups it
// planned as 2,500: most of its time at 10 million rows, and p95 above the
// 300 ms of CONTRACT §20 whenever the machine was busy. Here the same
// report is a range read of its 12,000 lines.
//
// The billing writer keeps the table in the batch's transaction. The rows
// already in the database are folded by the rollups' backfill, from
// report_next_id up to (not including) report_below_id, and the rows a
// node of an earlier release writes meanwhile carry usage_logs.report_pending
// (the column's default, which such a node's insert does not name) and are
// folded by the catch-up, as channelRollupsMigration does for the channel
// rollups. Until both are done the reports read the daily buckets, as
// before.
var reportRollupsMigration = Migration{Version: 230, Name: "report rollups", SQL: `
ALTER TABLE usage_logs ADD COLUMN report_pending INTEGER NULL DEFAULT 1;
CREATE INDEX usage_logs_report_pending_idx ON usage_logs (id) WHERE report_pending = 1;
` + reportRollupTable + reportWatermark,
	PerDialect: map[Dialect]string{
		MySQL: `
ALTER TABLE usage_logs ADD COLUMN report_pending TINYINT NULL, ALGORITHM=INSTANT;
ALTER TABLE usage_logs ALTER COLUMN report_pending SET DEFAULT 1, ALGORITHM=INSTANT;
CREATE INDEX usage_logs_report_pending_idx ON usage_logs (report_pending, id) ALGORITHM=INPLACE LOCK=NONE;
` + Expand(MySQL, reportRollupTable+reportWatermark),
		Postgres: Expand(Postgres, reportRollupTable+reportWatermark),
	},
	// The column and its default in one statement, before the range is
	// taken (Online runs before the script): a row an earlier release
	// writes is either below the range's end or marked.
	Online: map[Dialect][]string{Postgres: {
		"ALTER TABLE usage_logs ADD COLUMN IF NOT EXISTS report_pending SMALLINT NULL, ALTER COLUMN report_pending SET DEFAULT 1",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_report_pending_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_report_pending_idx ON usage_logs (id) WHERE report_pending = 1",
	}},
}

// reportRollupTable keys a bucket by its dimension first: a report reads
// one dimension's days in one range of the key. dim and type are short
// (store.Dim*, the log types), which keeps the key well inside MySQL's
// 3,072 bytes beside a model name.
const reportRollupTable = `
CREATE TABLE usage_report_daily (
	dim VARCHAR(16) NOT NULL,
	day {{time}} NOT NULL,
	dim_value {{string}} NOT NULL,
	type VARCHAR(32) NOT NULL,
	requests {{bigint}} NOT NULL,
	input_tokens {{bigint}} NOT NULL,
	output_tokens {{bigint}} NOT NULL,
	cache_read_tokens {{bigint}} NOT NULL,
	quota {{bigint}} NOT NULL,
	upstream_cost_pico {{bigint}} NOT NULL,
	errors {{bigint}} NOT NULL,
	PRIMARY KEY (dim, day, dim_value, type)
) {{options}};
`

// reportWatermark is the range of rows the backfill folds into the report
// rollups: every row there is now.
const reportWatermark = `
ALTER TABLE usage_rollup_backfill ADD COLUMN report_next_id {{bigint}} NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup_backfill ADD COLUMN report_below_id {{bigint}} NOT NULL DEFAULT 0;
` + reportRestartSQL

// reportRestartSQL empties the report rollups and moves their range over
// every row.
const reportRestartSQL = `
DELETE FROM usage_report_daily;
UPDATE usage_rollup_backfill SET report_next_id = (SELECT COALESCE(MIN(id), 1) FROM usage_logs),
	report_below_id = (SELECT COALESCE(MAX(id), 0) + 1 FROM usage_logs) WHERE id = 1;
`
