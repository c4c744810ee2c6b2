package admin

import (
	"context"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/users"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/ratelimit"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *API) routeUsers(mux *http.ServeMux) {
	a.route(mux, "GET /api/users", store.RoleAdmin, "user", a.listUsers)
	a.route(mux, "POST /api/users", store.RoleAdmin, "user", a.createUser)
	a.route(mux, "GET /api/users/{id}", store.RoleAdmin, "user", a.getUser)
	a.route(mux, "PATCH /api/users/{id}", store.RoleAdmin, "user", a.patchUser)
	a.route(mux, "DELETE /api/users/{id}", store.RoleAdmin, "user", a.deleteUser)
	a.route(mux, "POST /api/users/{id}/quota", store.RoleAdmin, "user", a.userQuota)
}

// userView is a user as the API shows it: never the password hash, and the
// live balance rather than the database column that trails it.
type userView struct {
	ID        int64     `json:"id"`
	Username  string    `json:"username"`
	Role      string    `json:"role"`
	Group     string    `json:"group"`
	Quota     int64     `json:"quota"`
	UsedQuota int64     `json:"used_quota"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	TeamID    int64     `json:"team_id"`
	TeamRole  string    `json:"team_role"`
	limitsView
	MCP          *mcpGrantView `json:"mcp"`
	PlanOverflow string        `json:"plan_overflow"` // balance or wait (CONTRACT §18)
}

func (a *API) userView(ctx context.Context, u *store.User) (userView, error) {
	bal, err := a.d.Billing.Balances().User(ctx, u.ID)
	if err != nil {
		return userView{}, err
	}
	lv, err := a.limitsOf(ctx, store.SubjectUser, u.ID)
	if err != nil {
		return userView{}, err
	}
	grant, err := a.mcpGrantOf(ctx, store.SubjectUser, u.ID)
	if err != nil {
		return userView{}, err
	}
	return userView{ID: u.ID, Username: u.Username, Role: u.Role, Group: u.Group, Quota: bal,
		UsedQuota: u.UsedQuota, Status: u.Status, CreatedAt: u.CreatedAt, TeamID: u.TeamID, TeamRole: u.TeamRole,
		limitsView: lv, MCP: grant, PlanOverflow: a.planOverflowOf(u.ID)}, nil
}

func (a *API) writeUser(w http.ResponseWriter, r *http.Request, status int, u *store.User) error {
	v, err := a.userView(r.Context(), u)
	if err != nil {
		return err
	}
	apijson.Write(w, status, v)
	return nil
}

// roleRank orders roles; unknown roles rank below every real one.
func roleRank(role string) int { return users.Rank(role) }

// mayManage: root manages everyone, others themselves and those below them.
func mayManage(p *auth.Principal, target *store.User) bool {
	return p.Role == store.RoleRoot || target.ID == p.UserID || roleRank(target.Role) < roleRank(p.Role)
}

// mayGrant: only root hands out a role as strong as the granter's own.
func mayGrant(p *auth.Principal, role string) bool {
	return p.Role == store.RoleRoot || roleRank(role) < roleRank(p.Role)
}

func checkRole(role string) error { return invalid(users.CheckRole(role)) }

// loadUser reads the {id} user, or 404.
func (a *API) loadUser(r *http.Request) (*store.User, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return a.d.Store.Users().Get(r.Context(), id)
}

func (a *API) listUsers(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	if err := a.flush(r.Context()); err != nil {
		return err
	}
	users, total, err := a.d.Store.Users().List(r.Context(), page)
	if err != nil {
		return err
	}
	views := make([]userView, 0, len(users))
	for i := range users {
		v, err := a.userView(r.Context(), &users[i])
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	apijson.Write(w, http.StatusOK, newList(views, total))
	return nil
}

func (a *API) getUser(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if _, err := pathID(r); err != nil {
		return err
	}
	if err := a.flush(r.Context()); err != nil {
		return err
	}
	u, err := a.loadUser(r)
	if err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, u)
}

var userFields = []string{"username", "password", "role", "group", "quota", "status", "mcp", "plan_overflow", "team_id", "team_role"}

// userInput holds the writable fields of a user request.
type userInput struct {
	f                                   fields
	username, password, role, group, st string
	quota                               int64
	limits                              ratelimit.Limits
	limitsSent                          bool
}

func readUserInput(w http.ResponseWriter, r *http.Request, cur ratelimit.Limits) (*userInput, error) {
	f, err := readFields(w, r, append(append([]string{}, userFields...), userLimitFields...)...)
	if err != nil {
		return nil, err
	}
	in := &userInput{f: f}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"username", &in.username}, {"password", &in.password}, {"role", &in.role}, {"group", &in.group}, {"status", &in.st}} {
		if _, err := get(f, s.name, s.dst); err != nil {
			return nil, err
		}
	}
	if _, err := get(f, "quota", &in.quota); err != nil {
		return nil, err
	}
	if in.limits, in.limitsSent, err = readLimits(f, cur); err != nil {
		return nil, err
	}
	return in, in.check()
}

// check validates the members that were sent.
func (in *userInput) check() error {
	f := in.f
	if f.has("username") {
		if err := invalid(users.CheckUsername(in.username)); err != nil {
			return err
		}
	}
	if f.has("role") {
		if err := checkRole(in.role); err != nil {
			return err
		}
	}
	if f.has("group") {
		if err := checkName("group", in.group, 64); err != nil {
			return err
		}
	}
	if f.has("status") {
		return checkStatus(in.st)
	}
	return checkOverflow(f)
}

func (a *API) createUser(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	in, err := readUserInput(w, r, ratelimit.Limits{})
	if err != nil {
		return err
	}
	grant, err := a.readMCPGrant(r.Context(), in.f)
	if err != nil {
		return err
	}
	if !in.f.has("username") || !in.f.has("password") {
		return badRequest("username and password are required")
	}
	acct := users.Account{Username: in.username, Password: in.password, Role: in.role, Group: in.group, Status: in.st,
		Quota: in.quota, QuotaNote: "initial quota"}
	if err := invalid(a.users.Check(&acct)); err != nil {
		return err
	}
	if !mayGrant(p, acct.Role) {
		return forbidden("only root may create a user with role %s", acct.Role)
	}
	u, err := a.users.Create(r.Context(), acct)
	if u != nil {
		noteTarget(r.Context(), u.ID)
	}
	if err != nil {
		return invalid(err)
	}
	if err := a.saveLimits(r.Context(), store.SubjectUser, u.ID, in.limits, in.limitsSent); err != nil {
		return err
	}
	if err := a.saveUserExtras(r.Context(), u.ID, grant, in.f); err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, u)
}

func (a *API) patchUser(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u, err := a.loadUser(r)
	if err != nil {
		return err
	}
	in, err := readUserInput(w, r, a.currentLimits(store.SubjectUser, u.ID))
	if err != nil {
		return err
	}
	grant, err := a.readMCPGrant(r.Context(), in.f)
	if err != nil {
		return err
	}
	if !mayManage(p, u) {
		return forbidden("only root may change a user with role %s", u.Role)
	}
	if in.f.has("role") && in.role != u.Role && !mayGrant(p, in.role) {
		return forbidden("only root may grant the role %s", in.role)
	}
	if err := in.apply(a.users, u); err != nil {
		return err
	}
	if err := a.updateUser(r.Context(), in.f, u); err != nil {
		return err
	}
	if in.f.has("password") {
		if err := a.endSessionsAfterPasswordSet(r, u.ID); err != nil {
			return err
		}
	}
	// A disabled account is refused anyway; ending its sessions as well
	// means enabling it again does not revive them.
	if in.f.has("status") && u.Status == store.StatusDisabled {
		if err := a.d.Sessions.EndAll(r.Context(), u.ID, ""); err != nil {
			return err
		}
	}
	if in.f.has("quota") {
		if err := a.setUserQuota(r.Context(), u.ID, in.quota); err != nil {
			return err
		}
	}
	if err := a.saveLimits(r.Context(), store.SubjectUser, u.ID, in.limits, in.limitsSent); err != nil {
		return err
	}
	if err := a.saveUserExtras(r.Context(), u.ID, grant, in.f); err != nil {
		return err
	}
	a.d.Keys.Invalidate()
	return a.writeUser(w, r, http.StatusOK, u)
}

// endSessionsAfterPasswordSet signs the user out everywhere once a new
// password is set, keeping only the caller's own session when users change
// their own password here.
func (a *API) endSessionsAfterPasswordSet(r *http.Request, userID int64) error {
	keep := ""
	if _, s, ok := a.session(r); ok && s.UserID == userID {
		keep = s.IDHash
	}
	return a.d.Sessions.EndAll(r.Context(), userID, keep)
}

func (in *userInput) apply(svc *users.Service, u *store.User) error {
	if in.f.has("username") {
		u.Username = in.username
	}
	if in.f.has("password") {
		if err := invalid(svc.SetPassword(u, "password", in.password)); err != nil {
			return err
		}
	}
	if in.f.has("role") {
		u.Role = in.role
	}
	if in.f.has("group") {
		u.Group = in.group
	}
	if in.f.has("status") {
		u.Status = in.st
	}
	return nil
}

// setUserQuota turns an absolute balance into a recorded top-up of the
// difference, so the ledger stays the exact history of the balance.
func (a *API) setUserQuota(ctx context.Context, userID, want int64) error {
	cur, err := a.d.Billing.Balances().User(ctx, userID)
	if err != nil {
		return err
	}
	if want == cur {
		return nil
	}
	_, err = a.d.Billing.Credit(ctx, billing.Credit{UserID: userID, Delta: want - cur, Note: "quota set by an administrator"})
	return err
}

func (a *API) deleteUser(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u, err := a.loadUser(r)
	if err != nil {
		return err
	}
	switch {
	case u.Role == store.RoleRoot && p.Role != store.RoleRoot:
		return forbidden("only root may delete a root user")
	case !mayManage(p, u):
		return forbidden("only root may delete a user with role %s", u.Role)
	case u.ID == p.UserID:
		return errorf(http.StatusConflict, "conflict", "you cannot delete your own account")
	}
	if err := a.d.Store.Users().Delete(r.Context(), u.ID); err != nil {
		return err
	}
	// Ids are not reused on every database, but a stale session row must
	// not outlive its user either way.
	if err := a.d.Sessions.EndAll(r.Context(), u.ID, ""); err != nil {
		return err
	}
	a.d.Billing.Balances().Forget(u.ID, 0)
	a.forgetLimits(r.Context(), store.SubjectUser, strconv.FormatInt(u.ID, 10))
	a.forgetMCPGrant(r.Context(), store.SubjectUser, u.ID)
	a.d.Keys.Invalidate()
	apijson.Write(w, http.StatusOK, deleted{ID: u.ID, Deleted: true})
	return nil
}

func (a *API) userQuota(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u, err := a.loadUser(r)
	if err != nil {
		return err
	}
	f, err := readFields(w, r, "delta", "note")
	if err != nil {
		return err
	}
	var delta int64
	var note string
	if ok, err := get(f, "delta", &delta); err != nil || !ok {
		return firstErr(err, badField("delta", "is required"))
	}
	if _, err := get(f, "note", &note); err != nil {
		return err
	}
	if !mayManage(p, u) {
		return forbidden("only root may change the quota of a user with role %s", u.Role)
	}
	if note == "" {
		note = "quota changed by " + p.Username
	}
	bal, err := a.d.Billing.Balances().User(r.Context(), u.ID)
	if err == nil && delta != 0 {
		var c billing.Credited
		c, err = a.d.Billing.Credit(r.Context(), billing.Credit{UserID: u.ID, Delta: delta, Note: note})
		bal = c.Balance
	}
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]int64{"quota": bal})
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
