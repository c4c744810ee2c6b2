package admin

import (
	"github.com/turnpike-gw/turnpike/internal/apijson"
	"net/http"
	"strings"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/config"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *API) routeNotify(mux *http.ServeMux) {
	a.route(mux, "GET /api/settings/notify", store.RoleRoot, "setting", a.getNotify)
	a.route(mux, "PUT /api/settings/notify", store.RoleRoot, "setting", a.putNotify)
}

// secretMask stands for a stored webhook secret in answers; a PUT that
// sends it back keeps the stored secret.
const secretMask = "********"

type notifyView struct {
	WebhookURL string `json:"webhook_url"`
	Secret     string `json:"secret"`
	Thresholds []int  `json:"thresholds"`
}

func viewNotify(n config.Notify) notifyView {
	v := notifyView{WebhookURL: n.WebhookURL, Thresholds: n.Thresholds}
	if n.Secret != "" {
		v.Secret = secretMask
	}
	if v.Thresholds == nil {
		v.Thresholds = []int{}
	}
	return v
}

func (a *API) getNotify(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if a.d.Notify == nil {
		return notFound("setting")
	}
	n, err := a.d.Notify.Settings(r.Context())
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, viewNotify(n))
	return nil
}

// putNotify changes the members sent; the others keep their values.
func (a *API) putNotify(w http.ResponseWriter, r *http.Request, _ *auth.Principal) error {
	if a.d.Notify == nil {
		return notFound("setting")
	}
	f, err := readFields(w, r, "webhook_url", "secret", "thresholds")
	if err != nil {
		return err
	}
	n, err := a.d.Notify.Settings(r.Context())
	if err != nil {
		return err
	}
	if _, err := get(f, "webhook_url", &n.WebhookURL); err != nil {
		return err
	}
	var secret string
	if ok, err := get(f, "secret", &secret); err != nil {
		return err
	} else if ok && secret != secretMask {
		n.Secret = secret
	}
	if f.has("thresholds") {
		var t []int
		if _, err := get(f, "thresholds", &t); err != nil {
			return badField("thresholds", "must be a list of whole percentages from 1 to 100")
		}
		n.Thresholds = t
	}
	n.WebhookURL = strings.TrimSpace(n.WebhookURL)
	if err := n.Validate(); err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		msg := strings.TrimPrefix(first, "notify.")
		field, rest, _ := strings.Cut(msg, " ")
		return badField(field, "%s", rest)
	}
	if err := a.d.Notify.SetSettings(r.Context(), n); err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, viewNotify(n))
	return nil
}
