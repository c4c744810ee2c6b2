package admin

import (
	"context"
	"encoding/json"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

func (a *API) routeChannels(mux *http.ServeMux) {
	a.route(mux, "GET /api/channels", store.RoleAdmin, "channel", a.listChannels)
	a.route(mux, "POST /api/channels", store.RoleAdmin, "channel", a.createChannel)
	a.route(mux, "GET /api/channels/{id}", store.RoleAdmin, "channel", a.getChannel)
	a.route(mux, "PATCH /api/channels/{id}", store.RoleAdmin, "channel", a.patchChannel)
	a.route(mux, "DELETE /api/channels/{id}", store.RoleAdmin, "channel", a.deleteChannel)
	a.route(mux, "POST /api/channels/{id}/test", store.RoleAdmin, "channel", a.testChannel)
	a.route(mux, "GET /api/channels/{id}/upstream-models", store.RoleAdmin, "channel", a.upstreamModels)
}

// channelView is a channel as the API shows it. The provider key is
// write-only: only a masked hint of it ever leaves the server.
type channelView struct {
	ID           int64              `json:"id"`
	Name         string             `json:"name"`
	Type         int                `json:"type"`
	TypeName     string             `json:"type_name"`
	BaseURL      string             `json:"base_url"`
	KeyMasked    string             `json:"key_masked"`
	Models       []string           `json:"models"`
	Groups       []string           `json:"groups"`
	Priority     int64              `json:"priority"`
	Weight       int                `json:"weight"`
	ModelMapping map[string]string  `json:"model_mapping"`
	Settings     map[string]any     `json:"settings"`
	Cost         *store.ChannelCost `json:"cost"`
	Status       string             `json:"status"`
	Health       routing.Status     `json:"health"`
	// Keys is each key of the list, masked, with its own health.
	Keys      []keyView `json:"keys"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// keyView is one key of a channel as the API shows it (CONTRACT §9
// "Several keys per channel"): never more of it than MaskKey shows.
type keyView struct {
	Index  int    `json:"index"`
	Masked string `json:"masked"`
	State  string `json:"state"`
	Reason string `json:"reason"`
}

func (a *API) channelView(c *store.Channel) channelView {
	keys := routing.SplitKeys(c.Type, c.Key)
	v := channelView{ID: c.ID, Name: c.Name, Type: c.Type, TypeName: upstream.TypeName(c.Type), BaseURL: c.BaseURL,
		KeyMasked: maskKeys(keys), Models: c.Models, Groups: c.Groups, Priority: c.Priority, Weight: c.Weight,
		ModelMapping: c.ModelMapping, Settings: maskedSettings(c.Settings), Cost: c.Cost, Status: c.Status, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if v.Models == nil {
		v.Models = []string{}
	}
	if v.Groups == nil {
		v.Groups = []string{}
	}
	if v.ModelMapping == nil {
		v.ModelMapping = map[string]string{}
	}
	if v.Settings == nil {
		v.Settings = map[string]any{}
	}
	health := a.d.Router != nil && a.d.Router.Health != nil
	v.Health = routing.Status{State: routing.StateHealthy}
	if health {
		v.Health = a.d.Router.Health.ChannelStatus(c.ID, len(keys))
	}
	v.Keys = make([]keyView, len(keys))
	for i, k := range keys {
		kv := keyView{Index: i, Masked: routing.MaskKey(k), State: routing.StateHealthy}
		if health {
			st := a.d.Router.Health.Status(c.ID, i)
			kv.State, kv.Reason = st.State, st.Reason
		}
		if c.Status != store.StatusEnabled {
			kv.State, kv.Reason = routing.StateDisabled, "the channel is disabled by an administrator"
		}
		v.Keys[i] = kv
	}
	if v.Health.Since == nil {
		created := c.CreatedAt
		v.Health.Since = &created // healthy since it was made
	}
	if c.Status != store.StatusEnabled {
		// An administrator's switch: it outranks whatever health says.
		updated := c.UpdatedAt
		v.Health = routing.Status{State: routing.StateDisabled, Reason: "disabled by an administrator", Since: &updated}
	}
	return v
}

// maskSecret hints at a provider key without revealing it: short keys are
// hidden entirely because their ends would be most of the secret.
func maskSecret(k string) string {
	switch {
	case k == "":
		return ""
	case len(k) < 12:
		return "****"
	}
	return k[:4] + "..." + k[len(k)-4:]
}

// maskKeys is key_masked: maskSecret of a single key as before, and for a
// list each key's MaskKey, so no more of any key shows than in keys.
func maskKeys(keys []string) string {
	if len(keys) == 1 {
		return maskSecret(keys[0])
	}
	masked := make([]string, len(keys))
	for i, k := range keys {
		masked[i] = routing.MaskKey(k)
	}
	return strings.Join(masked, ", ")
}

// redact removes the channel's keys from text that may quote one, such as
// an upstream error echoing the credential it rejected.
func redact(text string, c *store.Channel) string {
	secrets := append([]string{c.Key}, routing.SplitKeys(c.Type, c.Key)...)
	for _, v := range headerValues(c.Settings) {
		secrets = append(secrets, v)
	}
	for _, key := range secrets {
		if len(key) >= 4 {
			text = strings.ReplaceAll(text, key, maskSecret(key))
		}
	}
	return text
}

func (a *API) loadChannel(r *http.Request) (*store.Channel, error) {
	id, err := pathID(r)
	if err != nil {
		return nil, err
	}
	return a.d.Store.Channels().Get(r.Context(), id)
}

func (a *API) listChannels(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	page, err := parsePage(r)
	if err != nil {
		return err
	}
	chans, total, err := a.d.Store.Channels().List(r.Context(), page)
	if err != nil {
		return err
	}
	views := make([]channelView, 0, len(chans))
	for i := range chans {
		views = append(views, a.channelView(&chans[i]))
	}
	apijson.Write(w, http.StatusOK, newList(views, total))
	return nil
}

func (a *API) getChannel(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	c, err := a.loadChannel(r)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, a.channelView(c))
	return nil
}

var channelFields = []string{"name", "type", "base_url", "key", "models", "groups", "priority", "weight",
	"model_mapping", "settings", "cost", "status"}

// patchFields adds what only a change of an existing channel may say:
// key_states re-enables single keys.
var patchFields = append(slices.Clone(channelFields), "key_states")

// applyChannel copies the members that were sent onto c, validating each.
func applyChannel(f fields, c *store.Channel) error {
	if f.has("type") {
		t, err := parseChannelType(f["type"])
		if err != nil {
			return err
		}
		c.Type = t
	}
	if err := firstErr(getString(f, "name", &c.Name), getString(f, "key", &c.Key), getString(f, "status", &c.Status)); err != nil {
		return err
	}
	if _, err := get(f, "base_url", &c.BaseURL); err != nil {
		return err
	}
	_, e1 := getList(f, "models", &c.Models)
	_, e2 := getList(f, "groups", &c.Groups)
	_, e3 := get(f, "priority", &c.Priority)
	_, e4 := get(f, "weight", &c.Weight)
	if err := firstErr(e1, e2, e3, e4, getMap(f, "model_mapping", &c.ModelMapping), getMap(f, "settings", &c.Settings), getCost(f, c)); err != nil {
		return err
	}
	return checkChannel(c)
}

func getString(f fields, name string, dst *string) error {
	_, err := get(f, name, dst)
	return err
}

// getMap decodes an object member; null means empty.
func getMap[V any](f fields, name string, dst *map[string]V) error {
	if f.has(name) && f.isNull(name) {
		*dst = map[string]V{}
		return nil
	}
	_, err := get(f, name, dst)
	return err
}

// fillPluginBaseURL gives a task_plugin channel saved without an address
// the address its plugin declares, as the plugin contract promises.
func (d Deps) fillPluginBaseURL(c *store.Channel) {
	if c.Type != upstream.TypeTaskPlugin || c.BaseURL != "" || d.PluginBaseURL == nil {
		return
	}
	if key, _ := c.Settings["task_plugin_key"].(string); key != "" {
		c.BaseURL = d.PluginBaseURL(key)
	}
}

func checkChannel(c *store.Channel) error {
	if err := checkName("name", c.Name, 128); err != nil {
		return err
	}
	if c.Weight < 0 {
		return badField("weight", "must not be negative")
	}
	if base, ok := endpointBase(c.BaseURL); ok {
		return badField("base_url", "is a full endpoint address; give the provider's base address %s and the gateway adds the endpoint", base)
	}
	if c.BaseURL != "" {
		u, err := url.Parse(upstream.NormalizeBaseURL(c.BaseURL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return badField("base_url", "must be an http or https origin such as https://api.example.com")
		}
		c.BaseURL = upstream.NormalizeBaseURL(c.BaseURL)
	}
	for _, m := range c.Models {
		if m == "" {
			return badField("models", "must not contain empty names")
		}
	}
	if err := routing.CheckKeys(c.Type, c.Key); err != nil {
		return badField("key", "%s", err.(*routing.KeyError).Message)
	}
	if _, err := routing.ParsePolicy(c.Settings); err != nil {
		pe := err.(*routing.PolicyError)
		return badField("settings."+pe.Field, "%s", pe.Message)
	}
	return checkStatus(c.Status)
}

// maxChannelType bounds numeric types: legacy numbers claimed by plugins
// are small, and anything larger is a typo.
const maxChannelType = 999

// parseChannelType accepts a type name or number (also as a string).
func parseChannelType(raw json.RawMessage) (int, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return 0, badField("type", "must be a channel type name or number")
	}
	t, err := upstream.ParseType(v)
	if err != nil {
		return 0, badField("type", "is not a known channel type: %v", err)
	}
	if t < 1 || t > maxChannelType {
		return 0, badField("type", "must be between 1 and %d", maxChannelType)
	}
	return t, nil
}

func (a *API) createChannel(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	f, err := readFields(w, r, channelFields...)
	if err != nil {
		return err
	}
	if !f.has("name") || !f.has("type") {
		return badRequest("name and type are required")
	}
	c := &store.Channel{Weight: 1, Groups: []string{"default"}, Models: []string{}, Status: store.StatusEnabled,
		ModelMapping: map[string]string{}, Settings: map[string]any{}}
	if err := applyChannel(f, c); err != nil {
		return err
	}
	a.d.fillPluginBaseURL(c)
	if err := checkChannel(c); err != nil {
		return err
	}
	if err := a.d.checkProvider(c); err != nil {
		return err
	}
	if err := a.d.Store.Channels().Create(r.Context(), c); err != nil {
		return err
	}
	noteTarget(r.Context(), c.ID)
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, a.channelView(c))
	return nil
}

func (a *API) patchChannel(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	c, err := a.loadChannel(r)
	if err != nil {
		return err
	}
	f, err := readFields(w, r, patchFields...)
	if err != nil {
		return err
	}
	before, oldKeys, oldHeaders := c.BaseURL, routing.SplitKeys(c.Type, c.Key), headerValues(c.Settings)
	if err := applyChannel(f, c); err != nil {
		return err
	}
	keptHeaders := keepHeaders(f, oldHeaders, c)
	a.d.fillPluginBaseURL(c)
	if err := checkChannel(c); err != nil {
		return err
	}
	if err := a.d.checkProvider(c); err != nil {
		return err
	}
	newKeys := routing.SplitKeys(c.Type, c.Key)
	enable, err := keyStates(f, len(newKeys))
	if err != nil {
		return err
	}
	if moved := p.Role != store.RoleRoot && !sameOrigin(before, c.BaseURL); moved && !f.has("key") {
		return badField("key", "is required when base_url moves the channel to another host: "+
			"a stored key is only ever sent to the host it was given for")
	} else if moved && keptHeaders {
		return badField("settings.headers", "values are required again when base_url moves the channel to another host "+
			"(send {} to drop them): stored header values are only ever sent to the host they were given for")
	}
	if err := a.d.Store.Channels().Update(r.Context(), c); err != nil {
		return err
	}
	// Enabling a channel is an administrator saying it is fixed: its
	// health starts over as healthy (also from auto_disabled), on every
	// node. A new key list does the same for each position whose key
	// changed (or went); a key kept at its position keeps its state, so
	// adding a key does not bring back one the provider refused. A key
	// that moved to another position starts over there.
	if f.has("status") && c.Status == store.StatusEnabled {
		if err := a.resetHealth(r.Context(), c.ID); err != nil {
			return err
		}
	} else if a.d.Router != nil && a.d.Router.Health != nil {
		if f.has("key") {
			for i := range max(len(oldKeys), len(newKeys)) {
				if i >= len(oldKeys) || i >= len(newKeys) || oldKeys[i] != newKeys[i] {
					a.d.Router.Health.ResetKey(c.ID, i, "new key from an administrator")
				}
			}
		}
		for _, i := range enable {
			a.d.Router.Health.ResetKey(c.ID, i, "re-enabled by an administrator")
		}
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, a.channelView(c))
	return nil
}

// sameOrigin reports whether two base URLs reach the same scheme, host and
// port. Keys are write-only so that an administrator who may edit a
// channel still cannot read its key; pointing the channel at a host of
// their own and pressing "test" would otherwise hand it over.
func sameOrigin(a, b string) bool {
	ua, errA := url.Parse(upstream.NormalizeBaseURL(a))
	ub, errB := url.Parse(upstream.NormalizeBaseURL(b))
	if errA != nil || errB != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// keyStates reads key_states, {"<index>": "enabled"}: the keys an
// administrator re-enables, each an index of the channel's n keys.
func keyStates(f fields, n int) ([]int, error) {
	if !f.has("key_states") {
		return nil, nil
	}
	var states map[string]json.RawMessage
	if err := json.Unmarshal(f["key_states"], &states); err != nil || states == nil {
		return nil, badField("key_states", `must be an object such as {"2": "enabled"}`)
	}
	names := make([]string, 0, len(states))
	for name := range states {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]int, 0, len(states))
	for _, name := range names {
		i, err := strconv.Atoi(name)
		if err != nil || i < 0 || i >= n || strconv.Itoa(i) != name {
			return nil, badField("key_states."+name, "is not a key of the channel: its keys are numbered 0 to %d", n-1)
		}
		var state string
		if json.Unmarshal(states[name], &state) != nil || state != "enabled" {
			return nil, badField("key_states."+name, `must be "enabled" (the only state an administrator sets on one key)`)
		}
		out = append(out, i)
	}
	return out, nil
}

func (a *API) resetHealth(ctx context.Context, id int64) error {
	if a.d.Router != nil && a.d.Router.Health != nil {
		return a.d.Router.Health.Reset(ctx, id)
	}
	return nil
}

func (a *API) deleteChannel(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := a.d.Store.Channels().Delete(r.Context(), id); err != nil {
		return err
	}
	if a.d.Router != nil && a.d.Router.Health != nil {
		if err := a.d.Router.Health.Forget(r.Context(), id); err != nil {
			return err
		}
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, deleted{ID: id, Deleted: true})
	return nil
}

// testResult is the answer of a channel test; a failing upstream is a
// successful test that found a problem, hence 200 either way.
type testResult struct {
	Success   bool   `json:"success"`
	LatencyMS int64  `json:"latency_ms"`
	Error     string `json:"error,omitempty"`
}

// channelTestTimeout bounds a test so a hung upstream cannot hold the
// console's request open indefinitely.
const channelTestTimeout = 60 * time.Second

func (a *API) testChannel(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	c, err := a.loadChannel(r)
	if err != nil {
		return err
	}
	if a.d.TestChannel == nil {
		return errorf(http.StatusNotImplemented, "not_available", "channel tests are not available in this build")
	}
	// A channel with several keys is tested with one: key_index, or the
	// first.
	keys := routing.SplitKeys(c.Type, c.Key)
	index := 0
	if q := r.URL.Query().Get("key_index"); q != "" {
		if index, err = strconv.Atoi(q); err != nil || index < 0 || index >= len(keys) {
			return badRequest("key_index must be a key of the channel: its keys are numbered 0 to %d", len(keys)-1)
		}
	}
	one := *c
	one.Key = keys[index]
	if strings.TrimSpace(one.Key) == "" {
		// An upstream that answers without a key (a test double, a local
		// server) would report success for a channel that every real
		// provider refuses: an import without secrets leaves keys empty.
		apijson.Write(w, http.StatusOK, testResult{Error: "the channel has no key (an export without --with-secrets leaves keys empty): set one, then test again"})
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), channelTestTimeout)
	defer cancel()
	latency, err := a.d.TestChannel(ctx, &one)
	res := testResult{Success: err == nil, LatencyMS: latency.Milliseconds()}
	if err != nil {
		res.Error = redact(err.Error(), c)
	}
	apijson.Write(w, http.StatusOK, res)
	return nil
}
