package admin

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
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
	if err := a.healthAfterPatch(r.Context(), f, c, oldKeys, newKeys, enable); err != nil {
		return err
	}
	if err := a.reload(r.Context()); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, a.channelView(c))
	return nil
}

// healthAfterPatch starts health over where the patch says a channel or
// key was fixed.
func (a *API) healthAfterPatch(ctx context.Context, f fields, c *store.Channel, oldKeys, newKeys []string, enable []int) error {
	// Enabling a channel is an administrator saying it is fixed: its
	// health starts over as healthy (also from auto_disabled), on every
	// node. A new key list does the same for each position whose key
	// changed (or went); a key kept at its position keeps its state, so
	// adding a key does not bring back one the provider refused. A key
	// that moved to another position starts over there.
	if f.has("status") && c.Status == store.StatusEnabled {
		return a.resetHealth(ctx, c.ID)
	}
	if a.d.Router == nil || a.d.Router.Health == nil {
		return nil
	}
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
	return nil
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
