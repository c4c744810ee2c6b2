package admin

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// teamEnv is newEnv with traffic control, an organisation "acme" and its
// team "search" whose manager is alice and member bob.
func teamEnv(t *testing.T) *env {
	e := newEnv(t)
	st := e.d.Store.(interface{ Traffic() store.TrafficRepo })
	e.d.Limits = ratelimit.New(st.Traffic(), nil, nil)
	e.api = New(e.d)
	e.mux = http.NewServeMux()
	e.api.Register(e.mux)
	keep := func(name string) func(t *testing.T, e *env, r response) {
		return func(t *testing.T, e *env, r response) { e.ids[name] = int64(r.body["id"].(float64)) }
	}
	e.run([]scenario{
		{name: "create org", who: "admin", method: "POST", path: "/api/orgs",
			body: `{"name":"acme","models":["m-a","m-b"],"period_quota":5000,"period":"month","rpm":100}`, status: 201,
			want: map[string]any{"name": "acme", "period_quota": 5000.0, "period": "month", "rpm": 100.0, "period_used_quota": 0.0}, check: keep("acme")},
		{name: "create team", who: "admin", method: "POST", path: "/api/teams",
			body: `{"name":"search","org_id":{acme},"billing":"shared","period_quota":1000,"period":"day","concurrency":4}`, status: 201,
			want: map[string]any{"org_id": "{acme}", "billing": "shared", "period_quota": 1000.0, "concurrency": 4.0, "quota": 0.0}, check: keep("search")},
		{name: "alice manages", who: "admin", method: "PATCH", path: "/api/users/{alice}",
			body: `{"team_id":{search},"team_role":"manager"}`, status: 200, want: map[string]any{"team_id": "{search}", "team_role": "manager"}},
		{name: "bob is a member by default", who: "admin", method: "PATCH", path: "/api/users/{bob}",
			body: `{"team_id":{search}}`, status: 200, want: map[string]any{"team_role": "member"}},
	})
	return e
}

func TestOrgsAndTeamsAreManagedByAdministrators(t *testing.T) {
	e := teamEnv(t)
	e.run([]scenario{
		{name: "a team needs an existing org", who: "admin", method: "POST", path: "/api/teams", body: `{"name":"x","org_id":999}`,
			status: 400, want: map[string]any{"error.code": "invalid_field"}},
		{name: "billing is own or shared", who: "admin", method: "PATCH", path: "/api/teams/{search}", body: `{"billing":"split"}`,
			status: 400, want: map[string]any{"error.code": "invalid_field"}},
		{name: "a bad role is refused", who: "admin", method: "PATCH", path: "/api/users/{bob}", body: `{"team_role":"owner"}`,
			status: 400, want: map[string]any{"error.code": "invalid_field"}},
		{name: "team top-up", who: "admin", method: "POST", path: "/api/teams/{search}/quota", body: `{"delta":700}`,
			status: 200, want: map[string]any{"quota": 700.0}},
		{name: "below zero is refused", who: "admin", method: "POST", path: "/api/teams/{search}/quota", body: `{"delta":-701}`,
			status: 409},
		{name: "the team shows its balance", who: "admin", method: "GET", path: "/api/teams/{search}", status: 200,
			want: map[string]any{"quota": 700.0, "name": "search"}},
		{name: "an org with a team is not deleted", who: "admin", method: "DELETE", path: "/api/orgs/{acme}", status: 409},
		{name: "a plain user cannot list orgs", who: "bob", method: "GET", path: "/api/orgs", status: 403},
		{name: "a member sees only its team", who: "bob", method: "GET", path: "/api/teams", status: 200,
			want: map[string]any{"total": 1.0, "items.0.name": "search"}},
		{name: "a member is no manager", who: "bob", method: "GET", path: "/api/teams/{search}/members", status: 403},
	})
}

func TestAManagerRunsItsTeamButNeverRaisesItsOwnLimits(t *testing.T) {
	e := teamEnv(t)
	e.run([]scenario{
		{name: "manager lists members", who: "alice", method: "GET", path: "/api/teams/{search}/members", status: 200,
			want: map[string]any{"total": 2.0}},
		{name: "manager sets a member's budget", who: "alice", method: "PATCH", path: "/api/teams/{search}/members/{bob}",
			body: `{"period_quota":300,"period":"week"}`, status: 200, want: map[string]any{"period_quota": 300.0, "period": "week"}},
		{name: "manager creates a key for a member", who: "alice", method: "POST", path: "/api/tokens",
			body: `{"name":"bob-key","user_id":{bob}}`, status: 200, want: map[string]any{"user_id": "{bob}"}},
		{name: "manager sees members' keys", who: "alice", method: "GET", path: "/api/teams/{search}/keys", status: 200,
			want: map[string]any{"total": 1.0, "items.0.name": "bob-key"}},
		{name: "manager cannot raise its own budget", who: "alice", method: "PATCH", path: "/api/teams/{search}/members/{alice}",
			body: `{"period_quota":999999,"period":"day"}`, status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "manager cannot change the team's limits", who: "alice", method: "PATCH", path: "/api/teams/{search}",
			body: `{"period_quota":999999}`, status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "manager cannot change the team's models", who: "alice", method: "PATCH", path: "/api/teams/{search}",
			body: `{"models":["m-a","m-b","m-c"]}`, status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "manager cannot change the team's rate limits", who: "alice", method: "PATCH", path: "/api/teams/{search}",
			body: `{"rpm":0,"concurrency":0}`, status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "manager cannot set the team's balance", who: "alice", method: "PATCH", path: "/api/teams/{search}",
			body: `{"quota":999999}`, status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "manager cannot raise its own user budget", who: "alice", method: "PATCH", path: "/api/users/{alice}",
			body: `{"period_quota":999999,"period":"day"}`, status: 403},
		{name: "manager cannot lift its own rate limits", who: "alice", method: "PATCH", path: "/api/teams/{search}/members/{alice}",
			body: `{"rpm":0}`, status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "manager cannot fund the team", who: "alice", method: "POST", path: "/api/teams/{search}/quota",
			body: `{"delta":100}`, status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "manager cannot touch the org", who: "alice", method: "PATCH", path: "/api/orgs/{acme}",
			body: `{"rpm":0}`, status: 403},
		{name: "manager cannot move itself to another role", who: "alice", method: "PATCH", path: "/api/users/{alice}",
			body: `{"team_role":"manager"}`, status: 403},
		{name: "manager cannot make keys for strangers", who: "alice", method: "POST", path: "/api/tokens",
			body: `{"name":"x","user_id":{admin}}`, status: 403},
		{name: "team limits unchanged", who: "admin", method: "GET", path: "/api/teams/{search}", status: 200,
			want: map[string]any{"period_quota": 1000.0, "quota": 0.0, "concurrency": 4.0, "models.2": nil}},
		{name: "manager's own budget unchanged", who: "admin", method: "GET", path: "/api/users/{alice}", status: 200,
			want: map[string]any{"period_quota": 0.0}},
		{name: "the member's budget set", who: "admin", method: "GET", path: "/api/users/{bob}", status: 200,
			want: map[string]any{"period_quota": 300.0, "period": "week"}},
	})
}

func TestTeamUsageAndLogsFilterByTeamAndOrg(t *testing.T) {
	e := teamEnv(t)
	now := time.Now().UTC()
	rows := []store.UsageLog{
		{Type: store.LogConsume, UserID: e.ids["bob"], TokenID: 1, Model: "m-a", Quota: 30, TeamID: e.ids["search"], OrgID: e.ids["acme"], CreatedAt: now},
		{Type: store.LogConsume, UserID: e.ids["alice"], TokenID: 2, Model: "m-b", Quota: 12, TeamID: e.ids["search"], OrgID: e.ids["acme"], CreatedAt: now},
		{Type: store.LogConsume, UserID: e.ids["admin"], TokenID: 3, Model: "m-a", Quota: 99, CreatedAt: now},
	}
	if err := e.d.Store.Logs().Insert(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "usage by model", who: "alice", method: "GET", path: "/api/teams/{search}/usage?group_by=model", status: 200,
			want: map[string]any{"items.0.key": "m-a", "items.0.quota": 30.0, "items.1.key": "m-b", "items.1.quota": 12.0}},
		{name: "usage by user", who: "admin", method: "GET", path: "/api/teams/{search}/usage?group_by=user", status: 200,
			want: map[string]any{"group_by": "user", "items.0.quota": 12.0, "items.1.quota": 30.0}},
		{name: "a bad group_by", who: "alice", method: "GET", path: "/api/teams/{search}/usage?group_by=channel", status: 400},
		{name: "logs by team", who: "admin", method: "GET", path: "/api/logs?team_id={search}", status: 200, want: map[string]any{"total": 2.0}},
		{name: "logs by org", who: "admin", method: "GET", path: "/api/logs?org_id={acme}", status: 200, want: map[string]any{"total": 2.0}},
		{name: "a manager reads its team's logs", who: "alice", method: "GET", path: "/api/logs?team_id={search}", status: 200,
			want: map[string]any{"total": 2.0}},
		{name: "a member reads only its own", who: "bob", method: "GET", path: "/api/logs?team_id={search}", status: 200,
			want: map[string]any{"total": 1.0}},
	})
}

func TestATeamTakesAnMCPGrantForItsMembers(t *testing.T) {
	e := teamEnv(t)
	e.run([]scenario{
		{name: "grant", who: "admin", method: "PATCH", path: "/api/teams/{search}", body: `{"mcp":{"servers":["*"],"tools":[]}}`,
			status: 200, want: map[string]any{"mcp.servers.0": "*"}},
		{name: "shown", who: "admin", method: "GET", path: "/api/teams/{search}", status: 200, want: map[string]any{"mcp.servers.0": "*"}},
		{name: "org grant", who: "admin", method: "PATCH", path: "/api/orgs/{acme}", body: `{"mcp":{"servers":["files"]}}`,
			status: 200, want: map[string]any{"mcp.servers.0": "files"}},
	})
}
