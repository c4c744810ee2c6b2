package task

import "github.com/turnpike-gw/turnpike/internal/store/sqlstore"

// Times in the tasks table are Unix milliseconds: the poller compares them
// on every tick, and integers compare the same way on every dialect.
const tasksSchema = `
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
`

func init() {
	sqlstore.Register(sqlstore.Migration{Version: 110, Name: "tasks", SQL: tasksSchema})
}
