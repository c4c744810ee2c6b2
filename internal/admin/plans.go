package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/plans"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// planFields are the members of a plan body (CONTRACT §18).
var planFields = []string{"name", "price_usd", "period", "windows", "models", "groups", "priority"}

func (a *API) routePlans(mux *http.ServeMux) {
	a.route(mux, "GET /api/plans", store.RoleUser, "plan", a.listPlans)
	a.route(mux, "POST /api/plans", store.RoleRoot, "plan", a.createPlan)
	a.route(mux, "GET /api/plans/{id}", store.RoleUser, "plan", a.getPlan)
	a.route(mux, "PATCH /api/plans/{id}", store.RoleRoot, "plan", a.patchPlan)
	a.route(mux, "DELETE /api/plans/{id}", store.RoleRoot, "plan", a.deletePlan)
	a.route(mux, "GET /api/users/{id}/plans", store.RoleAdmin, "plan grant", a.listUserPlans)
	a.route(mux, "POST /api/users/{id}/plans", store.RoleAdmin, "plan grant", a.grantPlan)
	a.route(mux, "DELETE /api/users/{id}/plans/{grant}", store.RoleAdmin, "plan grant", a.revokePlan)
	a.route(mux, "GET /api/user/plans", store.RoleUser, "plan", a.ownPlans)
	a.route(mux, "PATCH /api/auth/me", store.RoleUser, "user", a.patchMe)
	a.route(mux, "POST /api/user/subscribe", store.RoleUser, "plan", a.subscribe)
}

func (a *API) listPlans(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	ps, err := a.d.Store.Plans().List(r.Context())
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, newList(ps, len(ps)))
	return nil
}

func (a *API) getPlan(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := a.d.Store.Plans().Get(r.Context(), id)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, p)
	return nil
}

func (a *API) createPlan(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	f, err := readFields(w, r, planFields...)
	if err != nil {
		return err
	}
	p := store.Plan{Period: "month", Models: []string{}, Groups: []string{}}
	if err := applyPlanFields(f, &p); err != nil {
		return err
	}
	if err := a.d.Store.Plans().Create(r.Context(), &p); err != nil {
		return err
	}
	noteTarget(r.Context(), p.ID)
	return a.planChanged(w, r.Context(), p)
}

func (a *API) patchPlan(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := a.d.Store.Plans().Get(r.Context(), id)
	if err != nil {
		return err
	}
	f, err := readFields(w, r, planFields...)
	if err != nil {
		return err
	}
	if err := applyPlanFields(f, p); err != nil {
		return err
	}
	if err := a.d.Store.Plans().Update(r.Context(), p); err != nil {
		return err
	}
	return a.planChanged(w, r.Context(), *p)
}

func (a *API) deletePlan(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := a.d.Store.Plans().Delete(r.Context(), id); err != nil {
		return err
	}
	if err := a.reloadPlans(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, deleted{ID: id, Deleted: true})
	return nil
}

func (a *API) planChanged(w http.ResponseWriter, ctx context.Context, p store.Plan) error {
	if err := a.reloadPlans(ctx); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, p)
	return nil
}

// reloadPlans makes a change serve on this node at once (other nodes
// follow the change announcement).
func (a *API) reloadPlans(ctx context.Context) error {
	if a.d.Plans == nil {
		return nil
	}
	return a.d.Plans.Reload(ctx)
}

// applyPlanFields copies the members sent onto p and checks the result.
func applyPlanFields(f fields, p *store.Plan) error {
	for _, s := range []struct {
		name string
		dst  *string
	}{{"name", &p.Name}, {"period", &p.Period}} {
		if _, err := get(f, s.name, s.dst); err != nil {
			return err
		}
	}
	if _, err := get(f, "price_usd", &p.PriceUSD); err != nil {
		return err
	}
	if _, err := get(f, "priority", &p.Priority); err != nil {
		return err
	}
	if _, err := get(f, "windows", &p.Windows); err != nil {
		return err
	}
	if _, err := getList(f, "models", &p.Models); err != nil {
		return err
	}
	if _, err := getList(f, "groups", &p.Groups); err != nil {
		return err
	}
	if err := plans.Validate(p); err != nil {
		return badRequest("%s", err.Error())
	}
	return nil
}

// grantFields are the members of a grant body.
var grantFields = []string{"plan_id", "until"}

func (a *API) managedUser(r *http.Request, p *auth.Principal) (*store.User, error) {
	u, err := a.loadUser(r)
	if err != nil {
		return nil, err
	}
	if !mayManage(p, u) {
		return nil, forbidden("only root may change the plans of a user with role %s", u.Role)
	}
	return u, nil
}

func (a *API) grantPlan(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u, err := a.managedUser(r, p)
	if err != nil {
		return err
	}
	f, err := readFields(w, r, grantFields...)
	if err != nil {
		return err
	}
	g := store.PlanGrant{UserID: u.ID, Source: store.GrantAdmin}
	if ok, err := get(f, "plan_id", &g.PlanID); err != nil || !ok {
		return firstErr(err, badField("plan_id", "is required"))
	}
	plan, err := a.d.Store.Plans().Get(r.Context(), g.PlanID)
	if err != nil {
		return err
	}
	var until string
	if ok, err := get(f, "until", &until); err != nil {
		return err
	} else if ok {
		if g.Until, err = time.Parse(time.RFC3339, until); err != nil {
			return badField("until", "must be an RFC 3339 time")
		}
	} else {
		g.Until = periodEnd(plan.Period, time.Now())
	}
	if !g.Until.After(time.Now()) {
		return badField("until", "must be in the future")
	}
	if err := a.d.Store.Plans().AddGrant(r.Context(), &g); err != nil {
		return err
	}
	noteTarget(r.Context(), u.ID)
	if err := a.reloadPlans(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, g)
	return nil
}

// periodEnd is one plan period after t.
func periodEnd(period string, t time.Time) time.Time {
	switch period {
	case "day":
		return t.AddDate(0, 0, 1)
	case "week":
		return t.AddDate(0, 0, 7)
	case "year":
		return t.AddDate(1, 0, 0)
	}
	return t.AddDate(0, 1, 0)
}

func (a *API) revokePlan(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u, err := a.managedUser(r, p)
	if err != nil {
		return err
	}
	gid, err := parseID(r.PathValue("grant"))
	if err != nil {
		return err
	}
	if err := a.d.Store.Plans().DeleteGrant(r.Context(), u.ID, gid); err != nil {
		return err
	}
	if err := a.reloadPlans(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, deleted{ID: gid, Deleted: true})
	return nil
}

func (a *API) listUserPlans(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	u, err := a.managedUser(r, p)
	if err != nil {
		return err
	}
	return a.writePlans(w, r, u.ID)
}

func (a *API) ownPlans(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if p.UserID == 0 {
		return badRequest("the root token holds no plans; sign in as a user")
	}
	return a.writePlans(w, r, p.UserID)
}

// heldPlans is the answer of GET /api/user/plans: every plan held, with
// its windows, and what happens when a window is spent.
type heldPlans struct {
	Items        []plans.HeldPlan `json:"items"`
	Total        int              `json:"total"`
	PlanOverflow string           `json:"plan_overflow"`
}

func (a *API) writePlans(w http.ResponseWriter, r *http.Request, userID int64) error {
	if a.d.Plans == nil {
		return notFound("plans")
	}
	held, err := a.d.Plans.Usage(r.Context(), userID)
	if err != nil {
		return err
	}
	over := plans.OverflowBalance
	if a.d.Plans.Waits(userID) {
		over = plans.OverflowWait
	}
	apijson.Write(w, http.StatusOK, heldPlans{Items: held, Total: len(held), PlanOverflow: over})
	return nil
}

// readOverflow reads plan_overflow when sent.
func readOverflow(f fields) (string, bool, error) {
	var mode string
	ok, err := get(f, "plan_overflow", &mode)
	if err != nil || !ok {
		return "", ok, err
	}
	if mode != plans.OverflowBalance && mode != plans.OverflowWait {
		return "", true, badField("plan_overflow", "must be balance or wait")
	}
	return mode, true, nil
}

// checkOverflow refuses a plan_overflow that is neither setting.
func checkOverflow(f fields) error {
	_, _, err := readOverflow(f)
	return err
}

// patchOverflow saves plan_overflow when it was sent.
func (a *API) patchOverflow(ctx context.Context, f fields, userID int64) error {
	mode, ok, err := readOverflow(f)
	if err != nil || !ok {
		return err
	}
	return a.saveOverflow(ctx, userID, mode)
}

func (a *API) saveOverflow(ctx context.Context, userID int64, mode string) error {
	if err := a.d.Store.Plans().SetOverflow(ctx, userID, mode); err != nil {
		return err
	}
	return a.reloadPlans(ctx)
}

// patchMe changes what a user may set on its own account.
func (a *API) patchMe(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	f, err := readFields(w, r, "plan_overflow")
	if err != nil {
		return err
	}
	mode, ok, err := readOverflow(f)
	if err != nil {
		return err
	}
	if p.UserID == 0 {
		return badRequest("the root token has no account to change; sign in as a user")
	}
	if ok {
		if err := a.saveOverflow(r.Context(), p.UserID, mode); err != nil {
			return err
		}
	}
	return a.me(w, r, p)
}

// planOverflowOf is a user's setting as the user views show it.
func (a *API) planOverflowOf(userID int64) string {
	if a.d.Plans != nil && a.d.Plans.Waits(userID) {
		return plans.OverflowWait
	}
	return plans.OverflowBalance
}

// saveUserExtras saves what a user body sets beside the user row: its MCP
// grant and its plan_overflow.
func (a *API) saveUserExtras(ctx context.Context, userID int64, grant mcpGrantInput, f fields) error {
	if err := a.saveMCPGrant(ctx, store.SubjectUser, userID, grant); err != nil {
		return err
	}
	return a.patchOverflow(ctx, f, userID)
}
