package admin

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/books"
	"github.com/turnpike-gw/turnpike/internal/store"
)

// maxProviderCSV bounds an uploaded usage export.
const maxProviderCSV = 16 << 20

func (a *API) routeReports(mux *http.ServeMux) {
	a.route(mux, "GET /api/reports/margin", store.RoleAdmin, "report", a.marginReport)
	a.route(mux, "GET /api/reports/cache", store.RoleAdmin, "report", a.cacheReport)
	a.route(mux, "GET /api/reports/usage", store.RoleUser, "report", a.usageReport)
	a.route(mux, "GET /api/reports/reconcile", store.RoleRoot, "report", a.reconcileReport)
	a.route(mux, "POST /api/reports/reconcile/provider", store.RoleRoot, "channel", a.providerReport)
}

// window reads since and until; this node's queued billing items are
// written first, and the window ends after they were, so a report
// includes the calls this node just answered.
func (a *API) window(r *http.Request) (store.Window, error) {
	q := r.URL.Query()
	if _, err := books.ParseWindow(q.Get("since"), q.Get("until"), time.Now()); err != nil {
		return store.Window{}, badRequest("%s", err.Error())
	}
	if err := a.flush(r.Context()); err != nil {
		return store.Window{}, err
	}
	w, err := books.ParseWindow(q.Get("since"), q.Get("until"), time.Now())
	if err != nil {
		return w, badRequest("%s", err.Error())
	}
	return w, nil
}

func (a *API) marginReport(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	refuse := func(err error) error { return badRequest("%s", err.Error()) }
	return a.groupedReport(w, r, refuse, func(ctx context.Context, win store.Window, by string) (any, error) {
		items, err := books.Margin(ctx, a.d.Store, win, by, a.d.Billing.QuotaPerUSD())
		if err != nil {
			return nil, err
		}
		return a.marginScope(ctx, p, by, items)
	})
}

// marginScope keeps the lines by user or by key that p may manage: an
// administrator sees itself and the users below it, never root's or
// another administrator's accounts and keys (the rule of GET /api/users
// and /api/tokens); root sees every line. Lines by channel or model name
// no account.
func (a *API) marginScope(ctx context.Context, p *auth.Principal, by string, items []books.MarginItem) ([]books.MarginItem, error) {
	if p.Role == store.RoleRoot || (by != "user" && by != "token") {
		return items, nil
	}
	users := map[int64]bool{}
	visible := func(userID int64) (bool, error) {
		if ok, seen := users[userID]; seen {
			return ok, nil
		}
		u, err := a.d.Store.Users().Get(ctx, userID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		users[userID] = err == nil && mayManage(p, u)
		return users[userID], nil
	}
	kept := items[:0]
	for _, it := range items {
		id, err := strconv.ParseInt(it.Key, 10, 64)
		if err != nil {
			continue
		}
		owner := id
		if by == "token" {
			t, err := a.d.Store.Tokens().Get(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue // whose key it was is unknown: not shown
			}
			if err != nil {
				return nil, err
			}
			owner = t.UserID
		}
		ok, err := visible(owner)
		if err != nil {
			return nil, err
		}
		if ok {
			kept = append(kept, it)
		}
	}
	return kept, nil
}

// usageReport sums the window from the rollups per user, key, model,
// channel or team and per hour or day (CONTRACT §20). An administrator's
// lines by user or key are those it may manage, as in the margin report. A
// plain user (the console's dashboard) sees its own usage only, without
// the upstream cost, which is for administrators alone (§13).
func (a *API) usageReport(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	win, err := a.window(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	by, gran := q.Get("group_by"), q.Get("granularity")
	if by == "" {
		by = store.DimModel
	}
	if gran == "" {
		gran = "day"
	}
	var own books.UsageFilter
	if p.Role != store.RoleAdmin && p.Role != store.RoleRoot {
		own.UserID = p.UserID
	}
	items, err := books.FilteredUsageReport(r.Context(), a.d.Store, win, by, gran, own)
	var badGroup books.ErrGrouping
	var badGran books.ErrGranularity
	switch {
	case errors.As(err, &badGroup):
		return badField("group_by", "must be user, key, model, channel or team")
	case errors.As(err, &badGran):
		return badField("granularity", "must be hour or day")
	case err != nil:
		return err
	}
	if items, err = a.usageScope(r.Context(), p, by, items); err != nil {
		return err
	}
	if own.UserID != 0 {
		for i := range items {
			items[i].UpstreamCostUSD = ""
		}
	}
	apijson.Write(w, http.StatusOK, map[string]any{"items": items, "group_by": by, "granularity": gran, "since": win.Since, "until": win.Until})
	return nil
}

// usageScope keeps the lines an administrator may see (marginScope's rule).
func (a *API) usageScope(ctx context.Context, p *auth.Principal, by string, items []books.UsageItem) ([]books.UsageItem, error) {
	scopeBy := map[string]string{store.DimUser: "user", store.DimToken: "token"}[by]
	if p.Role != store.RoleAdmin || scopeBy == "" {
		return items, nil // root sees every line, a plain user only its own
	}
	keys := make([]books.MarginItem, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		if !seen[it.Key] {
			seen[it.Key] = true
			keys = append(keys, books.MarginItem{Key: it.Key})
		}
	}
	kept, err := a.marginScope(ctx, p, scopeBy, keys)
	if err != nil {
		return nil, err
	}
	ok := map[string]bool{}
	for _, k := range kept {
		ok[k.Key] = true
	}
	out := items[:0]
	for _, it := range items {
		if ok[it.Key] {
			out = append(out, it)
		}
	}
	return out, nil
}

func (a *API) cacheReport(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	refuse := func(error) error { return badField("group_by", "must be channel, key or model") }
	return a.groupedReport(w, r, refuse, func(ctx context.Context, win store.Window, by string) (any, error) {
		return books.Cache(ctx, a.d.Store, win, by)
	})
}

// groupedReport answers a report over the request's window grouped by its
// group_by (channel unless given); a grouping the report does not know is
// refused with refuse's 400.
func (a *API) groupedReport(w http.ResponseWriter, r *http.Request, refuse func(error) error,
	report func(ctx context.Context, win store.Window, by string) (any, error)) error {
	win, err := a.window(r)
	if err != nil {
		return err
	}
	by := r.URL.Query().Get("group_by")
	if by == "" {
		by = "channel"
	}
	items, err := report(r.Context(), win, by)
	var bad books.ErrGrouping
	if errors.As(err, &bad) {
		return refuse(err)
	}
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"items": items, "group_by": by, "since": win.Since, "until": win.Until})
	return nil
}

func (a *API) reconcileReport(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	win, err := a.window(r)
	if err != nil {
		return err
	}
	rep, err := books.Reconcile(r.Context(), a.d.Store, win, time.Now())
	if err != nil {
		return err
	}
	if err := books.ReconcilePlans(r.Context(), a.d.Store, a.d.Plans, rep); err != nil {
		return err
	}
	if err := books.ReconcileBudgets(r.Context(), a.d.Store, a.d.Limits, rep); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, rep)
	return nil
}

func (a *API) providerReport(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := queryID(r, "channel_id")
	if err != nil {
		return err
	}
	if id == 0 {
		return badRequest("channel_id is required")
	}
	if _, err := a.d.Store.Channels().Get(r.Context(), id); err != nil {
		return err
	}
	theirs, err := books.ParseProviderCSV(http.MaxBytesReader(w, r.Body, maxProviderCSV))
	var bad *books.CSVError
	if errors.As(err, &bad) {
		return badRequest("%s", err.Error())
	}
	if err != nil {
		return err
	}
	if err := a.flush(r.Context()); err != nil {
		return err
	}
	rep, err := books.CompareProvider(r.Context(), a.d.Store, id, theirs)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, rep)
	return nil
}
