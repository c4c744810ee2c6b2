package admin

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *API) routePrices(mux *http.ServeMux) {
	a.route(mux, "GET /api/models", store.RoleAdmin, "model price", a.listPrices)
	// Model names may contain slashes (vendor/model), hence the rest match.
	a.route(mux, "GET /api/models/{name...}", store.RoleAdmin, "model price", a.getPrice)
	a.route(mux, "PUT /api/models/{name...}", store.RoleAdmin, "model price", a.putPrice)
	a.route(mux, "DELETE /api/models/{name...}", store.RoleAdmin, "model price", a.deletePrice)
}

func (a *API) routeGroups(mux *http.ServeMux) {
	a.route(mux, "GET /api/groups", store.RoleAdmin, "group", a.listGroups)
	a.route(mux, "GET /api/groups/{name}", store.RoleAdmin, "group", a.getGroup)
	a.route(mux, "PUT /api/groups/{name}", store.RoleAdmin, "group", a.putGroup)
	a.route(mux, "DELETE /api/groups/{name}", store.RoleAdmin, "group", a.deleteGroup)
}

func (a *API) listPrices(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	prices, err := a.d.Store.Prices().List(r.Context())
	if err != nil {
		return err
	}
	sort.Slice(prices, func(i, j int) bool { return prices[i].Name < prices[j].Name })
	writeJSON(w, http.StatusOK, newList(pageOf(prices, page), len(prices)))
	return nil
}

func (a *API) getPrice(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	p, err := a.d.Store.Prices().Get(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

var priceFields = []string{"name", "input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok",
	"per_call", "free", "extra", "fallbacks"}

// readPrice decodes a price body. PUT replaces the whole price: members
// left out are zero, as in the seed file.
func readPrice(f fields, name string) (store.ModelPrice, error) {
	p := store.ModelPrice{Name: name}
	var bodyName string
	if _, err := get(f, "name", &bodyName); err != nil {
		return p, err
	}
	if f.has("name") && bodyName != name {
		return p, badField("name", "must match the model name in the path")
	}
	rates := []struct {
		name string
		dst  *float64
	}{{"input_per_mtok", &p.InputPerMTok}, {"output_per_mtok", &p.OutputPerMTok}, {"cache_read_per_mtok", &p.CacheReadPerMTok},
		{"cache_write_per_mtok", &p.CacheWritePerMTok}, {"per_call", &p.PerCall}}
	for _, rt := range rates {
		if _, err := get(f, rt.name, rt.dst); err != nil {
			return p, err
		}
		if *rt.dst < 0 || math.IsInf(*rt.dst, 0) {
			return p, badField(rt.name, "must be a non-negative number of US dollars")
		}
	}
	if _, err := get(f, "free", &p.Free); err != nil {
		return p, err
	}
	if f.has("extra") && !f.isNull("extra") {
		var extra map[string]any
		if _, err := get(f, "extra", &extra); err != nil {
			return p, err
		}
		p.Extra = json.RawMessage(f["extra"])
	}
	if _, err := getList(f, "fallbacks", &p.Fallbacks); err != nil {
		return p, err
	}
	if len(p.Fallbacks) == 0 {
		p.Fallbacks = nil // stored and read back as none
	}
	return p, checkFallbacks(name, p.Fallbacks)
}

// checkFallbacks refuses fallback lists that name nothing, repeat a model
// or name the model itself (which would retry the same channels).
func checkFallbacks(model string, fallbacks []string) error {
	seen := map[string]bool{model: true}
	for _, m := range fallbacks {
		if m == "" || len(m) > 128 {
			return badField("fallbacks", "must hold model names of 1 to 128 characters")
		}
		if seen[m] {
			return badField("fallbacks", "must not repeat a model or name the model itself (%s)", m)
		}
		seen[m] = true
	}
	return nil
}

func (a *API) putPrice(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	name := r.PathValue("name")
	if err := checkName("name", name, 128); err != nil {
		return err
	}
	f, err := readFields(w, r, priceFields...)
	if err != nil {
		return err
	}
	p, err := readPrice(f, name)
	if err != nil {
		return err
	}
	if err := a.d.Store.Prices().Upsert(r.Context(), p); err != nil {
		return err
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	saved, err := a.d.Store.Prices().Get(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, saved)
	return nil
}

func (a *API) deletePrice(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if err := a.d.Store.Prices().Delete(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": r.PathValue("name"), "deleted": true})
	return nil
}

func (a *API) listGroups(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	groups, err := a.d.Store.Groups().List(r.Context())
	if err != nil {
		return err
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Name < groups[j].Name })
	views := make([]groupView, 0, len(groups))
	for _, g := range pageOf(groups, page) {
		views = append(views, a.groupView(g))
	}
	writeJSON(w, http.StatusOK, newList(views, len(groups)))
	return nil
}

func (a *API) findGroup(r *http.Request, name string) (*store.Group, error) {
	groups, err := a.d.Store.Groups().List(r.Context())
	if err != nil {
		return nil, err
	}
	for i := range groups {
		if groups[i].Name == name {
			return &groups[i], nil
		}
	}
	return nil, notFound("group")
}

func (a *API) getGroup(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	g, err := a.findGroup(r, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.groupView(*g))
	return nil
}

func (a *API) putGroup(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	name := r.PathValue("name")
	if err := checkName("name", name, 64); err != nil {
		return err
	}
	f, err := readFields(w, r, append([]string{"name", "ratio"}, rateFields...)...)
	if err != nil {
		return err
	}
	limits, limitsSent, err := readGroupLimits(f, a.groupView(store.Group{Name: name}).rate())
	if err != nil {
		return err
	}
	g := store.Group{Name: name}
	var bodyName string
	if _, err := get(f, "name", &bodyName); err != nil {
		return err
	}
	if f.has("name") && bodyName != name {
		return badField("name", "must match the group name in the path")
	}
	if ok, err := get(f, "ratio", &g.Ratio); err != nil || !ok {
		return firstErr(err, badField("ratio", "is required"))
	}
	if g.Ratio < 0 || math.IsInf(g.Ratio, 0) {
		return badField("ratio", "must be a non-negative number")
	}
	if err := a.d.Store.Groups().Upsert(r.Context(), g); err != nil {
		return err
	}
	if limitsSent && a.d.Limits != nil {
		if err := a.d.Limits.Set(r.Context(), store.SubjectGroup, name, limits); err != nil {
			return err
		}
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.groupView(g))
	return nil
}

func (a *API) deleteGroup(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if err := a.d.Store.Groups().Delete(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	a.forgetLimits(r.Context(), store.SubjectGroup, r.PathValue("name"))
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": r.PathValue("name"), "deleted": true})
	return nil
}
