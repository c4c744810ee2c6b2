package sqlstore

// batchesMigration adds uploaded files, their bytes in chunks, batches and
// the outcome of each line a batch ran. A chunk row is at most a MiB, so a
// large file is streamed in and out without sitting in memory and without
// meeting MySQL's packet limit. Times are Unix seconds as the OpenAI
// objects report them; the lease is in milliseconds like the task poller's.
var batchesMigration = Migration{Version: 133, Name: "files and batches", SQL: `
CREATE TABLE files (
	id {{id}},
	public_id {{string}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	filename {{text}} NOT NULL,
	purpose {{string}} NOT NULL,
	size_bytes {{bigint}} NOT NULL,
	created_at {{bigint}} NOT NULL,
	CONSTRAINT files_public_id_key UNIQUE (public_id)
) {{options}};
CREATE INDEX files_user_idx ON files (user_id, id);

CREATE TABLE file_chunks (
	file_id {{string}} NOT NULL,
	seq {{int}} NOT NULL,
	data {{blob}} NOT NULL,
	PRIMARY KEY (file_id, seq)
) {{options}};

CREATE TABLE batches (
	id {{id}},
	public_id {{string}} NOT NULL,
	kind {{string}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	token_id {{bigint}} NOT NULL,
	grp {{string}} NOT NULL,
	endpoint {{string}} NOT NULL,
	input_file_id {{string}} NOT NULL,
	completion_window {{string}} NOT NULL,
	metadata {{text}} NULL,
	status {{string}} NOT NULL,
	run_mode {{string}} NOT NULL,
	channel_id {{bigint}} NOT NULL,
	upstream {{text}} NULL,
	errs {{text}} NULL,
	output_file_id {{string}} NOT NULL,
	error_file_id {{string}} NOT NULL,
	total_lines {{int}} NOT NULL,
	completed_lines {{int}} NOT NULL,
	failed_lines {{int}} NOT NULL,
	holds {{text}} NULL,
	billed {{bool}} NOT NULL,
	charged {{bigint}} NOT NULL DEFAULT 0,
	lease_owner {{string}} NOT NULL,
	lease_until {{bigint}} NOT NULL,
	next_poll_at {{bigint}} NOT NULL,
	created_at {{bigint}} NOT NULL,
	in_progress_at {{bigint}} NOT NULL,
	finalizing_at {{bigint}} NOT NULL,
	completed_at {{bigint}} NOT NULL,
	failed_at {{bigint}} NOT NULL,
	expired_at {{bigint}} NOT NULL,
	cancelling_at {{bigint}} NOT NULL,
	cancelled_at {{bigint}} NOT NULL,
	expires_at {{bigint}} NOT NULL,
	CONSTRAINT batches_public_id_key UNIQUE (public_id)
) {{options}};
CREATE INDEX batches_user_idx ON batches (user_id, id);
CREATE INDEX batches_active_idx ON batches (billed, lease_until);

CREATE TABLE batch_lines (
	batch_id {{bigint}} NOT NULL,
	line_no {{int}} NOT NULL,
	custom_id {{text}} NOT NULL,
	model {{string}} NOT NULL,
	ok {{bool}} NOT NULL,
	status {{int}} NOT NULL,
	body {{text}} NOT NULL,
	input_tokens {{bigint}} NOT NULL,
	output_tokens {{bigint}} NOT NULL,
	quota {{bigint}} NOT NULL,
	PRIMARY KEY (batch_id, line_no)
) {{options}};
`}

// batchLineCostMigration keeps each charged line's exact cost, so a
// batch's row for a model is the exact parts of its lines summed and
// rounded once (CONTRACT §15), not a sum of lines rounded each.
var batchLineCostMigration = Migration{Version: 135, Name: "batch line cost", SQL: `
ALTER TABLE batch_lines ADD cost {{text}} NULL;
`}
