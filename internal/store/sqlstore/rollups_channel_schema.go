package sqlstore

// channelRollupsMigration adds the channel rollups (store.ChannelKey): per
// hour and per UTC day, the consume and refund rows of each channel's key
// and model. The cache report by key read every consume row of its window
// (45 s at p50 for 30 days of 10 million rows) and the provider comparison
// every row of its channel's days (seconds); the usage rollups have neither
// the key index nor the upstream model.
//
// The billing writer keeps both layers in the batch's transaction. The rows
// already in the database are folded by the rollups' backfill, from
// channel_next_id up to (not including) channel_below_id, and the rows a
// node of an earlier release writes meanwhile (it names rollup_pending but
// not channel_pending, so the column's default marks them) by its
// catch-up, as rollupPendingMigration does for the usage rollups; SQLite,
// which marks every row it has when it adds the column, has those marks
// below the range's end, where the catch-up does not look. Until both are
// done the two reports read rows, as before.
var channelRollupsMigration = Migration{Version: 220, Name: "channel rollups", SQL: `
ALTER TABLE usage_logs ADD COLUMN channel_pending INTEGER NULL DEFAULT 1;
CREATE INDEX usage_logs_channel_pending_idx ON usage_logs (id) WHERE channel_pending = 1;
` + channelRollupTables + channelWatermark,
	PerDialect: map[Dialect]string{
		MySQL: `
ALTER TABLE usage_logs ADD COLUMN channel_pending TINYINT NULL, ALGORITHM=INSTANT;
ALTER TABLE usage_logs ALTER COLUMN channel_pending SET DEFAULT 1, ALGORITHM=INSTANT;
CREATE INDEX usage_logs_channel_pending_idx ON usage_logs (channel_pending, id) ALGORITHM=INPLACE LOCK=NONE;
` + Expand(MySQL, channelRollupTables+channelWatermark),
		Postgres: Expand(Postgres, channelRollupTables+channelWatermark),
	},
	// The column and its default in one statement, before the range is
	// taken (Online runs before the script): a row an earlier release
	// writes is either below the range's end or marked.
	Online: map[Dialect][]string{Postgres: {
		"ALTER TABLE usage_logs ADD COLUMN IF NOT EXISTS channel_pending SMALLINT NULL, ALTER COLUMN channel_pending SET DEFAULT 1",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_channel_pending_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_channel_pending_idx ON usage_logs (id) WHERE channel_pending = 1",
	}},
}

const channelRollupTables = `
CREATE TABLE usage_channel_rollups (
	hour {{time}} NOT NULL,
	day {{time}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	key_index {{bigint}} NOT NULL,
	model {{string}} NOT NULL,
	upstream_model {{string}} NOT NULL,
` + channelSumColumns + `
	PRIMARY KEY (hour, channel_id, key_index, model, upstream_model)
) {{options}};
CREATE TABLE usage_channel_rollups_daily (
	day {{time}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	key_index {{bigint}} NOT NULL,
	model {{string}} NOT NULL,
	upstream_model {{string}} NOT NULL,
` + channelSumColumns + `
	PRIMARY KEY (day, channel_id, key_index, model, upstream_model)
) {{options}};
CREATE INDEX usage_channel_rollups_daily_channel_idx ON usage_channel_rollups_daily (channel_id, day);
`

const channelSumColumns = `	consumes {{bigint}} NOT NULL,
	refunds {{bigint}} NOT NULL,
	requests {{bigint}} NOT NULL,
	input_tokens {{bigint}} NOT NULL,
	output_tokens {{bigint}} NOT NULL,
	cache_read_tokens {{bigint}} NOT NULL,
	upstream_cost_pico {{bigint}} NOT NULL,
	cost_rows {{bigint}} NOT NULL,`

// channelWatermark is the range of rows the backfill folds into the channel
// rollups: every row there is now.
const channelWatermark = `
ALTER TABLE usage_rollup_backfill ADD COLUMN channel_next_id {{bigint}} NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup_backfill ADD COLUMN channel_below_id {{bigint}} NOT NULL DEFAULT 0;
` + channelRestartSQL

// channelRestartSQL empties the channel rollups and moves their range over
// every row.
const channelRestartSQL = `
DELETE FROM usage_channel_rollups;
DELETE FROM usage_channel_rollups_daily;
UPDATE usage_rollup_backfill SET channel_next_id = (SELECT COALESCE(MIN(id), 1) FROM usage_logs),
	channel_below_id = (SELECT COALESCE(MAX(id), 0) + 1 FROM usage_logs) WHERE id = 1;
`
