package admin

import (
	"context"
	"net/http"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// Organisations and teams (CONTRACT.md §18): root and administrators
// define them; a team's manager reads its team (teams_members.go).
func (a *API) routeTeams(mux *http.ServeMux) {
	a.route(mux, "GET /api/orgs", store.RoleAdmin, "org", a.listOrgs)
	a.route(mux, "POST /api/orgs", store.RoleAdmin, "org", a.createOrg)
	a.route(mux, "GET /api/orgs/{id}", store.RoleAdmin, "org", a.getOrg)
	a.route(mux, "PATCH /api/orgs/{id}", store.RoleAdmin, "org", a.patchOrg)
	a.route(mux, "DELETE /api/orgs/{id}", store.RoleAdmin, "org", a.deleteOrg)
	a.route(mux, "GET /api/teams", store.RoleUser, "team", a.listTeams)
	a.route(mux, "POST /api/teams", store.RoleAdmin, "team", a.createTeam)
	a.route(mux, "GET /api/teams/{id}", store.RoleUser, "team", a.getTeam)
	a.route(mux, "PATCH /api/teams/{id}", store.RoleAdmin, "team", a.patchTeam)
	a.route(mux, "DELETE /api/teams/{id}", store.RoleAdmin, "team", a.deleteTeam)
	a.route(mux, "POST /api/teams/{id}/quota", store.RoleAdmin, "team", a.teamQuota)
	a.routeTeamMembers(mux)
}

type orgView struct {
	store.Org
	limitsView
	MCP *mcpGrantView `json:"mcp"`
}

type teamView struct {
	store.Team
	limitsView
	MCP *mcpGrantView `json:"mcp"`
}

// levelFields are the members an organisation or team takes.
var levelFields = append([]string{"name", "models", "group", "mcp"}, userLimitFields...)

// levelInput is the common part of an org or team request.
type levelInput struct {
	f          fields
	name       string
	models     []string
	group      string
	limits     ratelimit.Limits
	limitsSent bool
	grant      mcpGrantInput
}

// saveLevel stores the limits and the MCP grant the request sent.
func (a *API) saveLevel(ctx context.Context, kind string, id int64, in *levelInput) error {
	if err := a.saveLimits(ctx, kind, id, in.limits, in.limitsSent); err != nil {
		return err
	}
	return a.saveMCPGrant(ctx, kind, id, in.grant)
}

func (a *API) readLevel(w http.ResponseWriter, r *http.Request, cur ratelimit.Limits, extra ...string) (*levelInput, error) {
	f, err := readFields(w, r, append(append([]string{}, levelFields...), extra...)...)
	if err != nil {
		return nil, err
	}
	in := &levelInput{f: f}
	if _, err := get(f, "name", &in.name); err != nil {
		return nil, err
	}
	if _, err := get(f, "models", &in.models); err != nil {
		return nil, badField("models", "must be a list of model names")
	}
	if _, err := get(f, "group", &in.group); err != nil {
		return nil, err
	}
	if f.has("name") {
		if err := checkName("name", in.name, 64); err != nil {
			return nil, err
		}
	}
	if f.has("group") && in.group != "" {
		if err := checkName("group", in.group, 64); err != nil {
			return nil, err
		}
	}
	if in.grant, err = a.readMCPGrant(r.Context(), f); err != nil {
		return nil, err
	}
	in.limits, in.limitsSent, err = readLimits(f, cur)
	return in, err
}

func (in *levelInput) apply(name *string, models *[]string, group *string) {
	if in.f.has("name") {
		*name = in.name
	}
	if in.f.has("models") {
		*models = in.models
	}
	if in.f.has("group") {
		*group = in.group
	}
}

func (a *API) orgView(ctx context.Context, o *store.Org) (orgView, error) {
	lv, err := a.limitsOf(ctx, store.SubjectOrg, o.ID)
	if err != nil {
		return orgView{}, err
	}
	grant, err := a.mcpGrantOf(ctx, store.SubjectOrg, o.ID)
	return orgView{Org: *o, limitsView: lv, MCP: grant}, err
}

func (a *API) teamView(ctx context.Context, t *store.Team) (teamView, error) {
	lv, err := a.limitsOf(ctx, store.SubjectTeam, t.ID)
	if err != nil {
		return teamView{}, err
	}
	grant, err := a.mcpGrantOf(ctx, store.SubjectTeam, t.ID)
	if err != nil {
		return teamView{}, err
	}
	v := teamView{Team: *t, limitsView: lv, MCP: grant}
	// The live balance, as a user's is shown: the stored one trails it by
	// the writer's queue.
	if a.d.Billing != nil {
		if v.Quota, err = a.d.Billing.Balances().Team(ctx, t.ID); err != nil {
			return teamView{}, err
		}
	}
	return v, nil
}

func (a *API) listOrgs(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	orgs, err := a.d.Store.Teams().ListOrgs(r.Context())
	if err != nil {
		return err
	}
	views := make([]orgView, 0, len(orgs))
	for i := range orgs {
		v, err := a.orgView(r.Context(), &orgs[i])
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	apijson.Write(w, http.StatusOK, newList(views, len(views)))
	return nil
}

func (a *API) writeOrg(w http.ResponseWriter, r *http.Request, status int, o *store.Org) error {
	v, err := a.orgView(r.Context(), o)
	if err != nil {
		return err
	}
	apijson.Write(w, status, v)
	return nil
}

func (a *API) createOrg(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	in, err := a.readLevel(w, r, ratelimit.Limits{})
	if err != nil {
		return err
	}
	if !in.f.has("name") {
		return badField("name", "is required")
	}
	o := &store.Org{Models: []string{}}
	in.apply(&o.Name, &o.Models, &o.Group)
	if err := a.d.Store.Teams().CreateOrg(r.Context(), o); err != nil {
		return err
	}
	noteTarget(r.Context(), o.ID)
	if err := a.saveLevel(r.Context(), store.SubjectOrg, o.ID, in); err != nil {
		return err
	}
	return a.writeOrg(w, r, http.StatusCreated, o)
}

func (a *API) loadOrg(r *http.Request) (*store.Org, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return a.d.Store.Teams().GetOrg(r.Context(), id)
}

func (a *API) getOrg(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	o, err := a.loadOrg(r)
	if err != nil {
		return err
	}
	return a.writeOrg(w, r, http.StatusOK, o)
}

func (a *API) patchOrg(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	o, err := a.loadOrg(r)
	if err != nil {
		return err
	}
	in, err := a.readLevel(w, r, a.currentLimits(store.SubjectOrg, o.ID))
	if err != nil {
		return err
	}
	in.apply(&o.Name, &o.Models, &o.Group)
	if err := a.d.Store.Teams().UpdateOrg(r.Context(), o); err != nil {
		return err
	}
	if err := a.saveLevel(r.Context(), store.SubjectOrg, o.ID, in); err != nil {
		return err
	}
	a.d.Keys.Invalidate()
	return a.writeOrg(w, r, http.StatusOK, o)
}

func (a *API) deleteOrg(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := a.d.Store.Teams().DeleteOrg(r.Context(), id); err != nil {
		return err
	}
	a.forgetLimits(r.Context(), store.SubjectOrg, strconv.FormatInt(id, 10))
	a.forgetMCPGrant(r.Context(), store.SubjectOrg, id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listTeams shows an administrator every team and anyone else its own.
func (a *API) listTeams(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	teams, err := a.d.Store.Teams().ListTeams(r.Context())
	if err != nil {
		return err
	}
	views := []teamView{}
	for i := range teams {
		if !p.AtLeast(store.RoleAdmin) && teams[i].ID != p.TeamID {
			continue
		}
		v, err := a.teamView(r.Context(), &teams[i])
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	apijson.Write(w, http.StatusOK, newList(views, len(views)))
	return nil
}

func (a *API) writeTeam(w http.ResponseWriter, r *http.Request, status int, t *store.Team) error {
	v, err := a.teamView(r.Context(), t)
	if err != nil {
		return err
	}
	apijson.Write(w, status, v)
	return nil
}

// teamInput is a team request: the common members, its organisation and
// its billing.
func (a *API) readTeam(w http.ResponseWriter, r *http.Request, t *store.Team) (*levelInput, error) {
	in, err := a.readLevel(w, r, a.currentLimits(store.SubjectTeam, t.ID), "org_id", "billing")
	if err != nil {
		return nil, err
	}
	if _, err := get(in.f, "org_id", &t.OrgID); err != nil {
		return nil, err
	}
	if in.f.has("org_id") {
		if _, err := a.d.Store.Teams().GetOrg(r.Context(), t.OrgID); err != nil {
			return nil, badField("org_id", "must name an existing organisation")
		}
	}
	if _, err := get(in.f, "billing", &t.Billing); err != nil {
		return nil, err
	}
	if t.Billing != store.BillingOwn && t.Billing != store.BillingShared {
		return nil, badField("billing", "must be own or shared")
	}
	in.apply(&t.Name, &t.Models, &t.Group)
	return in, nil
}

func (a *API) createTeam(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	t := &store.Team{Models: []string{}, Billing: store.BillingOwn}
	in, err := a.readTeam(w, r, t)
	if err != nil {
		return err
	}
	if !in.f.has("name") {
		return badField("name", "is required")
	}
	if !in.f.has("org_id") {
		return badField("org_id", "is required: a team belongs to one organisation")
	}
	if err := a.d.Store.Teams().CreateTeam(r.Context(), t); err != nil {
		return err
	}
	noteTarget(r.Context(), t.ID)
	if err := a.saveLevel(r.Context(), store.SubjectTeam, t.ID, in); err != nil {
		return err
	}
	return a.writeTeam(w, r, http.StatusCreated, t)
}

// loadTeam reads the {id} team for p: an administrator any team, a
// member only its own (404 for others, which it may not know of).
func (a *API) loadTeam(r *http.Request, p *auth.Principal) (*store.Team, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if !p.AtLeast(store.RoleAdmin) && id != p.TeamID {
		return nil, notFound("team")
	}
	return a.d.Store.Teams().GetTeam(r.Context(), id)
}

func (a *API) getTeam(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.loadTeam(r, p)
	if err != nil {
		return err
	}
	return a.writeTeam(w, r, http.StatusOK, t)
}

func (a *API) patchTeam(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.loadTeam(r, p)
	if err != nil {
		return err
	}
	in, err := a.readTeam(w, r, t)
	if err != nil {
		return err
	}
	if err := a.d.Store.Teams().UpdateTeam(r.Context(), t); err != nil {
		return err
	}
	if err := a.saveLevel(r.Context(), store.SubjectTeam, t.ID, in); err != nil {
		return err
	}
	a.d.Keys.Invalidate()
	return a.writeTeam(w, r, http.StatusOK, t)
}

func (a *API) deleteTeam(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := a.d.Store.Teams().DeleteTeam(r.Context(), id); err != nil {
		return err
	}
	a.forgetLimits(r.Context(), store.SubjectTeam, strconv.FormatInt(id, 10))
	a.forgetMCPGrant(r.Context(), store.SubjectTeam, id)
	a.d.Keys.Invalidate()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// teamQuota moves a team's shared balance with a recorded ledger entry.
func (a *API) teamQuota(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.loadTeam(r, p)
	if err != nil {
		return err
	}
	f, err := readFields(w, r, "delta")
	if err != nil {
		return err
	}
	var delta int64
	if ok, err := get(f, "delta", &delta); err != nil || !ok {
		return firstErr(err, badField("delta", "is required"))
	}
	bal, err := a.d.Billing.Balances().Team(r.Context(), t.ID)
	if err == nil && delta != 0 {
		var c billing.Credited
		c, err = a.d.Billing.Credit(r.Context(), billing.Credit{TeamID: t.ID, Delta: delta, Note: "team quota changed by an administrator"})
		bal = c.Balance
	}
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]int64{"quota": bal})
	return nil
}
