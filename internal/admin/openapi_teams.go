package admin

import "github.com/turnpike-gw/turnpike/internal/store"

// teamOps document the routes of organisations and teams (CONTRACT.md §18).
func (d *docSchemas) teamOps() []apiOp {
	orgSchema, teamSchema := schemaOf[orgView](), schemaOf[teamView]()
	orgBody := body(orgSchema, levelFields, schema{"models": strList, "period": str, "mcp": d.mcpGrant})
	teamBody := body(teamSchema, append([]string{"org_id", "billing"}, levelFields...),
		schema{"models": strList, "period": str, "mcp": d.mcpGrant, "billing": schema{"type": "string", "enum": []string{store.BillingOwn, store.BillingShared}}})
	usageSchema := object(schema{"team_id": integer, "group_by": str, "since": str, "until": str,
		"items": schema{"type": "array", "items": schemaOf[store.UsageGroup]()}})
	return []apiOp{
		{route: "GET /api/orgs", summary: "List organisations with their limits and period spending", answer: listOf(orgSchema)},
		{route: "POST /api/orgs", summary: "Create an organisation: limits of §10, a models allow-list and a default group",
			body: withRequired(orgBody, "name"), answer: orgSchema},
		{route: "GET /api/orgs/{id}", summary: "One organisation", answer: orgSchema},
		{route: "PATCH /api/orgs/{id}", summary: "Change an organisation (members sent replace the stored ones)", body: orgBody, answer: orgSchema},
		{route: "DELETE /api/orgs/{id}", summary: "Delete an organisation without teams (409 while it has some)"},
		{route: "GET /api/teams", summary: "List teams (an administrator every team, a member its own)", answer: listOf(teamSchema)},
		{route: "POST /api/teams", summary: "Create a team of one organisation; billing shared pays members' calls from the team's balance",
			body: withRequired(teamBody, "name", "org_id"), answer: teamSchema},
		{route: "GET /api/teams/{id}", summary: "One team (a member its own)", answer: teamSchema},
		{route: "PATCH /api/teams/{id}", summary: "Change a team's limits, models, group or billing (administrators only: never its manager)",
			body: teamBody, answer: teamSchema},
		{route: "DELETE /api/teams/{id}", summary: "Delete a team; its members leave it"},
		{route: "POST /api/teams/{id}/quota", summary: "Move a team's shared balance by delta, recorded in the ledger",
			body: body(nil, []string{"delta"}, schema{"delta": integer}, "delta"), answer: object(schema{"quota": integer})},
		{route: "GET /api/teams/{id}/members", summary: "A team's members (its manager or an administrator)", answer: listOf(ref("User"))},
		{route: "PATCH /api/teams/{id}/members/{user_id}", summary: "Set a member's budget and rate limits (its manager, never for itself, or an administrator)",
			body: body(d.user, userLimitFields, schema{"period": str}), answer: ref("User")},
		{route: "GET /api/teams/{id}/keys", summary: "The keys of a team's members (its manager or an administrator)", answer: listOf(ref("Token"))},
		{route: "GET /api/teams/{id}/usage", summary: "A team's usage over a window by user, key or model (its manager or an administrator)",
			query: []string{"since", "until", "group_by"}, answer: usageSchema},
	}
}

// withRequired is s with its required members.
func withRequired(s schema, required ...string) schema {
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	out["required"] = required
	return out
}
