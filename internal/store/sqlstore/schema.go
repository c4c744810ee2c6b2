package sqlstore

// coreMigration is the first schema: users, groups, keys, channels,
// prices, the usage log and the ledger. Column names avoid words that
// are reserved in one of the dialects: "group" becomes grp, the ledger's
// "key" becomes idem_key, and the pricing-group table is user_groups because
// MySQL 8 reserves GROUPS.
var coreMigration = Migration{
	Version: 1,
	Name:    "core",
	SQL: `
CREATE TABLE users (
	id {{id}},
	username {{string}} NOT NULL,
	password_hash {{string}} NOT NULL,
	role {{string}} NOT NULL,
	grp {{string}} NOT NULL,
	quota {{bigint}} NOT NULL,
	used_quota {{bigint}} NOT NULL,
	status {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT users_username_key UNIQUE (username)
) {{options}};

CREATE TABLE user_groups (
	name {{string}} NOT NULL PRIMARY KEY,
	ratio {{float}} NOT NULL
) {{options}};

CREATE TABLE tokens (
	id {{id}},
	user_id {{bigint}} NOT NULL,
	name {{string}} NOT NULL,
	key_hash {{string}} NOT NULL,
	key_masked {{string}} NOT NULL,
	quota {{bigint}} NOT NULL,
	used_quota {{bigint}} NOT NULL,
	models {{text}} NOT NULL,
	expires_at {{time}} NULL,
	status {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT tokens_key_hash_key UNIQUE (key_hash),
	CONSTRAINT tokens_user_name_key UNIQUE (user_id, name),
	CONSTRAINT tokens_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) {{options}};

CREATE TABLE channels (
	id {{id}},
	name {{string}} NOT NULL,
	type {{int}} NOT NULL,
	base_url {{text}} NOT NULL,
	channel_key {{text}} NOT NULL,
	models {{text}} NOT NULL,
	group_list {{text}} NOT NULL,
	priority {{bigint}} NOT NULL,
	weight {{int}} NOT NULL,
	model_mapping {{text}} NOT NULL,
	settings {{text}} NOT NULL,
	status {{string}} NOT NULL,
	created_at {{time}} NOT NULL,
	updated_at {{time}} NOT NULL,
	CONSTRAINT channels_name_key UNIQUE (name)
) {{options}};

CREATE TABLE abilities (
	grp {{string}} NOT NULL,
	model {{string}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	priority {{bigint}} NOT NULL,
	weight {{int}} NOT NULL,
	enabled {{bool}} NOT NULL,
	PRIMARY KEY (grp, model, channel_id),
	CONSTRAINT abilities_channel_fk FOREIGN KEY (channel_id) REFERENCES channels (id) ON DELETE CASCADE
) {{options}};
CREATE INDEX abilities_channel_idx ON abilities (channel_id);

CREATE TABLE model_prices (
	name {{string}} NOT NULL PRIMARY KEY,
	input_per_mtok {{float}} NOT NULL,
	output_per_mtok {{float}} NOT NULL,
	cache_read_per_mtok {{float}} NOT NULL,
	cache_write_per_mtok {{float}} NOT NULL,
	per_call {{float}} NOT NULL,
	is_free {{bool}} NOT NULL,
	extra {{text}} NULL,
	updated_at {{time}} NOT NULL
) {{options}};

CREATE TABLE usage_logs (
	id {{id}},
	type {{string}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	model {{string}} NOT NULL,
	prompt_tokens {{int}} NOT NULL,
	completion_tokens {{int}} NOT NULL,
	quota {{bigint}} NOT NULL,
	latency_ms {{bigint}} NOT NULL,
	request_id {{string}} NOT NULL,
	other {{text}} NULL,
	created_at {{time}} NOT NULL
) {{options}};
CREATE INDEX usage_logs_created_idx ON usage_logs (created_at);
CREATE INDEX usage_logs_user_idx ON usage_logs (user_id);
CREATE INDEX usage_logs_token_idx ON usage_logs (token_id);
CREATE INDEX usage_logs_channel_idx ON usage_logs (channel_id);
CREATE INDEX usage_logs_model_idx ON usage_logs (model);
CREATE INDEX usage_logs_type_idx ON usage_logs (type);

CREATE TABLE quota_ledger (
	id {{id}},
	idem_key {{string}} NOT NULL,
	kind {{string}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	delta {{bigint}} NOT NULL,
	token_delta {{bigint}} NOT NULL,
	used {{bigint}} NOT NULL,
	created_at {{time}} NOT NULL,
	CONSTRAINT quota_ledger_key UNIQUE (idem_key)
) {{options}};
CREATE INDEX quota_ledger_user_idx ON quota_ledger (user_id);
`,
}
