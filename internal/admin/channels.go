package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
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
	ID           int64             `json:"id"`
	Name         string            `json:"name"`
	Type         int               `json:"type"`
	TypeName     string            `json:"type_name"`
	BaseURL      string            `json:"base_url"`
	KeyMasked    string            `json:"key_masked"`
	Models       []string          `json:"models"`
	Groups       []string          `json:"groups"`
	Priority     int64             `json:"priority"`
	Weight       int               `json:"weight"`
	ModelMapping map[string]string `json:"model_mapping"`
	Settings     map[string]any    `json:"settings"`
	Status       string            `json:"status"`
	Health       routing.Status    `json:"health"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
}

func (a *API) channelView(c *store.Channel) channelView {
	v := channelView{ID: c.ID, Name: c.Name, Type: c.Type, TypeName: upstream.TypeName(c.Type), BaseURL: c.BaseURL,
		KeyMasked: maskSecret(c.Key), Models: c.Models, Groups: c.Groups, Priority: c.Priority, Weight: c.Weight,
		ModelMapping: c.ModelMapping, Settings: c.Settings, Status: c.Status, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
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
	v.Health = routing.Status{State: routing.StateHealthy}
	if a.d.Router != nil && a.d.Router.Health != nil {
		v.Health = a.d.Router.Health.Status(c.ID, 0)
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

// redact removes the channel key from text that may quote it, such as an
// upstream error echoing the credential it rejected.
func redact(text, key string) string {
	if len(key) < 4 {
		return text
	}
	return strings.ReplaceAll(text, key, maskSecret(key))
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
	writeJSON(w, http.StatusOK, newList(views, total))
	return nil
}

func (a *API) getChannel(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	c, err := a.loadChannel(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.channelView(c))
	return nil
}

var channelFields = []string{"name", "type", "base_url", "key", "models", "groups", "priority", "weight",
	"model_mapping", "settings", "status"}

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
	if err := firstErr(e1, e2, e3, e4, getMap(f, "model_mapping", &c.ModelMapping), getMap(f, "settings", &c.Settings)); err != nil {
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
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.channelView(c))
	return nil
}

func (a *API) patchChannel(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	c, err := a.loadChannel(r)
	if err != nil {
		return err
	}
	f, err := readFields(w, r, channelFields...)
	if err != nil {
		return err
	}
	before := c.BaseURL
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
	if !f.has("key") && p.Role != store.RoleRoot && !sameOrigin(before, c.BaseURL) {
		return badField("key", "is required when base_url moves the channel to another host: "+
			"a stored key is only ever sent to the host it was given for")
	}
	if err := a.d.Store.Channels().Update(r.Context(), c); err != nil {
		return err
	}
	// Enabling a channel or giving it a new key is an administrator saying
	// it is fixed: its health starts over as healthy (also from
	// auto_disabled), on every node.
	if (f.has("status") && c.Status == store.StatusEnabled) || f.has("key") {
		if err := a.resetHealth(r.Context(), c.ID); err != nil {
			return err
		}
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.channelView(c))
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
	writeJSON(w, http.StatusOK, deleted{ID: id, Deleted: true})
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
	ctx, cancel := context.WithTimeout(r.Context(), channelTestTimeout)
	defer cancel()
	latency, err := a.d.TestChannel(ctx, c)
	res := testResult{Success: err == nil, LatencyMS: latency.Milliseconds()}
	if err != nil {
		res.Error = redact(err.Error(), c.Key)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
