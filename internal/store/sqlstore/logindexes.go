package sqlstore

// logIndexMigration drops the usage log's single-column user and token
// indexes: the (user_id, created_at) and (token_id, created_at) indexes of
// migration 30 serve every query they served (their leading column), and
// each index is one more B-tree write on the gateway's hottest insert.
var logIndexMigration = Migration{
	Version: 31,
	Name:    "usage log indexes",
	SQL: `
DROP INDEX IF EXISTS usage_logs_user_idx;
DROP INDEX IF EXISTS usage_logs_token_idx;
`,
	PerDialect: map[Dialect]string{
		MySQL: `
DROP INDEX usage_logs_user_idx ON usage_logs;
DROP INDEX usage_logs_token_idx ON usage_logs;
`,
	},
}
