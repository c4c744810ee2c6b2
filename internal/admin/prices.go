package admin

import (
	"encoding/json"
	"fmt"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *API) routePrices(mux *http.ServeMux) {
	a.route(mux, "GET /api/models", store.RoleAdmin, "model price", a.listPrices)
	// Model names may contain slashes (vendor/model), hence the rest match.
	a.route(mux, "GET /api/models/{name...}", store.RoleAdmin, "model price", a.getPrice)
	// The history's own pattern, for names of one path segment (the
	// OpenAPI document names it); longer names reach it through getPrice.
	a.route(mux, "GET /api/models/{name}/history", store.RoleAdmin, "model price history", func(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
		return a.priceHistory(w, r, r.PathValue("name"))
	})
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
	apijson.Write(w, http.StatusOK, newList(pageOf(prices, page), len(prices)))
	return nil
}

func (a *API) getPrice(w http.ResponseWriter, r *http.Request, pr *auth.Principal) error {
	// {name...} must end a pattern, so the history is told apart here.
	if model, ok := strings.CutSuffix(r.PathValue("name"), "/history"); ok && model != "" {
		return a.priceHistory(w, r, model)
	}
	p, err := a.d.Store.Prices().Get(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, p)
	return nil
}

var priceFields = []string{"name", "input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok",
	"reasoning_per_mtok", "batch_input_per_mtok", "batch_output_per_mtok", "per_call", "free", "extra", "fallbacks", "tiers", "affinity", "routing",
	"response_cache", "stream_failover"}

// tierFields are the members of one long-context tier.
var tierFields = []string{"above_input_tokens", "input_per_mtok", "output_per_mtok", "cache_read_per_mtok",
	"cache_write_per_mtok", "reasoning_per_mtok"}

const (
	// maxTiers bounds a price's tiers; real price lists have one or two.
	maxTiers = 16
	// maxThreshold keeps a threshold exact in a JSON number (2^53 − 1).
	maxThreshold = 1<<53 - 1
)

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
		{"cache_write_per_mtok", &p.CacheWritePerMTok}, {"reasoning_per_mtok", &p.ReasoningPerMTok}, {"per_call", &p.PerCall},
		{"batch_input_per_mtok", &p.BatchInputPerMTok}, {"batch_output_per_mtok", &p.BatchOutputPerMTok}}
	for _, rt := range rates {
		if err := getRate(f, rt.name, rt.dst); err != nil {
			return p, err
		}
	}
	tiers, err := readTiers(f)
	if err != nil {
		return p, err
	}
	p.Tiers = tiers
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
	if err := readRouting(f, &p); err != nil {
		return p, err
	}
	if p.ResponseCache, err = readResponseCache(f); err != nil {
		return p, err
	}
	if _, err := get(f, "stream_failover", &p.StreamFailover); err != nil {
		return p, err
	}
	return p, checkFallbacks(name, p.Fallbacks)
}

// getRate decodes a price in US dollars, which must not be negative.
func getRate(f fields, name string, dst *float64) error {
	if _, err := get(f, name, dst); err != nil {
		return err
	}
	if *dst < 0 || math.IsInf(*dst, 0) {
		return badField(name, "must be a non-negative number of US dollars")
	}
	return nil
}

// readTiers decodes the long-context tiers: a list of objects, each with a
// positive integer above_input_tokens and at least one price. They are
// returned sorted by threshold; two tiers with the same threshold are
// refused. Errors name the member as sent, e.g. tiers[1].above_input_tokens.
func readTiers(f fields) ([]store.PriceTier, error) {
	if !f.has("tiers") || f.isNull("tiers") {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(f["tiers"], &raws); err != nil {
		return nil, badField("tiers", "must be a list of objects")
	}
	if len(raws) > maxTiers {
		return nil, badField("tiers", "must hold at most %d tiers", maxTiers)
	}
	tiers := make([]store.PriceTier, len(raws))
	for i, raw := range raws {
		t, err := readTier(fmt.Sprintf("tiers[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		tiers[i] = t
	}
	order := make([]int, len(tiers)) // positions as sent, in threshold order
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return tiers[order[a]].AboveInputTokens < tiers[order[b]].AboveInputTokens })
	sorted := make([]store.PriceTier, 0, len(tiers))
	for k, i := range order {
		if k > 0 && tiers[order[k-1]].AboveInputTokens == tiers[i].AboveInputTokens {
			first, second := min(order[k-1], i), max(order[k-1], i)
			return nil, badField(fmt.Sprintf("tiers[%d].above_input_tokens", second), "repeats the threshold of tiers[%d]", first)
		}
		sorted = append(sorted, tiers[i])
	}
	if len(sorted) == 0 {
		return nil, nil // stored and read back as none
	}
	return sorted, nil
}

// readTier decodes one tier named name (tiers[i]).
func readTier(name string, raw json.RawMessage) (store.PriceTier, error) {
	var t store.PriceTier
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return t, badField(name, "must be an object")
	}
	// The members are decoded under their full names so that every error
	// names the one that was wrong.
	tf := fields{}
	var unknown []string
	for k, v := range obj {
		if !slices.Contains(tierFields, k) {
			unknown = append(unknown, k)
		}
		tf[name+"."+k] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return t, badField(name, "has unknown field %s; allowed fields are %s", strings.Join(unknown, ", "), strings.Join(tierFields, ", "))
	}
	threshold := name + ".above_input_tokens"
	if ok, err := get(tf, threshold, &t.AboveInputTokens); err != nil || !ok {
		return t, firstErr(err, badField(threshold, "is required"))
	}
	if t.AboveInputTokens <= 0 || t.AboveInputTokens > maxThreshold {
		return t, badField(threshold, "must be a positive integer of at most %d", int64(maxThreshold))
	}
	rates := []struct {
		name string
		dst  *float64
	}{{"input_per_mtok", &t.InputPerMTok}, {"output_per_mtok", &t.OutputPerMTok}, {"cache_read_per_mtok", &t.CacheReadPerMTok},
		{"cache_write_per_mtok", &t.CacheWritePerMTok}, {"reasoning_per_mtok", &t.ReasoningPerMTok}}
	priced := false
	for _, rt := range rates {
		if err := getRate(tf, name+"."+rt.name, rt.dst); err != nil {
			return t, err
		}
		priced = priced || *rt.dst > 0
	}
	if !priced {
		return t, badField(name, "must set at least one price above zero; a price left out is the base price")
	}
	return t, nil
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

// putPrice adds a version of the model's price, effective now or from
// effective_from. It answers the version it added, which for a future
// effective_from is not yet the one GET answers.
func (a *API) putPrice(w http.ResponseWriter, r *http.Request, pr *auth.Principal) error {
	name := r.PathValue("name")
	if err := checkName("name", name, 128); err != nil {
		return err
	}
	f, err := readFields(w, r, append(priceFields, "effective_from")...)
	if err != nil {
		return err
	}
	p, err := readPrice(f, name)
	if err != nil {
		return err
	}
	if p.EffectiveFrom, err = readEffectiveFrom(f, time.Now()); err != nil {
		return err
	}
	p.Source, p.Actor = store.PriceSourceAPI, actorOf(pr)
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
	h, err := a.d.Store.Prices().History(r.Context(), name)
	if err != nil {
		return err
	}
	if len(h) > 0 {
		*saved = h[0].On(*saved)
	}
	apijson.Write(w, http.StatusOK, saved)
	return nil
}

// readEffectiveFrom reads the optional effective_from (RFC 3339). A time
// not after now means now: a version never takes effect in the past, so a
// call already priced keeps the price it was admitted at. Zero (also for
// an absent or null member) means now.
func readEffectiveFrom(f fields, now time.Time) (time.Time, error) {
	var s string
	if f.isNull("effective_from") {
		return time.Time{}, nil
	}
	if ok, err := get(f, "effective_from", &s); err != nil || !ok {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, badField("effective_from", "must be a time in RFC 3339 (2026-01-02T15:04:05Z)")
	}
	if !t.After(now) {
		return time.Time{}, nil
	}
	return t.UTC(), nil
}

// actorOf names who made an administrative change in a record of it.
func actorOf(p *auth.Principal) string {
	if p == nil {
		return ""
	}
	if p.UserID == 0 {
		return "root-token"
	}
	return p.Username
}

func (a *API) deletePrice(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if err := a.d.Store.Prices().Delete(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"name": r.PathValue("name"), "deleted": true})
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
	apijson.Write(w, http.StatusOK, newList(views, len(groups)))
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
	apijson.Write(w, http.StatusOK, a.groupView(*g))
	return nil
}

func (a *API) putGroup(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	name := r.PathValue("name")
	if err := checkName("name", name, 64); err != nil {
		return err
	}
	f, err := readFields(w, r, append([]string{"name", "ratio", logContentField}, rateFields...)...)
	if err != nil {
		return err
	}
	limits, limitsSent, err := readGroupLimits(f, a.groupView(store.Group{Name: name}).rate())
	if err != nil {
		return err
	}
	if _, err := readLogContent(f); err != nil {
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
	if err := a.putGroupLogContent(r, f, &g); err != nil {
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
	apijson.Write(w, http.StatusOK, a.groupView(g))
	return nil
}

func (a *API) deleteGroup(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	use, err := a.d.Store.Groups().InUse(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	if !use.Empty() {
		return groupInUse(r.PathValue("name"), use)
	}
	if err := a.d.Store.Groups().Delete(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	a.forgetLimits(r.Context(), store.SubjectGroup, r.PathValue("name"))
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"name": r.PathValue("name"), "deleted": true})
	return nil
}

// groupInUse refuses to delete a group that would leave users billing at an
// unknown ratio and channels serving nobody, and says what to move first.
func groupInUse(name string, use store.GroupUse) *apiError {
	var parts []string
	if use.UserN > 0 {
		more := ""
		if use.UserN > len(use.Users) {
			more = ", …"
		}
		parts = append(parts, fmt.Sprintf("%d user(s) (%s%s) holding %d API key(s)", use.UserN, strings.Join(use.Users, ", "), more, use.KeyN))
	}
	if len(use.Channels) > 0 {
		parts = append(parts, fmt.Sprintf("%d channel(s) (%s)", len(use.Channels), strings.Join(use.Channels, ", ")))
	}
	return errorf(http.StatusConflict, "group_in_use", "group %q is still used by %s; move them to another group first", name, strings.Join(parts, " and "))
}
