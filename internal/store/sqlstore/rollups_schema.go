package sqlstore

// rollupsMigration adds the hourly rollups of the usage rows (CONTRACT §20)
// and the watermark of their backfill. The billing writer adds each batch's
// rows to their buckets in the batch's own transaction, so a bucket is
// exact at every commit; the rows written before this migration are folded
// in by the backfill, from next_id up to (not including) below_id. day
// is the bucket's hour truncated to its UTC day, kept so that a report per
// day groups by a column on every dialect.
var rollupsMigration = Migration{Version: 160, Name: "usage rollups", SQL: `
CREATE TABLE usage_rollups (
	hour {{time}} NOT NULL,
	day {{time}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	model {{string}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	team_id {{bigint}} NOT NULL,
	type {{string}} NOT NULL,
	requests {{bigint}} NOT NULL,
	input_tokens {{bigint}} NOT NULL,
	output_tokens {{bigint}} NOT NULL,
	cache_read_tokens {{bigint}} NOT NULL,
	quota {{bigint}} NOT NULL,
	upstream_cost_pico {{bigint}} NOT NULL,
	errors {{bigint}} NOT NULL,
	PRIMARY KEY (hour, user_id, token_id, model, channel_id, team_id, type)
) {{options}};
CREATE TABLE usage_rollup_backfill (
	id {{int}} NOT NULL PRIMARY KEY,
	next_id {{bigint}} NOT NULL,
	below_id {{bigint}} NOT NULL
) {{options}};
INSERT INTO usage_rollup_backfill (id, next_id, below_id) SELECT 1, COALESCE(MIN(id), 1), COALESCE(MAX(id), 0) + 1 FROM usage_logs;
`}

// logListMigration gives every filter of the usage log an index that
// leads with the filter and ends with the id the list is ordered by, so a
// filtered page (first or after a cursor) is one index range read
// backwards, never a sort of every match. They replace the single-column
// channel, model and type indexes, whose work they do; the user and token
// indexes on created_at stay for the traffic budgets' sums.
//
// On PostgreSQL the indexes are dropped and built CONCURRENTLY, outside
// the migration's transaction (Online): a plain CREATE INDEX holds a lock
// that makes every usage write wait for the whole build, minutes on a log
// of millions of rows. Each build is preceded by a drop of the same name,
// so a build a crash left invalid is built again, not kept. Databases that
// applied the first form of this migration have the same indexes.
var logListMigration = Migration{Version: 161, Name: "usage log list indexes", SQL: `
DROP INDEX IF EXISTS usage_logs_channel_idx;
DROP INDEX IF EXISTS usage_logs_model_idx;
DROP INDEX IF EXISTS usage_logs_type_idx;
CREATE INDEX usage_logs_user_id_idx ON usage_logs (user_id, id);
CREATE INDEX usage_logs_token_id_idx ON usage_logs (token_id, id);
CREATE INDEX usage_logs_channel_id_idx ON usage_logs (channel_id, id);
CREATE INDEX usage_logs_model_id_idx ON usage_logs (model, id);
CREATE INDEX usage_logs_type_id_idx ON usage_logs (type, id);
`,
	PerDialect: map[Dialect]string{
		// MySQL builds an index in place without blocking writes (InnoDB
		// online DDL, LOCK=NONE); only its brief metadata lock at the
		// start and end waits for running transactions.
		MySQL: `
DROP INDEX usage_logs_channel_idx ON usage_logs;
DROP INDEX usage_logs_model_idx ON usage_logs;
DROP INDEX usage_logs_type_idx ON usage_logs;
CREATE INDEX usage_logs_user_id_idx ON usage_logs (user_id, id) ALGORITHM=INPLACE LOCK=NONE;
CREATE INDEX usage_logs_token_id_idx ON usage_logs (token_id, id) ALGORITHM=INPLACE LOCK=NONE;
CREATE INDEX usage_logs_channel_id_idx ON usage_logs (channel_id, id) ALGORITHM=INPLACE LOCK=NONE;
CREATE INDEX usage_logs_model_id_idx ON usage_logs (model, id) ALGORITHM=INPLACE LOCK=NONE;
CREATE INDEX usage_logs_type_id_idx ON usage_logs (type, id) ALGORITHM=INPLACE LOCK=NONE;
`,
		Postgres: "",
	},
	Online: map[Dialect][]string{Postgres: {
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_channel_idx",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_model_idx",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_type_idx",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_user_id_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_user_id_idx ON usage_logs (user_id, id)",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_token_id_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_token_id_idx ON usage_logs (token_id, id)",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_channel_id_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_channel_id_idx ON usage_logs (channel_id, id)",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_model_id_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_model_id_idx ON usage_logs (model, id)",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_type_id_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_type_id_idx ON usage_logs (type, id)",
	}},
}

// dailyRollupsMigration adds the daily layer of the usage rollups: the
// hourly buckets summed per UTC day, kept by the billing writer in the same
// transaction as the hourly ones. A 30-day report reads 30 daily buckets
// of each combination instead of 720 hourly ones. The days so far are
// summed from the hourly table, which holds every row the backfill has
// folded; the backfill adds the rest to both layers.
var dailyRollupsMigration = Migration{Version: 166, Name: "daily usage rollups", SQL: `
CREATE TABLE usage_rollups_daily (
	day {{time}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	model {{string}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	team_id {{bigint}} NOT NULL,
	type {{string}} NOT NULL,
	requests {{bigint}} NOT NULL,
	input_tokens {{bigint}} NOT NULL,
	output_tokens {{bigint}} NOT NULL,
	cache_read_tokens {{bigint}} NOT NULL,
	quota {{bigint}} NOT NULL,
	upstream_cost_pico {{bigint}} NOT NULL,
	errors {{bigint}} NOT NULL,
	PRIMARY KEY (day, user_id, token_id, model, channel_id, team_id, type)
) {{options}};
INSERT INTO usage_rollups_daily (day, user_id, token_id, model, channel_id, team_id, type,
	requests, input_tokens, output_tokens, cache_read_tokens, quota, upstream_cost_pico, errors)
SELECT day, user_id, token_id, model, channel_id, team_id, type,
	SUM(requests), SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), SUM(quota), SUM(upstream_cost_pico), SUM(errors)
FROM usage_rollups GROUP BY day, user_id, token_id, model, channel_id, team_id, type;
`}
