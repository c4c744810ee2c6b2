package admin

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/books"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// A team's manager sees its members, their keys and the team's usage,
// creates keys for members and sets member budgets; administrators may do
// all of it for any team. Nothing here changes a team's own limits or
// balance, and a manager never changes its own budget.
func (a *API) routeTeamMembers(mux *http.ServeMux) {
	a.route(mux, "GET /api/teams/{id}/members", store.RoleUser, "team", a.teamMembers)
	a.route(mux, "PATCH /api/teams/{id}/members/{user_id}", store.RoleUser, "user", a.patchTeamMember)
	a.route(mux, "GET /api/teams/{id}/keys", store.RoleUser, "team", a.teamKeys)
	a.route(mux, "GET /api/teams/{id}/usage", store.RoleUser, "team", a.teamUsage)
}

// manages reports whether p manages team id: an administrator, or the
// team's manager.
func manages(p *auth.Principal, id int64) bool {
	return p.AtLeast(store.RoleAdmin) || (p.TeamID == id && p.TeamRole == store.TeamManager)
}

// managedTeam reads the {id} team that p manages, or refuses with 403.
func (a *API) managedTeam(r *http.Request, p *auth.Principal) (*store.Team, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	if !manages(p, id) {
		return nil, forbidden("only the team's manager or an administrator may do this")
	}
	return a.d.Store.Teams().GetTeam(r.Context(), id)
}

func (a *API) teamMembers(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.managedTeam(r, p)
	if err != nil {
		return err
	}
	if err := a.flush(r.Context()); err != nil {
		return err
	}
	members, err := a.d.Store.Teams().Members(r.Context(), t.ID)
	if err != nil {
		return err
	}
	views := make([]userView, 0, len(members))
	for i := range members {
		v, err := a.userView(r.Context(), &members[i])
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	apijson.Write(w, http.StatusOK, newList(views, len(views)))
	return nil
}

// patchTeamMember sets a member's budget and rate limits.
func (a *API) patchTeamMember(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.managedTeam(r, p)
	if err != nil {
		return err
	}
	uid, err := parseID(r.PathValue("user_id"))
	if err != nil {
		return err
	}
	u, err := a.d.Store.Users().Get(r.Context(), uid)
	if err != nil {
		return err
	}
	if u.TeamID != t.ID {
		return notFound("member")
	}
	if !p.AtLeast(store.RoleAdmin) && (u.ID == p.UserID || u.Role != store.RoleUser) {
		return forbidden("a manager sets the budgets of the team's other members, not its own")
	}
	f, err := readFields(w, r, userLimitFields...)
	if err != nil {
		return err
	}
	l, sent, err := readLimits(f, a.currentLimits(store.SubjectUser, u.ID))
	if err != nil {
		return err
	}
	if err := a.saveLimits(r.Context(), store.SubjectUser, u.ID, l, sent); err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, u)
}

func (a *API) teamKeys(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.managedTeam(r, p)
	if err != nil {
		return err
	}
	members, err := a.d.Store.Teams().Members(r.Context(), t.ID)
	if err != nil {
		return err
	}
	views := []tokenView{}
	for _, m := range members {
		toks, _, err := a.d.Store.Tokens().List(r.Context(), m.ID, store.Page{PageSize: 1000})
		if err != nil {
			return err
		}
		for i := range toks {
			v, err := a.tokenView(r.Context(), &toks[i])
			if err != nil {
				return err
			}
			views = append(views, v)
		}
	}
	apijson.Write(w, http.StatusOK, newList(views, len(views)))
	return nil
}

// teamUsage sums the team's consume rows in the window by user, key or
// model, from the usage rollups.
func (a *API) teamUsage(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.managedTeam(r, p)
	if err != nil {
		return err
	}
	by := r.URL.Query().Get("group_by")
	if by == "" {
		by = "user"
	}
	if by != "user" && by != "key" && by != "model" {
		return badField("group_by", "must be user, key or model")
	}
	win, err := a.window(r)
	if err != nil {
		return err
	}
	items, err := books.TeamUsage(r.Context(), a.d.Store, t.ID, win, by)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"team_id": t.ID, "items": items, "group_by": by,
		"since": win.Since, "until": win.Until})
	return nil
}

// managesMember reports whether p, a team's manager, may act for user id:
// a plain user of the team p manages, other than p.
func (a *API) managesMember(ctx context.Context, p *auth.Principal, id int64) (bool, error) {
	if p.TeamRole != store.TeamManager || p.TeamID == 0 || id == p.UserID {
		return false, nil
	}
	u, err := a.d.Store.Users().Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return u.TeamID == p.TeamID && u.Role == store.RoleUser, nil
}

// updateUser writes u and, when f sent them, its team and team role.
func (a *API) updateUser(ctx context.Context, f fields, u *store.User) error {
	joined, err := a.readMembership(ctx, f, u)
	if err != nil {
		return err
	}
	if err := a.d.Store.Users().Update(ctx, u); err != nil || !joined {
		return err
	}
	return a.d.Store.Teams().SetMembership(ctx, u.ID, u.TeamID, u.TeamRole)
}

// readMembership applies team_id and team_role of f to u; a team_id of 0
// or null takes the user out of its team.
func (a *API) readMembership(ctx context.Context, f fields, u *store.User) (bool, error) {
	if !f.has("team_id") && !f.has("team_role") {
		return false, nil
	}
	if f.has("team_id") {
		u.TeamID = 0
		if !f.isNull("team_id") {
			if _, err := get(f, "team_id", &u.TeamID); err != nil {
				return false, err
			}
		}
	}
	if f.has("team_role") {
		u.TeamRole = ""
		if !f.isNull("team_role") {
			if _, err := get(f, "team_role", &u.TeamRole); err != nil {
				return false, err
			}
		}
	}
	if u.TeamID == 0 {
		u.TeamRole = ""
		return true, nil
	}
	if _, err := a.d.Store.Teams().GetTeam(ctx, u.TeamID); err != nil {
		return false, badField("team_id", "must name an existing team (%s)", strconv.FormatInt(u.TeamID, 10))
	}
	switch u.TeamRole {
	case "":
		u.TeamRole = store.TeamMember
	case store.TeamMember, store.TeamManager:
	default:
		return false, badField("team_role", "must be member or manager")
	}
	return true, nil
}
