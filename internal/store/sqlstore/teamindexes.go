package sqlstore

// teamLogIndexMigration makes the usage log's team and organisation
// indexes partial where the database can (PostgreSQL, SQLite): only rows
// of calls made by a team member are in them, so a gateway without teams
// (every row has team_id and org_id 0) writes no entry into either on its
// hottest insert. The queries that read them say team_id <> 0 (org_id <>
// 0) beside their equality, which is what lets both planners prove the
// index's predicate (see teamCond). MySQL and MariaDB have no partial
// indexes: theirs stay whole.
var teamLogIndexMigration = Migration{Version: 152, Name: "partial team and org usage log indexes", SQL: `
DROP INDEX IF EXISTS usage_logs_team_created_idx;
DROP INDEX IF EXISTS usage_logs_org_created_idx;
CREATE INDEX usage_logs_team_created_idx ON usage_logs (team_id, created_at) WHERE team_id <> 0;
CREATE INDEX usage_logs_org_created_idx ON usage_logs (org_id, created_at) WHERE org_id <> 0;
`,
	// PostgreSQL rebuilds them CONCURRENTLY (see runOnline), so usage
	// writes go on while a large log is read; MySQL keeps its whole ones.
	PerDialect: map[Dialect]string{MySQL: `DO 0`, Postgres: ""},
	Online: map[Dialect][]string{Postgres: {
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_team_created_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_team_created_idx ON usage_logs (team_id, created_at) WHERE team_id <> 0",
		"DROP INDEX CONCURRENTLY IF EXISTS usage_logs_org_created_idx",
		"CREATE INDEX CONCURRENTLY usage_logs_org_created_idx ON usage_logs (org_id, created_at) WHERE org_id <> 0",
	}},
}

// teamCond is the condition a usage log query puts on col (equal to one
// argument): for the team and organisation columns it repeats the partial
// index's predicate, since a planner cannot tell that an argument is not
// 0.
func teamCond(col string) string {
	if col == "team_id" || col == "org_id" {
		return col + " <> 0 AND " + col + " = ?"
	}
	return col + " = ?"
}
