package sqlstore

// teamsMigration adds organisations and teams (CONTRACT.md §18). Usage
// rows carry the team and organisation of the call, so reports and the
// /api/logs filters read one indexed column instead of joining through
// users (whose team may have changed since). A user belongs to at most one
// team; team_role is member or manager, empty without a team. The ledger
// and the holds name the team whose shared balance a movement touches
// (0: the user's own balance), so reconcile can prove team balances the
// way it proves users'. Limits of orgs and teams live in traffic_limits
// under the kinds "org" and "team", beside those of keys and users.
var teamsMigration = Migration{Version: 140, Name: "teams and organisations", SQL: `
ALTER TABLE usage_logs ADD team_id {{bigint}} NOT NULL DEFAULT 0;
ALTER TABLE usage_logs ADD org_id {{bigint}} NOT NULL DEFAULT 0;
CREATE INDEX usage_logs_team_created_idx ON usage_logs (team_id, created_at);
CREATE INDEX usage_logs_org_created_idx ON usage_logs (org_id, created_at);
ALTER TABLE users ADD team_id {{bigint}} NOT NULL DEFAULT 0;
ALTER TABLE users ADD team_role {{string}} NOT NULL DEFAULT '';
CREATE INDEX users_team_idx ON users (team_id);
ALTER TABLE quota_ledger ADD team_id {{bigint}} NOT NULL DEFAULT 0;
ALTER TABLE billing_holds ADD team_id {{bigint}} NOT NULL DEFAULT 0;

CREATE TABLE orgs (
	id {{id}},
	name {{string}} NOT NULL,
	models {{text}} NULL,
	group_name {{string}} NOT NULL DEFAULT '',
	created_at {{time}} NOT NULL,
	CONSTRAINT orgs_name UNIQUE (name)
) {{options}};

CREATE TABLE teams (
	id {{id}},
	org_id {{bigint}} NOT NULL,
	name {{string}} NOT NULL,
	models {{text}} NULL,
	group_name {{string}} NOT NULL DEFAULT '',
	billing {{string}} NOT NULL DEFAULT 'own',
	quota {{bigint}} NOT NULL DEFAULT 0,
	used_quota {{bigint}} NOT NULL DEFAULT 0,
	created_at {{time}} NOT NULL,
	CONSTRAINT teams_org_name UNIQUE (org_id, name)
) {{options}};
`}
