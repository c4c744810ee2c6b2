package sqlstore

// accountsMigrations hold the tables of internal/accounts: second factors,
// sign-in identities from OpenID Connect providers, redemption codes and
// the audit log. They are core versions (60–69) rather than registered
// ones so that their order against the core tables is fixed. Times are
// Unix seconds (milliseconds for the audit log) in integer columns, so
// range filters need no dialect-specific time handling.
var accountsMigrations = []Migration{{
	Version: 60,
	Name:    "two-factor sign-in",
	SQL: `
CREATE TABLE user_totp (
	user_id {{bigint}} NOT NULL PRIMARY KEY,
	secret {{text}} NOT NULL,
	enabled {{int}} NOT NULL,
	last_step {{bigint}} NOT NULL,
	updated_unix {{bigint}} NOT NULL
) {{options}};
CREATE TABLE user_recovery_codes (
	id {{id}},
	user_id {{bigint}} NOT NULL,
	code_hash {{string}} NOT NULL,
	used_unix {{bigint}} NULL
) {{options}};
CREATE INDEX user_recovery_codes_user_idx ON user_recovery_codes (user_id);
`,
}, {
	Version: 61,
	Name:    "sign-in identities",
	SQL: `
CREATE TABLE user_identities (
	id {{id}},
	issuer {{string}} NOT NULL,
	subject {{string}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	created_unix {{bigint}} NOT NULL,
	CONSTRAINT user_identities_issuer_subject UNIQUE (issuer, subject)
) {{options}};
`,
}, {
	Version: 62,
	Name:    "redemption codes",
	SQL: `
CREATE TABLE redemptions (
	id {{id}},
	name {{string}} NOT NULL,
	code_hash {{string}} NOT NULL,
	code_hint {{string}} NOT NULL,
	quota {{bigint}} NOT NULL,
	expires_unix {{bigint}} NULL,
	used_by {{bigint}} NULL,
	used_unix {{bigint}} NULL,
	created_by {{bigint}} NOT NULL,
	created_unix {{bigint}} NOT NULL,
	CONSTRAINT redemptions_code_hash UNIQUE (code_hash)
) {{options}};
`,
}, {
	Version: 63,
	Name:    "audit log",
	SQL: `
CREATE TABLE audit_log (
	id {{id}},
	created_ms {{bigint}} NOT NULL,
	user_id {{bigint}} NOT NULL,
	username {{string}} NOT NULL,
	role {{string}} NOT NULL,
	method {{string}} NOT NULL,
	path {{string}} NOT NULL,
	target {{string}} NOT NULL,
	status {{int}} NOT NULL,
	outcome {{string}} NOT NULL,
	request_id {{string}} NOT NULL,
	client_ip {{string}} NOT NULL
) {{options}};
CREATE INDEX audit_log_created_idx ON audit_log (created_ms);
CREATE INDEX audit_log_user_idx ON audit_log (user_id, created_ms);
`,
}}

// Appended here rather than listed in schema.go so that parallel work on
// the core list does not collide with this file.
