package sqlstore

// allMigrations is every schema change of the gateway's database, in one
// explicit list: a new migration is added here with the next free number,
// and a number is never reused or renumbered, since existing databases
// record the versions they have applied. The numbers of the task plugin
// (100), task (110) and response index (120) tables are the ones they had
// when their packages registered them, so existing databases carry on.
var allMigrations = []Migration{
	coreMigration,                            // 1
	holdsMigration,                           // 5
	sessionsMigration,                        // 21
	trafficMigration,                         // 30
	logIndexMigration,                        // 31
	healthMigrations[0], healthMigrations[1], // 40, 41
	accountsMigrations[0], accountsMigrations[1],
	accountsMigrations[2], accountsMigrations[3], // 60–63
	paymentsMigration,      // 64
	pluginsMigration,       // 100
	tasksMigration,         // 110
	responsesMigration,     // 120
	priceTiersMigration,    // 121
	priceVersionsMigration, // 122
	booksMigration,         // 123
	tokenRotationMigration, // 130
	nodeModeMigration,      // 131
	priceRoutingMigration,  // 132
	batchesMigration,       // 133
	mcpMigration,           // 190
	guardrailsMigration,    // 134
	batchLineCostMigration, // 135
	taskKeyIndexMigration,  // 136
	teamsMigration,         // 140
	taskTeamMigration,      // 141
	plansMigration,         // 150
	planJournalMigration,   // 151
	teamLogIndexMigration,  // 152
	rollupsMigration,       // 160
	logListMigration,       // 161
	logContentsMigration,   // 162
	dailyRollupsMigration,  // 166
	tokenCacheMigration,    // 170

	rollupPendingMigration,   // 200
	channelLogIndexMigration, // 201
	booksRollupsMigration,    // 210
	channelRollupsMigration,  // 220
	reportRollupsMigration,   // 230
}

// pluginsMigration adds the task plugin tables. plugin_runtime holds one row
// whose revision changes with every administrative change, so that every
// node notices and rebuilds the same generation.
var pluginsMigration = Migration{Version: 100, Name: "task plugins", SQL: `
CREATE TABLE plugin_versions (
	id {{id}},
	plugin_key {{string}} NOT NULL,
	version {{string}} NOT NULL,
	source {{text}} NOT NULL,
	sha256 {{string}} NOT NULL,
	icon {{blob}} NULL,
	origin {{string}} NOT NULL,
	origin_url {{text}} NOT NULL,
	uploaded_by {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT plugin_versions_key_version UNIQUE (plugin_key, version)
) {{options}};

CREATE TABLE plugin_state (
	plugin_key {{string}} NOT NULL PRIMARY KEY,
	active_version {{string}} NOT NULL,
	enabled {{int}} NOT NULL,
	held_back {{int}} NOT NULL,
	updated_at {{time}} NOT NULL
) {{options}};

CREATE TABLE plugin_marketplace_sources (
	id {{id}},
	url {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT plugin_marketplace_sources_url UNIQUE (url)
) {{options}};

CREATE TABLE plugin_audit (
	id {{id}},
	actor {{string}} NOT NULL,
	action {{string}} NOT NULL,
	plugin_key {{string}} NOT NULL,
	version {{string}} NOT NULL,
	outcome {{string}} NOT NULL,
	detail {{text}} NOT NULL,
	created_at {{time}} NOT NULL
) {{options}};

CREATE TABLE plugin_runtime (
	id {{int}} NOT NULL PRIMARY KEY,
	revision {{string}} NOT NULL,
	updated_at {{time}} NOT NULL
) {{options}};

INSERT INTO plugin_runtime (id, revision, updated_at) VALUES (1, '0', CURRENT_TIMESTAMP)`}

// tasksMigration adds the tasks table. Times in it are Unix milliseconds:
// the poller compares them on every tick, and integers compare the same way
// on every dialect.
var tasksMigration = Migration{Version: 110, Name: "tasks", SQL: `
CREATE TABLE tasks (
	id {{id}},
	public_id {{string}} NOT NULL,
	upstream_id {{string}} NOT NULL,
	plugin_key {{string}} NOT NULL,
	plugin_version {{string}} NOT NULL,
	action {{string}} NOT NULL,
	model {{string}} NOT NULL,
	upstream_model {{string}} NOT NULL,
	status {{string}} NOT NULL,
	progress {{string}} NOT NULL,
	fail_reason {{text}} NOT NULL,
	result_url {{text}} NOT NULL,
	data {{text}} NULL,
	state {{text}} NULL,
	usage_facts {{text}} NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	grp {{string}} NOT NULL,
	retain_result {{bool}} NOT NULL,
	quota_reserved {{bigint}} NOT NULL,
	quota_charged {{bigint}} NOT NULL,
	billing_key {{string}} NOT NULL,
	billing_status {{string}} NOT NULL,
	poll_failures {{int}} NOT NULL,
	next_poll_at {{bigint}} NOT NULL,
	lease_owner {{string}} NOT NULL,
	lease_until {{bigint}} NOT NULL,
	submitted_at {{bigint}} NOT NULL,
	started_at {{bigint}} NOT NULL,
	finished_at {{bigint}} NOT NULL,
	created_at {{bigint}} NOT NULL,
	updated_at {{bigint}} NOT NULL,
	deadline {{bigint}} NOT NULL,
	CONSTRAINT tasks_public_id_key UNIQUE (public_id)
) {{options}};
CREATE INDEX tasks_poll_idx ON tasks (status, next_poll_at);
CREATE INDEX tasks_user_idx ON tasks (user_id, id);
CREATE INDEX tasks_upstream_idx ON tasks (plugin_key, channel_id, upstream_id);
`}

// responsesMigration adds the index of stored responses: which channel made
// a response and for whom.
var responsesMigration = Migration{Version: 120, Name: "response index", SQL: `
CREATE TABLE response_index (
	response_id {{string}} NOT NULL PRIMARY KEY,
	channel_id {{bigint}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	created_at {{bigint}} NOT NULL
) {{options}};
CREATE INDEX response_index_created_idx ON response_index (created_at);
`}

// priceTiersMigration adds the reasoning token price and the long-context
// tiers (a JSON list) to model prices. Existing prices get no reasoning
// price and no tiers, so they charge exactly as before.
var priceTiersMigration = Migration{Version: 121, Name: "model price reasoning and tiers", SQL: `
ALTER TABLE model_prices ADD reasoning_per_mtok {{float}} NOT NULL DEFAULT 0;
ALTER TABLE model_prices ADD tiers {{text}} NULL;
`}

// booksMigration adds what the operator's books need: a channel's upstream
// cost (JSON; NULL pays list prices) and an index for reading the ledger by
// time, as reconciliation does over a window.
var booksMigration = Migration{Version: 123, Name: "channel cost and ledger by time", SQL: `
ALTER TABLE channels ADD cost {{text}} NULL;
CREATE INDEX quota_ledger_created_idx ON quota_ledger (created_at);
`}

// priceVersionsMigration adds the batch prices and the price versions: every
// change of a model's price becomes a new row of model_price_versions, and
// the price a call is charged at is the version in effect when it was
// admitted. Each existing price becomes its model's version 1, in effect
// since it was last written, so nothing charges differently.
var priceVersionsMigration = Migration{Version: 122, Name: "model price versions", SQL: `
ALTER TABLE model_prices ADD batch_input_per_mtok {{float}} NOT NULL DEFAULT 0;
ALTER TABLE model_prices ADD batch_output_per_mtok {{float}} NOT NULL DEFAULT 0;
CREATE TABLE model_price_versions (
	id {{id}},
	model {{string}} NOT NULL,
	version {{bigint}} NOT NULL,
	effective_from {{time}} NOT NULL,
	input_per_mtok {{float}} NOT NULL,
	output_per_mtok {{float}} NOT NULL,
	cache_read_per_mtok {{float}} NOT NULL,
	cache_write_per_mtok {{float}} NOT NULL,
	reasoning_per_mtok {{float}} NOT NULL,
	batch_input_per_mtok {{float}} NOT NULL,
	batch_output_per_mtok {{float}} NOT NULL,
	per_call {{float}} NOT NULL,
	is_free {{bool}} NOT NULL,
	tiers {{text}} NULL,
	extra {{text}} NULL,
	source {{string}} NOT NULL,
	actor {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT model_price_versions_model_version UNIQUE (model, version)
) {{options}};
INSERT INTO model_price_versions (model, version, effective_from, input_per_mtok, output_per_mtok, cache_read_per_mtok,
	cache_write_per_mtok, reasoning_per_mtok, batch_input_per_mtok, batch_output_per_mtok, per_call, is_free, tiers, extra,
	source, actor, created_at)
SELECT name, 1, updated_at, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, reasoning_per_mtok,
	0, 0, per_call, is_free, tiers, extra, 'api', '', updated_at FROM model_prices;
`}

// priceRoutingMigration adds a model's routing choices (cache affinity and
// strategy, one JSON object) to model prices. NULL is the defaults, so
// existing models route as before, with affinity on.
var priceRoutingMigration = Migration{Version: 132, Name: "model price routing", SQL: `
ALTER TABLE model_prices ADD routing {{text}} NULL;
`}

// tokenCacheMigration adds a key's response cache (CONTRACT §22, one JSON
// object). NULL leaves the cache to the key's models, as before.
var tokenCacheMigration = Migration{Version: 170, Name: "token response cache", SQL: `
ALTER TABLE tokens ADD response_cache {{text}} NULL;
`}
