package admin

import (
	"context"
	"errors"
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"net/http"
	"slices"
	"strconv"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/providers"
	"github.com/turnpike-gw/turnpike/internal/routing"
	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/upstream"
)

// checkProvider refuses a channel its type's adapter cannot use (no region,
// an unparsable service account, a malformed key) and a type the gateway
// does not know, unless an enabled task plugin claims it. Each key of a
// multi-key channel is checked on its own; the error names its line, never
// the key.
func (d Deps) checkProvider(c *store.Channel) error {
	claimed := d.TypeClaimed != nil && d.TypeClaimed(c.Type)
	keys := routing.SplitKeys(c.Type, c.Key)
	for i, k := range keys {
		t := upstream.Target{Type: c.Type, BaseURL: c.BaseURL, Key: k, Settings: c.Settings}
		err := providers.Validate(t, claimed)
		if err == nil {
			continue
		}
		var se *upstream.SettingError
		if !errors.As(err, &se) {
			return badField("settings", "%s", err.Error())
		}
		field := se.Field
		if field == "key" && len(keys) > 1 {
			field = "key (line " + strconv.Itoa(i+1) + ")"
		}
		return badField(field, "%s", se.Message)
	}
	return nil
}

// upstreamModels serves GET /api/channels/{id}/upstream-models: the models
// the provider says the channel's account can use. It changes nothing.
func (a *API) upstreamModels(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	c, err := a.loadChannel(r)
	if err != nil {
		return err
	}
	if a.d.UpstreamModels == nil {
		return errorf(http.StatusNotImplemented, "not_available", "model discovery is not available in this build")
	}
	ctx, cancel := context.WithTimeout(r.Context(), channelTestTimeout)
	defer cancel()
	models, err := a.d.UpstreamModels(ctx, c)
	if err != nil {
		return errorf(http.StatusBadGateway, "upstream_models_failed", "%s", redact(err.Error(), c))
	}
	slices.Sort(models)
	models = slices.Compact(models)
	if models == nil {
		models = []string{}
	}
	apijson.Write(w, http.StatusOK, map[string]any{"models": models})
	return nil
}
