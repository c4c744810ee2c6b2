package plugin

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/turnpike-gw/turnpike/internal/apijson"
	"github.com/turnpike-gw/turnpike/internal/store"
)

func (a *AdminAPI) listSources(w http.ResponseWriter, r *http.Request, _ *call) error {
	list, err := a.reg.db.sources(r.Context())
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"items": list, "total": len(list)})
	return nil
}

func (a *AdminAPI) addSource(w http.ResponseWriter, r *http.Request, c *call) error {
	var b struct {
		URL string `json:"url"`
	}
	if err := readJSON(w, r, &b, "url"); err != nil {
		return err
	}
	u, err := ValidateSourceURL(b.URL)
	if err != nil {
		return errorf(http.StatusBadRequest, "invalid_field", "%v", err)
	}
	c.detail = redactURL(u)
	s, _, err := a.reg.db.addSource(r.Context(), u)
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, s)
	return nil
}

func (a *AdminAPI) deleteSource(w http.ResponseWriter, r *http.Request, c *call) error {
	u := r.URL.Query().Get("url")
	if u == "" {
		return badRequest("the url query parameter is required")
	}
	c.detail = redactURL(u)
	if err := a.reg.db.deleteSource(r.Context(), u); errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "not_found", "marketplace source %q is not registered", u)
	} else if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"url": u, "deleted": true})
	return nil
}

func (a *AdminAPI) catalogue(w http.ResponseWriter, r *http.Request, _ *call) error {
	items, errs, err := a.market.Catalogue(r.Context())
	if err != nil {
		return err
	}
	apijson.Write(w, http.StatusOK, map[string]any{"items": items, "total": len(items), "errors": errs})
	return nil
}

func (a *AdminAPI) install(w http.ResponseWriter, r *http.Request, c *call) error {
	var b struct {
		Source   string `json:"source"`
		Key      string `json:"key"`
		Version  string `json:"version"`
		Activate bool   `json:"activate"`
		Enabled  *bool  `json:"enabled"`
		Force    bool   `json:"force"`
	}
	if err := readJSON(w, r, &b, "source", "key", "version", "activate", "enabled", "force"); err != nil {
		return err
	}
	if b.Source == "" || b.Key == "" || b.Version == "" {
		return badRequest("source, key and version are required")
	}
	c.key, c.version, c.detail = b.Key, b.Version, redactURL(b.Source)
	req := UploadRequest{Activate: b.Activate, Enabled: b.Enabled, Force: b.Force, Actor: c.actor}
	return a.store(w, r, c, func() (*UploadResult, error) {
		return a.market.Install(r.Context(), b.Source, b.Key, b.Version, req)
	})
}

// redactURL keeps an address loggable: a query string may carry an access
// token, so it is dropped along with any userinfo.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable address)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "redacted"
	}
	u.Fragment = ""
	return u.String()
}
